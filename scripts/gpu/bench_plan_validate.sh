#!/usr/bin/env bash
# Planner validation piece of the device run (called by run_all.sh with the build dir as $1, $OUT
# set): `parity plan validate` on the default single-GPU list (dlrm-kaggle and dlrm-v2 at several
# batches, bf16/TF32/fp32, with and without activation checkpointing: 11 configurations), the
# planner's H200 prediction beside the trainer's measured step time and peak device memory, with
# the errors and Kendall's tau (run 29: the 11 configurations in 11 s with 8 timed steps; dlrm-v2
# initialises 105 GB of tables per configuration on the device). Ends with one summary line.
# PLAN_VALIDATE_SET=FILE runs a validation-set file instead (bench/plan/validation_set_N.txt: the
# held-out sets drawn by scripts/plan_validation_set.py; set 1 was scored in run 33 and is now
# development data, set 2 is the one to score and quote), written to plan_validate_<file stem>.json.
# Set 2 at 8 steps: 14 steps per configuration (first, 3 warmup, 8 timed, 2 instrumented); its 12
# predicted step times sum to 0.45 s, so 6.3 s of steps, plus about 1-3 s of set-up each
# (dlrm-v2 initialises 105 GB of tables; the first step times the GEMM candidates): under 1 minute.
#   PLAN_VALIDATE_STEPS=10 PLAN_VALIDATE_CONFIGS=dlrm-kaggle:65536:bf16:none,... \
#     scripts/gpu/bench_plan_validate.sh build/cuda
#   PLAN_VALIDATE_SET=bench/plan/validation_set_2.txt PLAN_VALIDATE_STEPS=8 \
#     scripts/gpu/bench_plan_validate.sh build/cuda
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
# One line for the run's summary: the issue-16 figures from the results JSON.
if [[ -f "$OUT/$out_name.json" ]]; then
  python3 - "$OUT/$out_name.json" <<'PY' || true
import json, sys
d = json.load(open(sys.argv[1]))
print("plan_validate summary: %d of %d measured; step within 10%%: %d; peak memory within 5%%: %d; Kendall tau %.3f; "
      "max |step error| %.1f%%" % (d["measured_rows"], len(d["rows"]), d["step_within_10pct"],
                                   d["peak_memory_within_5pct"], d["kendall_tau_step"], 100 * d["max_abs_step_error"]))
PY
fi
exit $failed
