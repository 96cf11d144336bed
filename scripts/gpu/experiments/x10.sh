#!/usr/bin/env bash
# Device call 10 of session 3 (experiment): G = run 9's binary (969808a); H = G + block
# reductions by warp 0's shuffles and row counts staged in shared memory. Writes $OUT/x10/.
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
export PARITY_DATA_DIR=$PWD/data
B=/tmp/pb; mkdir -p $B; tar -C $B -xzf build/carry/variants.tar.gz
R=$OUT/x10; mkdir -p $R
(timeout 200 $B/parity_gpu_tests --gtest_filter='GpuTbe*:GpuRadixSort*:GpuCopy*:GpuTiming*' 2>&1 | grep -E "OK|FAIL|PASSED|Failure|Expected|Actual|Which is|seed|error|trace" | tail -60) > $R/tests.log
for round in 1 2; do
  for v in G H; do
    echo "== $v round $round" >> $R/sweep.log
    timeout 60 $B/parity_$v bench tbe --config C2 --reps 20 --warmup 3 --backward-variant row 2>&1 | grep -E "backward|fwd|bounds" >> $R/sweep.log
  done
done
for c in C4 BC C7; do
  echo "== H $c" >> $R/sweep.log
  timeout 60 $B/parity_H bench tbe --config $c --reps 20 --warmup 3 --backward-variant row 2>&1 | grep -E "backward|fwd|bounds" >> $R/sweep.log
done
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
for v in G H; do
  echo "== $v" >> $R/ncu.txt
  timeout 60 $NCU --clock-control none -k regex:'bounds' --launch-count 1 --metrics gpu__time_duration.sum \
    --csv $B/parity_$v bench tbe --config C2 --reps 1 --warmup 0 --backward-variant row 2>&1 | grep -E '^"[0-9]' | cut -d, -f13,15- >> $R/ncu.txt
done
