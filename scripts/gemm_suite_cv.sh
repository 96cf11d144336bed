#!/usr/bin/env bash
# Two-fold cross-validation of the GEMM model over the recorded (spent) test suites, on the CPU:
# fit on run 17's calibration files plus one group of suites, score the other group with
# `gemm eval --split all`, then the other way round; print the pooled analytical geomean over every
# scored suite, aligned and misaligned apart. How docs/gemm_model.md's development figures were made.
#
# Usage: scripts/gemm_suite_cv.sh [--parity BIN] [--fold-a "test test3 test5"] [--out DIR]
#                                  [-- extra gemm calibrate options, e.g. --fit-only legacy_efficiency]
# Fold B is every H200 suite of test..test7 (suite 6 ran on an H100) not in fold A. Needs the
# recorded measurement files under bench/results (plain .json.gz, no git lfs).
set -euo pipefail
cd "$(dirname "$0")/.."
parity=build/cpu/bin/parity
fold_a="test test3 test5"
out=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --parity) parity="$2"; shift 2 ;;
    --fold-a) fold_a="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --) shift; break ;;
    *) echo "gemm_suite_cv: unknown option '$1'" >&2; exit 2 ;;
  esac
done
[[ -n "$out" ]] || out=$(mktemp -d)
mkdir -p "$out"
results=bench/results
declare -A measured=(
  [test]=$results/2026-12-01-h200-run26-gemm-test/gemm_measurements_test.json.gz
  [test2]=$results/2026-12-01-h200-run30-gemm-test2-tbe-round2/gemm_measurements_test2.json.gz
  [test3]=$results/2026-12-02-h200-run47-gemm-test3/gemm_measurements_test3.json.gz
  [test4]=$results/2026-12-02-h200-run55-final-tests-gemm-test4-attention/gemm_measurements_test4.json.gz
  [test5]=$results/2026-12-05-h200-run85-gemm-test5-hstu-layer/gemm_test5/gemm_measurements_test5.json.gz
  [test7]=$results/2026-12-05-h200-run87-deterministic-pair-walk/gemm_test7/gemm_measurements_test7.json.gz)
run17=$results/2026-11-29-h200-run17-gemm/calibration
fold_b=""
for suite in test test2 test3 test4 test5 test7; do
  [[ " $fold_a " == *" $suite "* ]] || fold_b="$fold_b $suite"
done
fit() {  # fit OUT SUITE... (extra calibrate options from the command line)
  local file=$1; shift
  local args=(--measurements "$run17/gemm_measurements_calibration.json.gz"
              --measurements "$run17/gemm_measurements_calibration_extra.json.gz"
              --measurements "$run17/gemm_measurements_calibration_extra2.json.gz"
              --calibration-shapes bench/shapes/gemm_shapes_calibration_extra.csv
              --calibration-shapes bench/shapes/gemm_shapes_calibration_extra2.csv)
  for suite in "$@"; do
    args+=(--measurements "${measured[$suite]}" --calibration-shapes "bench/shapes/gemm_shapes_$suite.csv")
  done
  "$parity" gemm calibrate "${args[@]}" "${extra[@]}" --out "$file" > "$file.log"
}
score() {  # score CALIBRATION SUITE
  "$parity" gemm eval --calibration "$1" --measurements "${measured[$2]}" \
    --shapes "bench/shapes/gemm_shapes_$2.csv" --split all --out-dir "$out/$2" > /dev/null
}
extra=("$@")
# shellcheck disable=SC2086  # the fold lists are word lists on purpose
fit "$out/fit_a.json" $fold_a
# shellcheck disable=SC2086
fit "$out/fit_b.json" $fold_b
for suite in $fold_b; do score "$out/fit_a.json" "$suite"; done
for suite in $fold_a; do score "$out/fit_b.json" "$suite"; done
python3 - "$out" <<'SUMMARY'
import csv, glob, math, sys
aligned, misaligned = [], []
for path in glob.glob(f"{sys.argv[1]}/*/gemm_eval_candidates.csv"):
    shapes = {}
    for row in csv.DictReader(open(path)):
        shapes.setdefault(row["shape"], []).append(row)
    for rows in shapes.values():
        oracle = min(float(r["measured_us"]) for r in rows if r["screened_only"] == "0")
        pick = next(r for r in rows if r["model_rank"] == "0")
        ratio = oracle / float(pick["measured_us"])
        (aligned if pick["alignment_bytes"] == "16" else misaligned).append(ratio)
geomean = lambda v: math.exp(sum(map(math.log, v)) / len(v))
every = aligned + misaligned
print(f"gemm_suite_cv: {len(every)} shapes, analytical geomean {geomean(every):.4f}, worst {min(every):.3f}, "
      f"within 5% {sum(r >= 0.95 for r in every) / len(every):.0%}; aligned {geomean(aligned):.4f} "
      f"({len(aligned)}), misaligned {geomean(misaligned):.4f} ({len(misaligned)}); files in {sys.argv[1]}")
SUMMARY
