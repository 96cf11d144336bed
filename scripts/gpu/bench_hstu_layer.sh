#!/usr/bin/env bash
# HSTU layer piece of the device run (called by run_all.sh with the build dir as $1, $OUT set):
# `parity bench hstu-layer --device gpu` at the attention targets' shape (B=512, H=4, d=128, D=512,
# lengths U[0.9N, N), num_targets U[1, 20], N = 2048 and 4096), then in the same call the same layer
# in PyTorch (torch_hstu_layer_baseline.py: GR's Triton attention forward when a prepared
# generative-recommenders dir is carried, the padded PyTorch attention forward and backward).
#   HSTU_LAYER_TRITON_DIR=DIR ...  # ../shared/baselines/prepare_gr_triton.py output (default build/carry/gr_triton)
set -uo pipefail
build_dir="${1:-build/cuda}"
parity="$build_dir/bin/parity"
: "${OUT:?OUT must be set}"
here="$(dirname "$0")"
# shellcheck source=common.sh
source "$here/common.sh"  # step NAME COMMAND..., failed
for n in 2048 4096; do
  step "hstu_layer_$n" "$parity" bench hstu-layer --device gpu --batch 512 --seq-len "$n" --model-dim 512 --heads 4 \
    --dim-qk 128 --dim-v 128 --max-targets 20 --warmup 3 --reps 10 --out "$OUT/hstu_layer_$n.json"
done
if python3 -c "import torch, triton" 2>/dev/null; then
  triton_dir="${HSTU_LAYER_TRITON_DIR:-build/carry/gr_triton}"
  [[ -d "$triton_dir/generative_recommenders" ]] && export PYTHONPATH="$triton_dir${PYTHONPATH:+:$PYTHONPATH}"
  step torch_hstu_layer python3 "$here/torch_hstu_layer_baseline.py" "$OUT/torch_hstu_layer.json" 512 2048 4096
else
  echo "---- torch_hstu_layer: skipped (no torch/triton on this machine)"
fi
exit $failed
