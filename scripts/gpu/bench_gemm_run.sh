#!/usr/bin/env bash
# gemm::Gemm run piece of the device run (called by run_all.sh with the build dir as $1, $OUT set):
#   1. the Gemm run GPU tests (every epilogue x layout x dtype against the fp64 reference);
#   2. parity bench gemm-run: the dense-layer GEMMs of dlrm-kaggle and dlrm-v2 at batch 65536,
#      bf16 (the passes the trainer runs, and the fused-dReLU mode's; weight gradient with the
#      bias gradient) through Gemm::run (GEMM choice GEMM_RUN_CHOICE, default measured as the
#      trainer), beside the heuristic top-1 and the oracle (every accepted candidate timed with
#      the run epilogue), with Gemm::run's host time against a bare cublasLtMatmul
#      -> $OUT/gemm_run_<model>[_<choice>].json.
# GEMM_RUN_NO_ORACLE=1 skips the oracle (the fast run: Gemm::run, heuristic and host time only);
# GEMM_RUN_MODELS="dlrm-kaggle" runs one model; GEMM_RUN_CHOICES="measured model" runs each choice.
set -uo pipefail
build_dir="${1:-build/cuda}"
parity="$build_dir/bin/parity"
: "${OUT:?OUT must be set}"
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"  # step NAME COMMAND..., failed

if [[ -x "$build_dir/tests/parity_gpu_tests" ]]; then
  step gemm_run_gpu_tests "$build_dir/tests/parity_gpu_tests" --gtest_filter='GemmRunGpu.*'
fi
oracle_flag=()
[[ "${GEMM_RUN_NO_ORACLE:-0}" == "1" ]] && oracle_flag=(--no-oracle)
for model in ${GEMM_RUN_MODELS:-dlrm-kaggle dlrm-v2}; do
  for choice in ${GEMM_RUN_CHOICES:-measured}; do
    step "bench_gemm_run_${model}_$choice" "$parity" bench gemm-run --model "$model" --batch-size 65536 \
      --dtype bf16 --gemm-choice "$choice" "${oracle_flag[@]}" --out "$OUT/gemm_run_${model}_$choice.json"
  done
done
exit $failed
