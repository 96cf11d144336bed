#!/usr/bin/env bash
# TBE round 5 on the device (issue 13; docs/embedding.md): old against new forward kernels on held-out
# set 1 (spent as a test set in run 48, a development set since), D6 and C2, same call.
# Called like the bench_*.sh pieces (build dir as $1, $OUT set): run_all.sh runs it with
# `--only tbe_round5_probe`.
#   1. the GPU tests of the new paths and the forward selection (ROUND5_FILTER to change them);
#   2. every set-1 configuration forward-only: auto (new rule: warp tiles up to 512-byte rows,
#      one group-per-bag launch per width class) against the old kernels, forced, on the same
#      buffers: wide_rows_one_launch (the group per bag in one launch sized to the widest row),
#      fitted_groups, narrow_rows, warp_tile_one_hot, warp_tile_short_bags_light (refused ones say
#      why); C4 (one-hot 512-byte rows, which the new rule moves to the warp tiles) the same;
#   3. full runs (step, bounds check and its floor) of ROUND5_FULL (default: set 1's 00, 05, 08, 09
#      (SGD step 3.5-3.7x torch, bounds 1.27-1.33x), D6 and C2 (guards: C2 >= 3.4 TB/s, step <= 2.8
#      ms)), then torch's nn.EmbeddingBag on the set-1 ones in the same call;
#   4. $OUT/tbe_round5_summary.txt: per configuration and kernel the forward ms, TB/s, % of copy
#      under the judged byte model and its verdict; steps with torch's and the ratio; bounds/floor.
#   ROUND5_REPS=10 ROUND5_TESTS=0 scripts/gpu/tbe_round5_probe.sh build/cuda
# Budget: ~20 s of tests, 11 forward-only runs of ~3-6 s, 6 full runs of ~8-15 s, torch ~20 s: < 150 s.
set -uo pipefail
build_dir="${1:-build/cuda}"
: "${OUT:?OUT must be set}"
here="$(dirname "$0")"
source "$here/tbe_probe_common.sh"
reps="${ROUND5_REPS:-10}"
set_dir="${ROUND5_SET:-bench/tbe/test_set_1}"
failed=0

if [ "${ROUND5_TESTS:-1}" = 1 ]; then
  run_tbe_gpu_tests round5_tests.log \
    "${ROUND5_FILTER:-GpuTbeForwardWidths*:GpuTbeForwardCandidates*:GpuTbeForwardOp*}" || failed=1
fi

run() { run_tbe_bench round5 "$@"; }
old_variants="${ROUND5_OLD_VARIANTS:-wide_rows_one_launch,fitted_groups,narrow_rows,warp_tile_one_hot,warp_tile_short_bags_light}"
declare -A flags_of layout_of
while IFS=$'\t' read -r name layout flags; do
  flags_of[$name]="$flags"
  layout_of[$name]="$set_dir/$layout"
done < <(python3 -c "
import json, sys
for c in json.load(open(sys.argv[1]))['configurations']:
    print(c['name'][-2:], c['layout'], ' '.join(c['flags']), sep='\t')" "$set_dir/manifest.json")

for k in $(printf '%s\n' "${!flags_of[@]}" | sort); do
  # shellcheck disable=SC2086  # the flags are words by construction (the generator writes them)
  run "s1_${k}_forward" --layout "${layout_of[$k]}" ${flags_of[$k]} --forward-only --forward-variant "$old_variants"
done
run C4_forward --config C4 --forward-only --forward-variant "$old_variants"

full_runs=()
for c in ${ROUND5_FULL:-00 05 08 09 D6 C2}; do
  if [ -n "${flags_of[$c]:-}" ]; then
    # shellcheck disable=SC2086
    run "s1_${c}_full" --layout "${layout_of[$c]}" ${flags_of[$c]} --forward-variant wide_rows_one_launch
    [ -f "$OUT/round5_s1_${c}_full.json" ] && full_runs+=("$OUT/round5_s1_${c}_full.json")
  else
    run "${c}_full" --config "$c" --backward-variant row
  fi
done
if [ "${#full_runs[@]}" -gt 0 ] && python3 -c "import torch, triton" 2>/dev/null; then
  python3 "$here/torch_tbe_baseline.py" --from-parity "${full_runs[@]}" --out "$OUT/round5_torch.json" \
    > "$OUT/round5_torch.log" 2>&1 || failed=1
else
  echo "== torch: skipped (no full runs, or torch/triton not importable)"
fi

python3 - "$OUT" "$here" <<'PY' | tee "$OUT/tbe_round5_summary.txt"
import glob, json, os, sys
out = sys.argv[1]
sys.path.insert(0, sys.argv[2])
from tbe_probe_summary import print_forward_rows  # noqa: E402
torch = {}
if os.path.exists(os.path.join(out, "round5_torch.json")):
    torch = {r["config"]: r for r in json.load(open(os.path.join(out, "round5_torch.json")))["results"]}
print(f"{'run':12s} {'forward kernel':30s} {'fwd ms':>8s} {'TB/s':>7s} {'% copy':>7s} {'model':>12s} {'target':>7s}")
verdicts = []
for path in sorted(glob.glob(os.path.join(out, "round5_*.json"))):
    run = os.path.basename(path)[len("round5_"):-len(".json")]
    if run == "torch":
        continue
    d = json.load(open(path))
    ratios = print_forward_rows(run, d, 12, 30)
    if "step_fwd_bwd_opt" in d:
        step = d["step_fwd_bwd_opt"]["median_ms"]
        t = torch.get(d["config"].get("name"), {})
        t_step = t.get("step_ms")
        ratio = f" torch {t_step:.3f} ms: {t_step / step:.2f}x (target 5x)" if t_step else ""
        print(f"{run:12s} {'(step, auto)':30s} {step:8.4f}{ratio}")
    floor = d.get("bounds_check_floor_index_offsets_read")
    if floor:
        print(f"{run:12s} bounds check {d['bounds_check_clean']['median_ms'] * 1e3:6.1f} us, floor"
              f" {floor['median_ms'] * 1e3:6.1f} us: {floor['clean_check_ratio']:.2f}x"
              f" ({'met' if floor['clean_check_ratio'] <= 1.2 else 'NOT met'}, target <= 1.2x)")
    if ratios:
        best = max(ratios, key=ratios.get)
        auto = ratios.get("auto", float("nan"))
        verdicts.append(f"{run} auto {auto:.1f}% best {best} {ratios[best]:.1f}%")
    if "step_fwd_bwd_opt" in d and d["config"].get("name") == "C2":
        verdicts.append(f"C2 fwd {d['forward']['tbps']:.2f} TB/s step {d['step_fwd_bwd_opt']['median_ms']:.3f} ms")
print("round5: " + "; ".join(verdicts))
PY
exit $failed
