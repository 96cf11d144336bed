#!/usr/bin/env bash
# Attention piece of the device run (called by run_all.sh with the build dir as $1, $OUT set): our
# kernels on the named configurations (docs/attention.md), then, in the same call and on the same
# drawn lengths, the padded torch implementation, torch SDPA flash on padded tensors and (when a
# prepared generative-recommenders dir is carried) the public Triton HSTU forward.
#   ATTN_CONFIGS="targets" scripts/gpu/bench_attention.sh build/cuda     # a subset
#   ATTN_FORWARD_VARIANTS=a,b ...  # forward variants timed beside the default (the Hopper wgmma
#                                  # kernel where it runs; default list: the mma.sync kernels,
#                                  # 64- and 128-row; empty: none)
#   ATTN_BACKWARD_VARIANTS=a,b ...  # backward variants timed beside the default (the
#                                   # warp-specialized wgmma backward with TMA dQ where it runs;
#                                   # default list: the mma.sync one; empty: none)
#   ATTN_TRITON_DIR=DIR ...  # ../shared/baselines/prepare_gr_triton.py output (default build/carry/gr_triton)
set -uo pipefail
build_dir="${1:-build/cuda}"
parity="$build_dir/bin/parity"
: "${OUT:?OUT must be set}"
here="$(dirname "$0")"
# shellcheck source=common.sh
source "$here/common.sh"  # step NAME COMMAND..., failed
reps="${ATTN_REPS:-30}"
configs="${ATTN_CONFIGS:-targets H1 J1 G1 H2}"
baseline_configs=" ${ATTN_BASELINE_CONFIGS:-targets} "
forward_variants="${ATTN_FORWARD_VARIANTS-attention_forward_gpu,attention_forward_gpu_rows128}"
variant_flags=()
[[ -n "$forward_variants" ]] && variant_flags=(--forward-variants "$forward_variants")
backward_variants="${ATTN_BACKWARD_VARIANTS-attention_backward_gpu}"
[[ -n "$backward_variants" ]] && variant_flags+=(--backward-variants "$backward_variants")
have_torch=0
python3 -c "import torch, triton" 2>/dev/null && have_torch=1
# The Triton anchor's package: ATTN_TRITON_DIR, or build/carry/gr_triton when carried there.
triton_dir="${ATTN_TRITON_DIR:-build/carry/gr_triton}"
[[ -d "$triton_dir/generative_recommenders" ]] && export PYTHONPATH="$triton_dir${PYTHONPATH:+:$PYTHONPATH}"
# Warm-up and repetition minimums as do_bench's in the baseline script (25 ms, 200 ms).
# Each configuration's baselines run right after it, so a piece cut by its timeout still pairs
# what it measured.
for c in $configs; do
  step "attention_$c" "$parity" bench attention --config "$c" --reps "$reps" --warmup 5 --warmup-ms 25 --rep-ms 200 "${variant_flags[@]}" --out "$OUT/attention_$c.json"
  [[ "$baseline_configs" == *" $c "* && -f "$OUT/attention_$c.json" ]] || continue
  if [[ $have_torch -eq 1 ]]; then
    step "attention_${c}_baselines" python3 "$here/torch_attention_baseline.py" --ours "$OUT/attention_$c.json" \
      --out "$OUT/attention_${c}_baselines.json"
  else
    echo "---- attention_${c}_baselines: skipped (torch/triton not importable)"
  fi
done
exit $failed
