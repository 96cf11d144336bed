#!/usr/bin/env bash
# `parity bench comm` end to end: 4 MPI ranks sweep 8 B..4 MiB, write the results and calibration
# JSON; the fit is redone from the results file; bad flags exit 2 naming the flag.
# Usage: bench_comm_cli_test.sh MPIEXEC PARITY_BINARY
set -u
mpiexec=$1
parity=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

timeout 120 "$mpiexec" --allow-run-as-root --oversubscribe -np 4 "$parity" bench comm --backend mpi \
  --max-bytes 4MiB --step-factor 4 --reps 5 --warmup 1 --out "$dir/results.json" \
  --calibration-out "$dir/calibration.json" >"$dir/log" 2>&1 || { cat "$dir/log"; fail "bench comm exited non-zero"; }
cat "$dir/log"
grep -q '"benchmark": "comm"' "$dir/results.json" || fail "results JSON lacks the benchmark name"
grep -q '"busbw_gbps"' "$dir/results.json" || fail "results JSON lacks busbw"
grep -q '"schema": "parity.comm_calibration/1"' "$dir/calibration.json" || fail "calibration schema missing"
for c in all_reduce all_gather reduce_scatter all_to_all; do
  grep -q "\"$c\"" "$dir/calibration.json" || fail "calibration lacks $c"
done
[ "$(grep -c '^all_reduce ' "$dir/log")" -ge 2 ] || fail "table has no all_reduce rows"

"$parity" bench comm --fit-from "$dir/results.json" --calibration-out "$dir/refit.json" >"$dir/refit.log" 2>&1 \
  || { cat "$dir/refit.log"; fail "--fit-from exited non-zero"; }
grep -q '"bus_bandwidth_gbps"' "$dir/refit.json" || fail "refit lacks bus_bandwidth_gbps"

"$parity" bench comm --backend local --step-factor 1 >"$dir/bad.log" 2>&1
code=$?
[ "$code" -eq 2 ] || fail "--step-factor 1 exited $code, expected 2"
grep -q -- "--step-factor: 1 must be > 1" "$dir/bad.log" || { cat "$dir/bad.log"; fail "message does not name the flag"; }
echo PASS
