#!/usr/bin/env bash
# Device call 4 of session 3 (experiment): radix sort (512-thread scatter in dynamic shared
# memory, histogram with all loads first), bounds check with dynamic shared boundaries, warm-cache
# bounds timing, ncu stall breakdown of the chunk kernel. Writes into $OUT/x4/.
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
export PARITY_DATA_DIR=$PWD/data
B=/tmp/pb; mkdir -p $B; tar -C $B -xzf build/carry/prebuilt.tar.gz
P=$B/bin/parity; R=$OUT/x4; mkdir -p $R
T0=$SECONDS
(timeout 200 $B/tests/parity_gpu_tests --gtest_filter='GpuTbe*:GpuRadixSort*' 2>&1 | grep -E "OK|FAIL|PASSED|Failure|Expected|Actual|Which is|seed|error|trace" | tail -60) > $R/tests.log
echo "tests $((SECONDS-T0)) s" >> $R/times.txt
run() {
  local name=$1; shift
  echo "== $name" >> $R/sweep.log
  timeout 60 $P bench tbe "$@" --reps 20 --warmup 3 --backward-variant row >> $R/sweep.log 2>&1
}
run C2 --config C2
run C2_warm --config C2 --cache warm
run C4 --config C4
run C4_warm --config C4 --cache warm
run C2_again --config C2
echo "sweep $((SECONDS-T0)) s" >> $R/times.txt
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
timeout 120 $NCU --clock-control none -k regex:'chunk|radix|linearize|combine|bounds' --launch-count 18 \
  --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active \
  --csv $P bench tbe --config C2 --reps 1 --warmup 0 --backward-variant row 2>&1 | grep -E '^"[0-9]' | cut -d, -f5,13,15- > $R/ncu_kernels.txt
timeout 150 $NCU --clock-control none -k regex:chunk --launch-count 1 --section WarpStateStats --section SchedulerStats \
  --section MemoryWorkloadAnalysis --section SourceCounters --section Occupancy \
  $P bench tbe --config C2 --reps 1 --warmup 0 --backward-variant row 2>&1 | grep -vE '^==PROF==|^\s*$' | tail -150 > $R/ncu_chunk_detail.txt
echo "ncu $((SECONDS-T0)) s" >> $R/times.txt
