#!/usr/bin/env bash
# TBE piece of the device run (called by run_all.sh with the build dir as $1, $OUT set): our
# kernels on the configurations (docs/embedding.md), then the torch.nn.EmbeddingBag baseline on
# the same configurations (read from our results files) in the same call, then a comparison JSON
# ($OUT/tbe_comparison.json).
#   scripts/gpu/bench_tbe.sh build/cuda                      # the named C configurations
#   TBE_MODE=dev scripts/gpu/bench_tbe.sh build/cuda         # issue 13's D1..D7, then the named ones
#   TBE_CONFIGS="D1 C2" scripts/gpu/bench_tbe.sh build/cuda  # a subset
#   TBE_LAYOUT=my_layout.json TBE_BATCH=8192 ...             # a table-layout file too
set -uo pipefail
build_dir="${1:-build/cuda}"
parity="$build_dir/bin/parity"
: "${OUT:?OUT must be set}"
here="$(dirname "$0")"
# shellcheck source=common.sh
source "$here/common.sh"  # step NAME COMMAND..., failed
reps="${TBE_REPS:-30}"
named="C2 C2_fp16 C2_zipf1.15 C6 C4 C1 C3 C5 C7 BC"
case "${TBE_MODE:-named}" in
  named) default_configs="$named" ;;
  dev) default_configs="D1 D2 D3 D4 D5 D6 D7 $named" ;;
  *) echo "bench_tbe.sh: TBE_MODE='${TBE_MODE}' is not one of named, dev" >&2; exit 2 ;;
esac
configs="${TBE_CONFIGS:-$default_configs}"
ran=()
for c in $configs; do
  case "$c" in
    C2_fp16) args=(--config C2 --weights-dtype fp16) ;;
    C2_zipf1.15) args=(--config C2 --zipf 1.15) ;;
    C2_zipf1.05) args=(--config C2 --zipf 1.05) ;;
    *) args=(--config "$c") ;;
  esac
  step "tbe_$c" "$parity" bench tbe "${args[@]}" --reps "$reps" --warmup 5 --out "$OUT/tbe_$c.json"
  [ "$c" != BC ] && ran+=("$OUT/tbe_$c.json")  # BC is C2's shape: torch has nothing to add
done
if [ -n "${TBE_LAYOUT:-}" ]; then
  step tbe_layout "$parity" bench tbe --layout "$TBE_LAYOUT" ${TBE_BATCH:+--batch "$TBE_BATCH"} --reps "$reps" \
    --warmup 5 --out "$OUT/tbe_layout.json"
  ran+=("$OUT/tbe_layout.json")
fi
if python3 -c "import torch, triton" 2>/dev/null; then
  step tbe_torch python3 "$here/torch_tbe_baseline.py" --from-parity "${ran[@]}" --out "$OUT/tbe_torch.json"
else
  echo "---- tbe_torch: skipped (torch/triton not importable)"
fi
step tbe_compare python3 "$here/compare_tbe.py" --dir "$OUT" --out "$OUT/tbe_comparison.json"
exit $failed
