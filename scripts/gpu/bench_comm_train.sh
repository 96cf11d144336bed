#!/usr/bin/env bash
# Distributed-training piece of the device run (called by run_all.sh with the build dir as $1,
# $OUT set; piece name "comm_train"): issue 17's one-H200 target, "the NCCL backend with one rank
# runs the trainer with <= 2% overhead against the single-process path". In one process,
# `parity bench train --comm nccl` times the single-process step and the distributed step on one
# NCCL rank (dlrm-kaggle, bf16, batch 65536, the same synthetic batch resident on the device) in
# alternating rounds of equal step counts and writes both medians and the overhead in percent.
# Before it, the NCCL trainer's GPU tests (one rank against the single-process GPU model, bit for
# bit) when parity_nccl_tests was built; after it, `parity bench comm` on one NCCL rank (8 B-64 MiB).
# About 30-60 s in all; the last line starting "comm_train:" is the one-line summary.
#   COMM_TRAIN_BATCH=65536 COMM_TRAIN_STEPS=100 COMM_TRAIN_ROUNDS=10 scripts/gpu/bench_comm_train.sh build/cuda
set -uo pipefail
build_dir="${1:-build/cuda}"
parity="$build_dir/bin/parity"
: "${OUT:?OUT must be set}"
here="$(dirname "$0")"
# shellcheck source=common.sh
source "$here/common.sh"  # step NAME COMMAND..., failed
# The CLI bootstraps NCCL over MPI when the build has it: one process is an Open MPI singleton,
# which must be allowed to run as root (the device runs as root; mpirun's --allow-run-as-root).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
batch="${COMM_TRAIN_BATCH:-65536}"
steps="${COMM_TRAIN_STEPS:-100}"
rounds="${COMM_TRAIN_ROUNDS:-10}"
nccl_tests=""
for candidate in "$build_dir/tests/parity_nccl_tests" "$build_dir/tests/dist/parity_nccl_tests"; do
  if [[ -x "$candidate" ]]; then nccl_tests="$candidate"; break; fi
done
if [[ -n "$nccl_tests" ]]; then
  step nccl_train_tests "$nccl_tests" --gtest_brief=1 --gtest_filter='NcclTrainStep.*'
else
  echo "---- nccl_tests: skipped (parity_nccl_tests not built: add it to --targets)"
fi
result="$OUT/comm_train_dlrm_kaggle_bf16.json"
step comm_train_dlrm_kaggle_bf16 "$parity" bench train --model dlrm-kaggle --device cuda --batch "$batch" \
  --precision bf16 --steps "$steps" --rounds "$rounds" --comm nccl --out "$result"
step comm_nccl_one_rank "$parity" bench comm --backend nccl --max-bytes 64MiB --step-factor 4 --reps 5 \
  --out "$OUT/comm_nccl_one_rank.json"
if [[ -f "$result" ]]; then
  python3 - "$result" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
verdict = "met" if r["overhead_percent"] <= 2.0 else "NOT met"
print(f"comm_train: {r['model']} {r['precision']} batch {r['batch_size']}: {r['backend']} {r['ranks']} rank "
      f"{r['median_distributed_ms']:.3f} ms vs single process {r['median_single_ms']:.3f} ms per step "
      f"(medians of {len(r['distributed_step_ms'])} each): overhead {r['overhead_percent']:+.2f}% "
      f"(target <= 2%: {verdict}); first-step loss difference {r['first_loss_difference']}")
PY
fi
exit $failed
