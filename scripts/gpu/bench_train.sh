#!/usr/bin/env bash
# Training piece of the device run (called by run_all.sh with the build dir as $1, $OUT set):
# Parity's training step (`parity bench train`: batch resident on the device, and staged from the
# host every step, then the step-time breakdown and peak device memory) on dlrm-kaggle at batch
# 65536, then the PyTorch baselines of the shared folder in the same call (copy them first:
# mkdir -p .baselines && cp ../shared/baselines/torch_dlrm*.py .baselines/, and name .baselines in
# the device call's carry); then dlrm-v2 (MLPerf DLRMv2 shape, ~105 GB of fp32 tables in HBM) in
# bf16, followed by torch_dlrmv2.py (eager and torch.compile, fp32 and bf16): one after the other,
# as the two do not fit in the GPU's memory together; then a short GPU training run of `tiny` with
# NE/AUC beside the same run on the CPU.
#   TRAIN_BATCH=65536 TRAIN_STEPS=30 scripts/gpu/bench_train.sh build/cuda
#   TRAIN_KAGGLE=0 / TRAIN_DLRMV2=0 / TRAIN_TINY=0 skip dlrm-kaggle (with its baselines), dlrm-v2
#   (with torch_dlrmv2.py) or the tiny runs, to split the piece over device calls of 10 minutes;
#   TRAIN_TORCH_COMPILE=0 skips torch_dlrm_compile; TRAIN_TORCH_SCRIPT=.baselines/<cut>.py runs a cut of
#   torch_dlrm.py (fewer batches) for both its eager runs; TRAIN_GEMM_CHOICES="auto model heuristic" adds
#   dlrm-kaggle runs with each explicit GEMM choice beside the default (measured) (`--gemm-choice`, docs/gemm_run.md) per precision.
set -uo pipefail
build_dir="${1:-build/cuda}"
parity="$build_dir/bin/parity"
: "${OUT:?OUT must be set}"
here="$(dirname "$0")"
# shellcheck source=common.sh
source "$here/common.sh"  # step NAME COMMAND..., failed
batch="${TRAIN_BATCH:-65536}"
steps="${TRAIN_STEPS:-30}"
if [[ "${TRAIN_KAGGLE:-1}" == 1 ]]; then
  for precision in ${TRAIN_PRECISIONS:-bf16 tf32 fp32}; do
    step "train_dlrm_kaggle_$precision" "$parity" bench train --model dlrm-kaggle --device cuda --batch "$batch" \
      --precision "$precision" --steps "$steps" --out "$OUT/train_dlrm_kaggle_$precision.json"
  done
  # The GEMM choices beside the default (auto), per precision.
  for choice in ${TRAIN_GEMM_CHOICES:-}; do
    for precision in ${TRAIN_PRECISIONS:-bf16 tf32 fp32}; do
      step "train_dlrm_kaggle_${precision}_gemm_$choice" "$parity" bench train --model dlrm-kaggle --device cuda \
        --batch "$batch" --precision "$precision" --gemm-choice "$choice" --steps "$steps" \
        --out "$OUT/train_dlrm_kaggle_${precision}_gemm_$choice.json"
    done
  done
  # The fused dReLU (off by default) beside the separate pass, per precision.
  for precision in ${TRAIN_FUSED_PRECISIONS:-bf16 tf32}; do
    step "train_dlrm_kaggle_${precision}_fused_drelu" "$parity" bench train --model dlrm-kaggle --device cuda \
      --batch "$batch" --precision "$precision" --fused-drelu --steps "$steps" \
      --out "$OUT/train_dlrm_kaggle_${precision}_fused_drelu.json"
  done
  if [[ -d .baselines ]] && python3 -c "import torch, triton" 2>/dev/null; then
    # TRAIN_TORCH_SCRIPT names a cut of torch_dlrm.py (e.g. one batch) to spend less device time.
    torch_script="${TRAIN_TORCH_SCRIPT:-.baselines/torch_dlrm.py}"
    step torch_dlrm python3 "$torch_script"
    step torch_dlrm_tf32 env TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1 python3 "$torch_script"
    if [[ "${TRAIN_TORCH_COMPILE:-1}" == 1 ]]; then
      step torch_dlrm_compile python3 .baselines/torch_dlrm_compile.py "$OUT/torch_dlrm_compile.json"
    fi
  else
    echo "---- torch baselines: skipped (no .baselines folder or torch/triton not importable)"
  fi
fi
if [[ "${TRAIN_DLRMV2:-1}" == 1 ]]; then
  # The preset's optimisers (Adagrad dense, row-wise Adagrad tables), then SGD for both as torch_dlrmv2.py.
  step train_dlrm_v2_bf16 "$parity" bench train --model dlrm-v2 --device cuda --batch "$batch" --precision bf16 \
    --steps "$steps" --out "$OUT/train_dlrm_v2_bf16.json"
  step train_dlrm_v2_bf16_sgd "$parity" bench train --model dlrm-v2 --device cuda --batch "$batch" --precision bf16 \
    --optimizer sgd --steps "$steps" --out "$OUT/train_dlrm_v2_bf16_sgd.json"
  if [[ -f .baselines/torch_dlrmv2.py ]] && python3 -c "import torch, triton" 2>/dev/null; then
    step torch_dlrmv2 python3 .baselines/torch_dlrmv2.py "$batch" "$OUT/torch_dlrmv2.json"
  else
    echo "---- torch_dlrmv2: skipped (no .baselines/torch_dlrmv2.py or torch/triton not importable)"
  fi
fi
if [[ "${TRAIN_TINY:-1}" == 1 ]] && "$parity" train --help > /dev/null 2>&1; then
  for device in cuda cpu; do
    step "train_tiny_$device" "$parity" train --model tiny --synthetic "${TRAIN_TINY_SAMPLES:-400000}" \
      --device "$device" --batch 4096 --out "$OUT/train_tiny_$device"
  done
fi
exit $failed
