#!/usr/bin/env bash
# TBE round 3 on the device (docs/embedding.md, "Forward, narrow-row candidates"; issue 13's D1, D2,
# D4). Called like the bench_*.sh pieces (build dir as $1, $OUT set): run_all.sh runs it with
# `--only tbe_round3_probe`.
#   1. the GPU tests of the candidates and of the op's selection (GpuTbeForwardCandidates*,
#      GpuTbeForwardOp*; ROUND3_FILTER widens them, e.g. GpuTbeForward*);
#   2. `parity bench tbe --forward-only` on D1, D2, D4: auto plus every kernel of ROUND3_VARIANTS
#      (each checked against fp64 on sampled bags, then timed on the same buffers); then C2 in full
#      (auto) as the guard: forward >= 3.4 TB/s, step <= 2.8 ms;
#   3. a table ($OUT/tbe_round3_summary.txt): per configuration and kernel, forward ms, TB/s (every
#      lookup), % of the copy under the judged byte model, the target; C2's forward and step; and a
#      last line "round3: ..." with each configuration's best kernel against auto.
#   ROUND3_REPS=10 ROUND3_TESTS=0 ROUND3_CONFIGS="D1 D2 D4 C2" scripts/gpu/tbe_round3_probe.sh build/cuda
# Budget: ~10 s of tests, three forward-only runs and one full run of ~5-12 s each (process and
# context start, the 4 GiB copy ceiling, D1's 5 GB of tables filled, D4's 16.8M Zipf indices drawn
# on the host): about 50 s.
set -uo pipefail
build_dir="${1:-build/cuda}"
: "${OUT:?OUT must be set}"
source "$(dirname "$0")/tbe_probe_common.sh"
reps="${ROUND3_REPS:-10}"
variants="${ROUND3_VARIANTS:-narrow_rows,wide_rows,narrow_rows_deep,narrow_rows_light,warp_tile_one_hot,warp_tile_one_hot_prefetch,warp_tile_short_bags}"
failed=0

if [ "${ROUND3_TESTS:-1}" = 1 ]; then
  run_tbe_gpu_tests round3_tests.log "${ROUND3_FILTER:-GpuTbeForwardCandidates*:GpuTbeForwardOp*}" || failed=1
fi

for c in ${ROUND3_CONFIGS:-D1 D2 D4 C2}; do
  extra=(--forward-only --forward-variant "$variants")
  [ "$c" = C2 ] && extra=(--backward-variant row)
  "$parity" bench tbe --config "$c" --variant auto "${extra[@]}" --reps "$reps" --warmup 3 \
    --out "$OUT/round3_${c}.json" > "$OUT/round3_${c}.log" 2>&1
  rc=$?
  echo "== $c rc=$rc"
  if [ "$rc" != 0 ]; then
    tail -3 "$OUT/round3_${c}.log"
    failed=1
  fi
done

python3 - "$OUT" "$(dirname "$0")" <<'PY' | tee "$OUT/tbe_round3_summary.txt"
import glob, json, os, sys
out = sys.argv[1]
sys.path.insert(0, sys.argv[2])
from tbe_probe_summary import print_forward_rows  # noqa: E402
print(f"{'config':6s} {'forward kernel':22s} {'fwd ms':>8s} {'TB/s':>7s} {'% copy':>7s} {'model':>12s} {'target':>7s}")
verdicts = []
for path in sorted(glob.glob(os.path.join(out, "round3_*.json"))):
    config = os.path.basename(path)[len("round3_"):-len(".json")]
    d = json.load(open(path))
    ratios = print_forward_rows(config, d, 6, 22)
    if "step_fwd_bwd_opt" in d:
        s = d["step_fwd_bwd_opt"]
        print(f"{config:6s} {'(step, auto)':22s} {s['median_ms']:8.4f}")
        verdicts.append(f"{config} fwd {d['forward']['tbps']:.2f} TB/s step {s['median_ms']:.3f} ms")
    elif ratios:
        best = max(ratios, key=ratios.get)
        verdicts.append(f"{config} best {best} {ratios[best]:.1f}% (auto {ratios.get('auto', float('nan')):.1f}%)")
print("round3: " + "; ".join(verdicts))
PY
exit $failed
