#!/usr/bin/env bash
# Planner validation piece of the device run (called by run_all.sh with the build dir as $1, $OUT
# set): `parity plan validate` on the default single-GPU list (dlrm-kaggle and dlrm-v2 at several
# batches, bf16/TF32/fp32, with and without activation checkpointing: 11 configurations), the
# planner's H200 prediction beside the trainer's measured step time and peak device memory, with
# the errors and Kendall's tau. Sized for about 4 minutes on an H200 (dlrm-v2 initialises 105 GB
# of tables per configuration; not yet timed: give run_all.sh --piece-timeout 420).
# PLAN_VALIDATE_SET=FILE runs a validation-set file instead (bench/plan/validation_set_1.txt: the
# held-out set drawn by scripts/plan_validation_set.py; the figure to quote), written to
# plan_validate_<file stem>.json.
#   PLAN_VALIDATE_STEPS=10 PLAN_VALIDATE_CONFIGS=dlrm-kaggle:65536:bf16:none,... \
#     scripts/gpu/bench_plan_validate.sh build/cuda
#   PLAN_VALIDATE_SET=bench/plan/validation_set_1.txt scripts/gpu/bench_plan_validate.sh build/cuda
set -uo pipefail
build_dir="${1:-build/cuda}"
parity="$build_dir/bin/parity"
: "${OUT:?OUT must be set}"
here="$(dirname "$0")"
# shellcheck source=common.sh
source "$here/common.sh"  # step NAME COMMAND..., failed
out_name=plan_validate
if [[ -n "${PLAN_VALIDATE_SET:-}" ]]; then out_name="plan_validate_$(basename "${PLAN_VALIDATE_SET%.*}")"; fi
args=(plan validate --device cuda --hw h200 --steps "${PLAN_VALIDATE_STEPS:-10}" --out "$OUT/$out_name.json")
if [[ -n "${PLAN_VALIDATE_CONFIGS:-}" ]]; then args+=(--configs "$PLAN_VALIDATE_CONFIGS"); fi
if [[ -n "${PLAN_VALIDATE_SET:-}" ]]; then args+=(--configs-file "$PLAN_VALIDATE_SET"); fi
step plan_validate "$parity" "${args[@]}"
exit $failed
