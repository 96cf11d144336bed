#!/usr/bin/env bash
# Device call 7 of session 3 (experiment): C/D of the chunk kernel in one call, interleaved:
# C = facts in shared memory + fast divide/sqrt; D = C + unconditional window update (no
# collective shuffles) and a 32-bit bag division. Writes $OUT/x7/.
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
export PARITY_DATA_DIR=$PWD/data
B=/tmp/pb; mkdir -p $B; tar -C $B -xzf build/carry/variants.tar.gz
R=$OUT/x7; mkdir -p $R
(timeout 200 $B/parity_gpu_tests --gtest_filter='GpuTbe*:GpuRadixSort*' 2>&1 | grep -E "OK|FAIL|PASSED|Failure|Expected|Actual|Which is|seed|error|trace" | tail -60) > $R/tests.log
for round in 1 2; do
  for v in C D; do
    echo "== $v round $round" >> $R/sweep.log
    timeout 60 $B/parity_$v bench tbe --config C2 --reps 20 --warmup 3 --backward-variant row 2>&1 | grep -E "backward|fwd|forward  " >> $R/sweep.log
  done
done
for v in C D; do
  echo "== $v sgd" >> $R/sweep.log
  timeout 60 $B/parity_$v bench tbe --config C2 --optimizer sgd --reps 20 --warmup 3 --backward-variant row 2>&1 | grep -E "backward|fwd" >> $R/sweep.log
done
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
for v in C D; do
  echo "== $v" >> $R/ncu.txt
  timeout 60 $NCU --clock-control none -k regex:'chunk' --launch-count 1 \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active \
    --csv $B/parity_$v bench tbe --config C2 --reps 1 --warmup 0 --backward-variant row 2>&1 | grep -E '^"[0-9]' | cut -d, -f13,15- >> $R/ncu.txt
done
