#!/usr/bin/env bash
# Same-learning piece of the device run (run_all.sh passes the build dir as $1, $OUT set): Parity
# trains `tiny` and `dlrm-kaggle --table-cap 100000` on the GPU from a synthetic dataset, writing
# its initial parameters; the PyTorch reference (scripts/compare/torch_same_learning.py) starts
# from those parameters, reads the same files in the same order with the same hyper-parameters,
# and both evaluation NEs are compared (target: within 0.5% relative).
#   SAME_SAMPLES=10000000 SAME_MODELS="tiny dlrm-kaggle" scripts/gpu/bench_same_learning.sh build/cuda
set -uo pipefail
build_dir="${1:-build/cuda}"
parity="$build_dir/bin/parity"
: "${OUT:?OUT must be set}"
here="$(dirname "$0")"
# shellcheck source=common.sh
source "$here/common.sh"  # step NAME COMMAND..., failed
samples="${SAME_SAMPLES:-10000000}"
work="$(mktemp -d)"
for model in ${SAME_MODELS:-tiny dlrm-kaggle}; do
  cap=(); batch=4096
  if [[ "$model" == dlrm-kaggle ]]; then cap=(--table-cap 100000); batch=8192; fi
  step "same_data_$model" "$parity" data generate --model "$model" "${cap[@]}" --samples "$samples" \
    --out "$work/data_$model"
  step "same_parity_$model" "$parity" train --model "$model" "${cap[@]}" --data "$work/data_$model" \
    --device cuda --batch "$batch" --out "$work/run_$model" --export-initial "$work/run_$model/initial.params"
  cp "$work/run_$model/summary.json" "$OUT/same_learning_${model}_parity_summary.json" 2>/dev/null
  if python3 -c "import torch" 2>/dev/null; then
    step "same_torch_$model" python3 "$here/../compare/torch_same_learning.py" --data "$work/data_$model" \
      --params "$work/run_$model/initial.params" --parity-summary "$work/run_$model/summary.json" \
      --batch "$batch" --device cuda --out "$OUT/same_learning_$model.json"
  else
    echo "---- same_torch_$model: skipped (torch not importable)"
  fi
done
rm -rf "$work"
exit $failed
