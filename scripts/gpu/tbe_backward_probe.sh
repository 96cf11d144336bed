#!/usr/bin/env bash
# One device call for the TBE backward work (docs/embedding.md, backward): GPU tests of the TBE
# and sort paths, the C2 / Zipf / hot-row / one-hot benches, then ncu per-kernel times of one C2
# backward. Prebuilt binaries only (carry them):
#   scripts/gpu/tbe_backward_probe.sh build/bwd-cuda      ($OUT set; PROBE_NCU=0 skips ncu)
set -uo pipefail
build_dir="${1:-build/bwd-cuda}"
: "${OUT:?OUT must be set}"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
parity="$build_dir/bin/parity"
tests="$build_dir/tests/parity_gpu_tests"
reps="${PROBE_REPS:-20}"
if [ "${PROBE_TESTS:-1}" = 1 ]; then
  "$tests" --gtest_filter="${PROBE_FILTER:-*Tbe*:*RadixSort*}" > "$OUT/tests.log" 2>&1
  echo "tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |FAILED|tests ran" "$OUT/tests.log" | head -20
fi
for c in ${PROBE_CONFIGS:-C2 C2_zipf1.15 C6 C4}; do
  case "$c" in
    C2_zipf1.15) args=(--config C2 --zipf 1.15) ;;
    *) args=(--config "$c") ;;
  esac
  "$parity" bench tbe "${args[@]}" --reps "$reps" --warmup 3 --out "$OUT/tbe_$c.json" > "$OUT/tbe_$c.log" 2>&1
  echo "== $c rc=$?"; grep -E "backward|fwd \+ bwd|forward  |workspace" "$OUT/tbe_$c.log"
done
if [ "${PROBE_NCU:-1}" = 1 ]; then
  /usr/local/cuda/bin/ncu --clock-control none -k 'regex:tbe_linearize|radix|tbe_backward' \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum --csv \
    "$parity" bench tbe --config C2 --reps 1 --warmup 0 > "$OUT/ncu_C2.csv" 2> "$OUT/ncu_C2.err"
  echo "ncu rc=$?"
  python3 - "$OUT/ncu_C2.csv" <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
head = rows[0]; k = head.index("Kernel Name"); m = head.index("Metric Name"); v = head.index("Metric Value"); i = head.index("ID")
per = collections.OrderedDict()
for r in rows[1:]:
    per.setdefault((int(r[i]), r[k].split("(")[0].split("<")[0]), {})[r[m]] = float(r[v].replace(",", ""))
# First backward only: from the first linearize to the first combine.
started = False
for (idx, name), d in per.items():
    if name.endswith("tbe_linearize_kernel"): started = True
    if not started: continue
    t = d.get("gpu__time_duration.sum", 0) / 1e3
    print(f"{idx:4d} {name[-34:]:34s} {t:9.1f} us  read {d.get('dram__bytes_read.sum',0)/1e6:8.1f} MB  write {d.get('dram__bytes_write.sum',0)/1e6:8.1f} MB")
    if name.endswith("combine_kernel"): break
PY
fi
