#!/usr/bin/env bash
# Device call 6 of session 3 (experiment): A/B/C of the chunk kernel in one call, interleaved:
# A = position facts in shared memory; B = A + grad/weight loads pinned (asm volatile);
# C = B + fast divide/sqrt in the row-wise update. Writes $OUT/x6/.
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
export PARITY_DATA_DIR=$PWD/data
B=/tmp/pb; mkdir -p $B; tar -C $B -xzf build/carry/variants.tar.gz
R=$OUT/x6; mkdir -p $R
(timeout 200 $B/parity_gpu_tests --gtest_filter='GpuTbe*:GpuRadixSort*' 2>&1 | grep -E "OK|FAIL|PASSED|Failure|Expected|Actual|Which is|seed|error|trace" | tail -60) > $R/tests.log
for round in 1 2; do
  for v in A B C; do
    echo "== $v round $round" >> $R/sweep.log
    timeout 60 $B/parity_$v bench tbe --config C2 --reps 20 --warmup 3 --backward-variant row 2>&1 | grep -E "backward|fwd|forward  " >> $R/sweep.log
  done
done
for v in A C; do
  echo "== $v sgd" >> $R/sweep.log
  timeout 60 $B/parity_$v bench tbe --config C2 --optimizer sgd --reps 20 --warmup 3 --backward-variant row 2>&1 | grep -E "backward|fwd" >> $R/sweep.log
done
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
for v in A B C; do
  echo "== $v" >> $R/ncu.txt
  timeout 60 $NCU --clock-control none -k regex:'chunk' --launch-count 1 \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active \
    --csv $B/parity_$v bench tbe --config C2 --reps 1 --warmup 0 --backward-variant row 2>&1 | grep -E '^"[0-9]' | cut -d, -f13,15- >> $R/ncu.txt
done
CUOBJ=$(command -v cuobjdump || ls /usr/local/cuda/bin/cuobjdump 2>/dev/null)
[[ -n "$CUOBJ" ]] && $CUOBJ -sass -fun '_ZN6parity10gpu_device25tbe_backward_chunk_kernelINS0_6F32TagElLi1ELi2EEEvNS0_14BackwardParamsIT0_EE' $B/parity_C > $R/sass_C.txt 2>&1
