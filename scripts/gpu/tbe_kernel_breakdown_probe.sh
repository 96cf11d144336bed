#!/usr/bin/env bash
# Per-kernel device time of `parity bench tbe` on chosen configurations, through Nsight Compute
# (`--clock-control none`: the clocks stay as they are; gpu__time_duration only, one pass per kernel).
# Used to see where a configuration's forward and training step spend their time (which kernels,
# how many launches) before changing the kernels. run_all.sh runs it only when named:
#   scripts/gpu/run_all.sh --prebuilt ... --only tbe_kernel_breakdown_probe
#   TBE_BREAKDOWN_SET=bench/tbe/test_set_2 TBE_BREAKDOWN_CONFIGS=test_set_2_00,test_set_2_04
#   TBE_BREAKDOWN_CACHE=none   ncu's --cache-control (default all: every kernel starts with flushed
#                              caches; none keeps what the previous kernel left in the L2, as inside
#                              one training step, where the sort's keys stay L2-resident)
# Writes $OUT/tbe_breakdown_<config>.csv (raw) and $OUT/tbe_breakdown.txt (per kernel name: launches,
# total and median µs). Timings under ncu are per kernel, serialized; they are for attribution only.
set -uo pipefail
build_dir="${1:-build/cuda}"
: "${OUT:?OUT must be set}"
parity="$build_dir/bin/parity"
set_dir="${TBE_BREAKDOWN_SET:-bench/tbe/test_set_2}"
configs="${TBE_BREAKDOWN_CONFIGS:-test_set_2_00,test_set_2_04,test_set_2_05,test_set_2_07}"
cache_control="${TBE_BREAKDOWN_CACHE:-all}"
[[ "$cache_control" == all || "$cache_control" == none ]] ||
  { echo "tbe_kernel_breakdown_probe: TBE_BREAKDOWN_CACHE=$cache_control; expected all or none" >&2; exit 2; }
ncu_bin="$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)"
[[ -n "$ncu_bin" ]] || { echo "tbe_kernel_breakdown_probe: ncu not found" >&2; exit 2; }
failed=0
for name in ${configs//,/ }; do
  flags="$(python3 -c "
import json, sys
for c in json.load(open(sys.argv[1]))['configurations']:
    if c['name'] == sys.argv[2]: print(' '.join(c['flags']))" "$set_dir/manifest.json" "$name")"
  # shellcheck disable=SC2086  # flags are words by construction
  "$ncu_bin" --clock-control none --cache-control "$cache_control" --metrics gpu__time_duration.sum --csv \
    "$parity" bench tbe --layout "$set_dir/$name.json" $flags --reps 2 --warmup 1 \
    --out "$OUT/tbe_breakdown_$name.json" > "$OUT/tbe_breakdown_$name.csv" 2> "$OUT/tbe_breakdown_$name.err"
  rc=$?
  echo "== $name rc=$rc"
  [[ $rc == 0 ]] || { tail -5 "$OUT/tbe_breakdown_$name.err"; failed=1; }
done
python3 - "$OUT" "$configs" <<'PY' | tee "$OUT/tbe_breakdown.txt"
import csv, os, statistics, sys
out = sys.argv[1]
for name in sys.argv[2].split(","):
    path = os.path.join(out, f"tbe_breakdown_{name}.csv")
    if not os.path.exists(path):
        continue
    lines = [l for l in open(path) if l.startswith('"')]
    per_kernel, order = {}, []
    for row in csv.DictReader(lines):
        if row.get("Metric Name") != "gpu__time_duration.sum":
            continue
        value = float(row["Metric Value"].replace(",", ""))
        scale = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3}.get(row.get("Metric Unit", "usecond"), 1.0)
        kernel = row["Kernel Name"][:90]
        if kernel not in per_kernel:
            order.append(kernel)
        per_kernel.setdefault(kernel, []).append(value * scale)
    print(f"## {name}: {sum(len(v) for v in per_kernel.values())} launches")
    print(f"{'launches':>8} {'total us':>10} {'median us':>10}  kernel")
    for k in order:
        v = per_kernel[k]
        print(f"{len(v):8d} {sum(v):10.1f} {statistics.median(v):10.2f}  {k}")
PY
exit $failed
