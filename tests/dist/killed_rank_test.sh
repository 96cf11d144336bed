#!/usr/bin/env bash
# Killed-rank test: 4 ranks, rank 2 dies by SIGKILL during all_reduces. Passes when the job ends
# within 30 s with a non-zero exit and its output names rank 2 (mpirun's "process rank 2 ... exited
# on signal 9", or a survivor's "lost rank(s) 2"). `timeout 60` is the hard stop if it hangs.
# Usage: killed_rank_test.sh MPIEXEC FAULT_BINARY
set -u
mpiexec=$1
binary=$2
log=$(mktemp)
start=$(date +%s)
timeout 60 "$mpiexec" --allow-run-as-root --oversubscribe -np 4 "$binary" >"$log" 2>&1
code=$?
elapsed=$(( $(date +%s) - start ))
cat "$log"
echo "killed_rank_test: exit code $code after ${elapsed} s"
source "$(dirname "$0")/killed_rank_verdict.sh"
killed_rank_verdict "$code" "$elapsed" 30 "$log"
fail=$?
rm -f "$log"
exit "$fail"
