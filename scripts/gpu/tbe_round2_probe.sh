#!/usr/bin/env bash
# TBE round 2 on the device (docs/embedding.md, "Fitted groups"; issue 13's D1-D7). Called like the
# bench_*.sh pieces (build dir as $1, $OUT set): run_all.sh runs it with `--only tbe_round2_probe`.
#   1. the GPU tests of the forward (every kernel incl. fitted groups) and the bounds check;
#   2. `parity bench tbe` on D3 (D=160 fp16) and D5 (D=96 fp32), old (--variant wide_rows: the
#      power-of-two groups) and new (--variant fitted_groups), and on D1, D2, D4, D6, D7 once
#      (--variant auto) for the bounds check against its floor (the indices AND offsets read);
#   3. a table ($OUT/tbe_round2_summary.txt): forward ms, TB/s, % copy, step ms, clean bounds check
#      ms, the floor's ms and their ratio (target <= 1.2x).
#   ROUND2_REPS=10 ROUND2_TESTS=0 scripts/gpu/tbe_round2_probe.sh build/cuda
# About 9 bench runs of ~10-15 s (tables up to ~5 GB filled each run) plus ~30 s of tests: well under
# 200 s. ROUND2_CONFIGS picks the configurations (default D1 D2 D3 D4 D5 D6 D7).
set -uo pipefail
build_dir="${1:-build/cuda}"
: "${OUT:?OUT must be set}"
source "$(dirname "$0")/tbe_probe_common.sh"
reps="${ROUND2_REPS:-10}"
failed=0

if [ "${ROUND2_TESTS:-1}" = 1 ]; then
  run_tbe_gpu_tests round2_tests.log "${ROUND2_FILTER:-GpuTbeForward*:GpuTbeBoundsCheck*}" || failed=1
fi

for c in ${ROUND2_CONFIGS:-D1 D2 D3 D4 D5 D6 D7}; do
  case "$c" in
    D3|D5) variants="wide_rows fitted_groups" ;;
    *) variants="auto" ;;
  esac
  for variant in $variants; do
    "$parity" bench tbe --config "$c" --variant "$variant" --backward-variant row --reps "$reps" --warmup 3 \
      --out "$OUT/round2_${c}_${variant}.json" > "$OUT/round2_${c}_${variant}.log" 2>&1
    rc=$?
    echo "== $c $variant rc=$rc"
    if [ "$rc" != 0 ]; then
      tail -3 "$OUT/round2_${c}_${variant}.log"
      failed=1
    fi
  done
done

python3 - "$OUT" <<'PY' | tee "$OUT/tbe_round2_summary.txt"
import glob, json, os, sys
out = sys.argv[1]
print(f"{'config':6s} {'variant':14s} {'fwd ms':>8s} {'fwd TB/s':>9s} {'% copy':>7s} {'target':>7s}"
      f" {'step ms':>8s} {'bc ms':>8s} {'floor ms':>9s} {'bc/floor':>9s}")
for path in sorted(glob.glob(os.path.join(out, "round2_*.json"))):
    config, variant = os.path.basename(path)[len("round2_"):-len(".json")].split("_", 1)
    d = json.load(open(path))
    f, s, bc = d["forward"], d["step_fwd_bwd_opt"], d["bounds_check_clean"]
    bw = d.get("forward_bandwidth", {})
    ratio = 100 * bw.get("evaluated_ratio_to_copy", float("nan"))
    met = {True: "met", False: "NOT met"}.get(bw.get("target_met"), "-")
    floor = d.get("bounds_check_floor_index_offsets_read", {})
    floor_ms = floor.get("median_ms", float("nan"))
    print(f"{config:6s} {variant:14s} {f['median_ms']:8.3f} {f['tbps']:9.2f} {ratio:7.1f} {met:>7s}"
          f" {s['median_ms']:8.3f} {bc['median_ms']:8.4f} {floor_ms:9.4f} {bc['median_ms'] / floor_ms:8.2f}x")
PY
exit $failed
