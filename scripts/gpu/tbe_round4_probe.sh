#!/usr/bin/env bash
# TBE round 4 on the device (issue 13; docs/embedding.md): old against new kernels, same call.
# Called like the bench_*.sh pieces (build dir as $1, $OUT set): run_all.sh runs it with
# `--only tbe_round4_probe`.
#   1. the GPU tests of the forward candidates, the op's selection, the dedup forward and the
#      bounds check (ROUND4_FILTER to change them);
#   2. D4 and D2 forward only: auto and the warp-tile kernels, old (one_hot, short_bags) and new
#      (short_bags_prefetch, short_bags_light), each checked against fp64 first;
#   3. full runs of ROUND4_BOUNDS_CONFIGS (default D6 D1 D5 C2): the bounds check against its floor
#      (a plain read of indices and offsets, same flush; target <= 1.2x; run 30 had D6 1.33x,
#      D1 1.00x, D5 0.83x), C2's forward and step as the guard (>= 3.4 TB/s, <= 2.8 ms), and on
#      D6 and C2 the forward auto (group per bag) against wide_rows_dedup (each distinct row of a
#      chunk read once; D6 skewed, C2 uniform: its cost where nothing repeats);
#   4. $OUT/tbe_round4_summary.txt: per configuration and kernel the forward ms, TB/s, % of copy
#      under the judged byte model and the target; the bounds-check ratios; a last line "round4: ...".
#   ROUND4_REPS=10 ROUND4_TESTS=0 scripts/gpu/tbe_round4_probe.sh build/cuda
# Budget: ~20 s of tests, two forward-only runs and four full runs of ~8-15 s: under 120 s.
set -uo pipefail
build_dir="${1:-build/cuda}"
: "${OUT:?OUT must be set}"
source "$(dirname "$0")/tbe_probe_common.sh"
reps="${ROUND4_REPS:-10}"
failed=0

if [ "${ROUND4_TESTS:-1}" = 1 ]; then
  run_tbe_gpu_tests round4_tests.log \
    "${ROUND4_FILTER:-GpuTbeForwardCandidates*:GpuTbeForwardOp*:GpuTbeForwardDedup*:GpuTbeBounds*}" || failed=1
fi

# run NAME ARGS...: one bench run into $OUT/round4_NAME.{json,log}
run() {
  local name="$1"
  shift
  "$parity" bench tbe "$@" --reps "$reps" --warmup 3 --out "$OUT/round4_${name}.json" > "$OUT/round4_${name}.log" 2>&1
  local rc=$?
  echo "== $name rc=$rc"
  if [ "$rc" != 0 ]; then
    tail -3 "$OUT/round4_${name}.log"
    failed=1
  fi
}
short_bag_variants="${ROUND4_SHORT_VARIANTS:-warp_tile_one_hot,warp_tile_short_bags,warp_tile_short_bags_prefetch,warp_tile_short_bags_light}"
run D4_forward --config D4 --forward-only --forward-variant "$short_bag_variants"
# D2 (L ~ U[0, 10], D 16/32): the other short-bag configuration a new selection rule would move.
run D2_forward --config D2 --forward-only --forward-variant "$short_bag_variants"
# Full runs (bounds check and its floor, step); D6 and C2 also time wide_rows_dedup beside auto
# (D6: skewed long bags, where it should pay; C2: uniform, its overhead where nothing repeats).
for c in ${ROUND4_BOUNDS_CONFIGS:-D6 D1 D5 C2}; do
  extra=()
  case "$c" in D6 | C2) extra=(--forward-variant "${ROUND4_WIDE_VARIANTS:-wide_rows_dedup}") ;; esac
  run "${c}_full" --config "$c" --backward-variant row "${extra[@]}"
done

python3 - "$OUT" "$(dirname "$0")" <<'PY' | tee "$OUT/tbe_round4_summary.txt"
import glob, json, os, sys
out = sys.argv[1]
sys.path.insert(0, sys.argv[2])
from tbe_probe_summary import print_forward_rows  # noqa: E402
print(f"{'run':10s} {'forward kernel':30s} {'fwd ms':>8s} {'TB/s':>7s} {'% copy':>7s} {'model':>12s} {'target':>7s}")
verdicts = []
bounds = []
for path in sorted(glob.glob(os.path.join(out, "round4_*.json"))):
    run = os.path.basename(path)[len("round4_"):-len(".json")]
    d = json.load(open(path))
    ratios = print_forward_rows(run, d, 10, 30)
    if "step_fwd_bwd_opt" in d:
        print(f"{run:10s} {'(step, auto)':30s} {d['step_fwd_bwd_opt']['median_ms']:8.4f}")
    floor = d.get("bounds_check_floor_index_offsets_read")
    if floor:
        line = (f"{run:10s} bounds check {d['bounds_check_clean']['median_ms'] * 1e3:6.1f} us, floor"
                f" {floor['median_ms'] * 1e3:6.1f} us: {floor['clean_check_ratio']:.2f}x"
                f" ({'met' if floor['clean_check_ratio'] <= 1.2 else 'NOT met'}, target <= 1.2x)")
        print(line)
        bounds.append(f"{run.split('_')[0]} {floor['clean_check_ratio']:.2f}x")
    if len(ratios) > 1:
        best = max(ratios, key=ratios.get)
        verdicts.append(f"{run} best {best} {ratios[best]:.1f}% (auto {ratios.get('auto', float('nan')):.1f}%)")
    if "step_fwd_bwd_opt" in d and d["config"]["name"] == "C2":
        verdicts.append(f"C2 fwd {d['forward']['tbps']:.2f} TB/s step {d['step_fwd_bwd_opt']['median_ms']:.3f} ms")
print("round4: " + "; ".join(verdicts + (["bounds/floor " + ", ".join(bounds)] if bounds else [])))
PY
exit $failed
