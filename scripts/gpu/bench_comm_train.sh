#!/usr/bin/env bash
# Distributed-training piece of the device run (called by run_all.sh with the build dir as $1,
# $OUT set; piece name "comm_train"): issue 17's one-H200 target, "the NCCL backend with one rank
# runs the trainer with <= 2% overhead against the single-process path". In one process,
# `parity bench train --comm nccl` times the single-process step and the distributed step on one
# NCCL rank (dlrm-kaggle, bf16, batch 65536, the same synthetic batch resident on the device) in
# alternating rounds of equal step counts and writes both medians and the overhead in percent.
# Before it, the NCCL trainer's GPU tests (one rank against the single-process GPU model, bit for
# bit) when parity_nccl_tests was built; after it, `parity bench comm` on one NCCL rank.
#   COMM_TRAIN_BATCH=65536 COMM_TRAIN_STEPS=100 COMM_TRAIN_ROUNDS=10 scripts/gpu/bench_comm_train.sh build/cuda
set -uo pipefail
build_dir="${1:-build/cuda}"
parity="$build_dir/bin/parity"
: "${OUT:?OUT must be set}"
here="$(dirname "$0")"
# shellcheck source=common.sh
source "$here/common.sh"  # step NAME COMMAND..., failed
batch="${COMM_TRAIN_BATCH:-65536}"
steps="${COMM_TRAIN_STEPS:-100}"
rounds="${COMM_TRAIN_ROUNDS:-10}"
nccl_tests=""
for candidate in "$build_dir/tests/parity_nccl_tests" "$build_dir/tests/dist/parity_nccl_tests"; do
  if [[ -x "$candidate" ]]; then nccl_tests="$candidate"; break; fi
done
if [[ -n "$nccl_tests" ]]; then
  step nccl_tests "$nccl_tests" --gtest_brief=1
else
  echo "---- nccl_tests: skipped (parity_nccl_tests not built: add it to --targets)"
fi
result="$OUT/comm_train_dlrm_kaggle_bf16.json"
step comm_train_dlrm_kaggle_bf16 "$parity" bench train --model dlrm-kaggle --device cuda --batch "$batch" \
  --precision bf16 --steps "$steps" --rounds "$rounds" --comm nccl --out "$result"
if [[ -f "$result" ]]; then
  python3 - "$result" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
verdict = "met" if r["overhead_percent"] <= 2.0 else "NOT met"
print(f"---- verdict: NCCL one rank {r['median_distributed_ms']:.3f} ms vs single process "
      f"{r['median_single_ms']:.3f} ms per step: overhead {r['overhead_percent']:+.2f}% "
      f"(target <= 2%: {verdict}); first-step loss difference {r['first_loss_difference']}")
PY
fi
step comm_nccl_one_rank "$parity" bench comm --backend nccl --max-bytes 256MiB --reps 10 \
  --out "$OUT/comm_nccl_one_rank.json"
exit $failed
