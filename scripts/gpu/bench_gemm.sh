#!/usr/bin/env bash
# GEMM selector piece of the device run (called by run_all.sh with the build dir as $1, $OUT set):
#   parity gemm measure   -> $OUT/gemm_measurements.json  (oracle data set: per shape the pruned
#                            cuBLASLt space screened, top-K + heuristic's 8 + selector's top-3 timed
#                            in full, L2 flushed, median of 30 interleaved repetitions, noise floor)
#   parity gemm calibrate -> $OUT/h200_gemm.json          (scalars fitted on the calibration split)
#   parity gemm eval      -> $OUT/gemm_eval.{json,md,svg} (evaluation split: selector vs heuristic
#                            top-1 vs oracle, with the fitted scalars)
# Shapes: every 2nd row of bench/shapes/gemm_shapes_dev.csv (50 of 100, all families; the file's
# calibration/evaluation split is kept: rows i % 3 == 0 calibrate), under a time budget so the
# piece ends inside run_all.sh's 240 s limit; the measure log says how many were measured.
set -uo pipefail
build_dir="${1:-build/cuda}"
parity="$build_dir/bin/parity"
: "${OUT:?OUT must be set}"
shapes="bench/shapes/gemm_shapes_dev.csv"
stride=2
budget_s=170
reps=30
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"  # step NAME COMMAND..., failed

measurements="$OUT/gemm_measurements.json"
step gemm_measure "$parity" gemm measure --shapes "$shapes" --out "$measurements" --hw h200 \
  --stride "$stride" --time-budget-s "$budget_s" --reps "$reps"
if [[ -s "$measurements" ]]; then
  step gemm_calibrate "$parity" gemm calibrate --hw h200 --measurements "$measurements" \
    --shapes "$shapes" --out "$OUT/h200_gemm.json"
  # Evaluate with the scalars just fitted (a data dir holding only that calibration file).
  eval_data="$(mktemp -d /tmp/parity_gemm_data.XXXXXX)"
  cp -r data/. "$eval_data/"
  mkdir -p "$eval_data/calibration"
  if [[ -s "$OUT/h200_gemm.json" ]]; then cp "$OUT/h200_gemm.json" "$eval_data/calibration/h200_gemm.json"; fi
  step gemm_eval "$parity" gemm eval --hw h200 --measurements "$measurements" --shapes "$shapes" \
    --data-dir "$eval_data" --out-dir "$OUT"
fi
exit $failed
