#!/usr/bin/env bash
# GEMM selector piece of the device run (called by run_all.sh with the build dir as $1, $OUT set).
# Two phases, so the evaluation times the choices of the model as calibrated, never an older one:
#   1. parity gemm measure on the CALIBRATION split (rows i % 3 == 0 of the suite) and on the
#      extra calibration shapes (bench/shapes/gemm_shapes_calibration_extra{,2}.csv, disjoint from
#      the suite), parity gemm calibrate on both files -> $OUT/h200_gemm.json (scalars fitted on
#      calibration shapes only; calibrate refuses any evaluation row's name or size)
#      (GEMM_SKIP_CALIBRATION=1 skips phase 1 and uses the committed data/calibration/h200_gemm.json)
#   2. parity gemm measure on the EVALUATION split (other rows) with those scalars loaded, so the
#      calibrated selector's top-3 are among the candidates timed in full
#      parity gemm eval -> $OUT/gemm_eval.{json,md,svg}: selector vs heuristic top-1 vs oracle
# Measuring = the pruned cuBLASLt space screened (flushed), top-K + heuristic's 8 + selector's top-3
# timed in full (L2 flushed, median of >= 30 interleaved repetitions: short kernels get rounds
# until each candidate has ~GEMM_MIN_TIMED_MS (default 2) ms of kernel time, at most 300), oracle
# top-5 re-timed (noise).
set -uo pipefail
build_dir="${1:-build/cuda}"
parity="$build_dir/bin/parity"
: "${OUT:?OUT must be set}"
suite="bench/shapes/gemm_shapes_dev.csv"
extra_suites=(bench/shapes/gemm_shapes_calibration_extra.csv bench/shapes/gemm_shapes_calibration_extra2.csv)
reps=30
min_timed_ms="${GEMM_MIN_TIMED_MS:-2}"
calibration_budget_s="${GEMM_CALIBRATION_BUDGET_S:-70}"
calibration_extra_budget_s="${GEMM_CALIBRATION_EXTRA_BUDGET_S:-60}"
evaluation_budget_s="${GEMM_EVALUATION_BUDGET_S:-240}"
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"  # step NAME COMMAND..., failed

# Split the suite the way `gemm calibrate`/`gemm eval` do: data row i (0-based) calibrates when
# i % 3 == 0.
calibration_shapes="$OUT/gemm_shapes_calibration.csv"
evaluation_shapes="$OUT/gemm_shapes_evaluation.csv"
awk -F, -v cal="$calibration_shapes" -v ev="$evaluation_shapes" '
  /^#/ {next}
  !header_done {print > cal; print > ev; header_done=1; next}
  {if (row % 3 == 0) print > cal; else print > ev; row++}' "$suite"

data_dir="$(mktemp -d /tmp/parity_gemm_data.XXXXXX)"
cp -r data/. "$data_dir/"
mkdir -p "$data_dir/calibration"

if [[ "${GEMM_SKIP_CALIBRATION:-0}" == "1" && -s data/calibration/h200_gemm.json ]]; then
  # Phase 1 skipped: the evaluation ranks with the committed calibration (fitted earlier on a
  # recorded calibration split; its provenance says which), copied beside the results.
  echo "gemm: GEMM_SKIP_CALIBRATION=1, using the committed data/calibration/h200_gemm.json"
  cp data/calibration/h200_gemm.json "$OUT/h200_gemm.json"
else
  rm -f "$data_dir/calibration/h200_gemm.json"  # phase 1 ranks with the built-in defaults
  step gemm_measure_calibration "$parity" gemm measure --shapes "$calibration_shapes" \
    --out "$OUT/gemm_measurements_calibration.json" --hw h200 --data-dir "$data_dir" \
    --time-budget-s "$calibration_budget_s" --reps "$reps" --min-timed-ms "$min_timed_ms"
  calibration_files=()
  [[ -s "$OUT/gemm_measurements_calibration.json" ]] &&
    calibration_files+=(--measurements "$OUT/gemm_measurements_calibration.json")
  calibration_shape_args=()
  for extra_suite in "${extra_suites[@]}"; do
    [[ -s "$extra_suite" ]] || continue
    tag="$(basename "$extra_suite" .csv)"
    tag="${tag#gemm_shapes_}"
    step "gemm_measure_$tag" "$parity" gemm measure --shapes "$extra_suite" \
      --out "$OUT/gemm_measurements_$tag.json" --hw h200 --data-dir "$data_dir" \
      --time-budget-s "$calibration_extra_budget_s" --reps "$reps" --min-timed-ms "$min_timed_ms"
    [[ -s "$OUT/gemm_measurements_$tag.json" ]] &&
      calibration_files+=(--measurements "$OUT/gemm_measurements_$tag.json")
    calibration_shape_args+=(--calibration-shapes "$extra_suite")
  done
  if [[ ${#calibration_files[@]} -gt 0 ]]; then
    step gemm_calibrate "$parity" gemm calibrate --hw h200 "${calibration_files[@]}" \
      --shapes "$suite" "${calibration_shape_args[@]}" --out "$OUT/h200_gemm.json"
    [[ -s "$OUT/h200_gemm.json" ]] && cp "$OUT/h200_gemm.json" "$data_dir/calibration/h200_gemm.json"
  fi
fi

step gemm_measure_evaluation "$parity" gemm measure --shapes "$evaluation_shapes" \
  --out "$OUT/gemm_measurements_evaluation.json" --hw h200 --data-dir "$data_dir" \
  --time-budget-s "$evaluation_budget_s" --reps "$reps" --min-timed-ms "$min_timed_ms"
if [[ -s "$OUT/gemm_measurements_evaluation.json" ]]; then
  step gemm_eval "$parity" gemm eval --hw h200 --measurements "$OUT/gemm_measurements_evaluation.json" \
    --shapes "$suite" --data-dir "$data_dir" --out-dir "$OUT"
fi
exit $failed
