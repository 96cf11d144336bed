#!/usr/bin/env bash
# A rank lost during `parity train --distributed`: 4 ranks train tiny for many epochs; rank 2's
# process gets SIGNAL 2 s after it starts: KILL (dead: mpirun notices and ends the job) or STOP
# (hung: alive but silent; the survivors' collectives time out after --comm-timeout 5 s and name
# it, then they exit without MPI_Finalize, which would wait for it). Passes when the job ends
# within 30 s of the signal with a non-zero exit and a message naming rank 2 (mpirun's "process
# rank 2 ... exited on signal 9", or a survivor's "lost rank(s) 2"). `timeout -s KILL 90` is the
# hard stop if it hangs.
# Usage: train_killed_rank_test.sh MPIEXEC PARITY_BINARY KILL|STOP
set -u
mpiexec=$1
parity=$2
signal=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# The dataset first, so the kill lands in training.
"$parity" data generate --model tiny --samples 20000 --out "$dir/data" >/dev/null 2>&1 ||
  { echo "FAIL: could not generate the dataset"; exit 1; }
start=$(date +%s)
# Each rank is a shell that execs parity (same PID); rank 2's shell first arms its own kill. A
# stopped rank must be stopped inside training, where the collectives have their timeout: a stop
# during MPI start-up (slower under the sanitizers) would hang MPI_Init itself, so STOP waits longer.
delay=2
[ "$signal" = STOP ] && delay=8
timeout -s KILL 90 "$mpiexec" --allow-run-as-root --oversubscribe -np 4 bash -c '
  if [ "${OMPI_COMM_WORLD_RANK:-}" = 2 ]; then (sleep "$4"; kill -s "$3" $$) & fi
  exec "$0" train --model tiny --batch 96 --distributed --data "$1" --epochs 1000 --out "$2" --comm-timeout 5' \
  "$parity" "$dir/data" "$dir/out" "$signal" "$delay" >"$dir/log" 2>&1
code=$?
elapsed=$(( $(date +%s) - start ))
cat "$dir/log" | tail -20
echo "train_killed_rank_test: exit code $code after ${elapsed} s"
source "$(dirname "$0")/killed_rank_verdict.sh"
killed_rank_verdict "$code" "$elapsed" 32 "$dir/log"
