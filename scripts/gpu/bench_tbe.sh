#!/usr/bin/env bash
# TBE piece of the device run (called by run_all.sh with the build dir as $1, $OUT set): our
# kernels on the named configurations (docs/embedding.md), then the torch.nn.EmbeddingBag
# baseline in the same call, then a comparison JSON ($OUT/tbe_comparison.json).
#   TBE_CONFIGS="C2 C4" scripts/gpu/bench_tbe.sh build/cuda   # a subset
set -uo pipefail
build_dir="${1:-build/cuda}"
parity="$build_dir/bin/parity"
: "${OUT:?OUT must be set}"
here="$(dirname "$0")"
# shellcheck source=common.sh
source "$here/common.sh"  # step NAME COMMAND..., failed
reps="${TBE_REPS:-30}"
configs="${TBE_CONFIGS:-C2 C2_fp16 C2_zipf1.15 C6 C4 C1 C3 C5 C7 BC}"
for c in $configs; do
  case "$c" in
    C2_fp16) args=(--config C2 --dtype fp16) ;;
    C2_zipf1.15) args=(--config C2 --zipf 1.15) ;;
    C2_zipf1.05) args=(--config C2 --zipf 1.05) ;;
    *) args=(--config "$c") ;;
  esac
  step "tbe_$c" "$parity" bench tbe "${args[@]}" --reps "$reps" --warmup 5 --out "$OUT/tbe_$c.json"
done
if python3 -c "import torch, triton" 2>/dev/null; then
  step tbe_torch python3 "$here/torch_tbe_baseline.py" --configs "${TBE_TORCH_CONFIGS:-C2,C2_fp16,C2_zipf1.15,C4,C1}" \
    --out "$OUT/tbe_torch.json"
else
  echo "---- tbe_torch: skipped (torch/triton not importable)"
fi
step tbe_compare python3 "$here/compare_tbe.py" --dir "$OUT" --out "$OUT/tbe_comparison.json"
exit $failed
