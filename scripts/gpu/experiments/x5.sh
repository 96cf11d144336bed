#!/usr/bin/env bash
# Device call 5 of session 3 (experiment): chunk kernel with position facts staged in shared
# memory (broadcast loads instead of shuffles), histogram with all loads first. Writes $OUT/x5/.
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
export PARITY_DATA_DIR=$PWD/data
B=/tmp/pb; mkdir -p $B; tar -C $B -xzf build/carry/prebuilt.tar.gz
P=$B/bin/parity; R=$OUT/x5; mkdir -p $R
T0=$SECONDS
(timeout 200 $B/tests/parity_gpu_tests --gtest_filter='GpuTbe*:GpuRadixSort*' 2>&1 | grep -E "OK|FAIL|PASSED|Failure|Expected|Actual|Which is|seed|error|trace" | tail -60) > $R/tests.log
run() {
  local name=$1; shift
  echo "== $name" >> $R/sweep.log
  timeout 60 $P bench tbe "$@" --reps 20 --warmup 3 --backward-variant row >> $R/sweep.log 2>&1
}
run C2 --config C2
run C2_sgd --config C2 --optimizer sgd
run C4 --config C4
run C2_again --config C2
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
timeout 120 $NCU --clock-control none -k regex:'chunk|radix_hist|combine' --launch-count 5 \
  --metrics gpu__time_duration.sum,dram__bytes_read.sum,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active \
  --csv $P bench tbe --config C2 --reps 1 --warmup 0 --backward-variant row 2>&1 | grep -E '^"[0-9]' | cut -d, -f5,13,15- > $R/ncu_kernels.txt
echo "all $((SECONDS-T0)) s" >> $R/times.txt
