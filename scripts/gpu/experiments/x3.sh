#!/usr/bin/env bash
# Device call 3 of session 3 (experiment): double-buffered 16-byte bounds check, chunk length
# sweep with bag keys. Writes into $OUT/x3/.
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
export PARITY_DATA_DIR=$PWD/data
B=/tmp/pb; mkdir -p $B; tar -C $B -xzf build/carry/prebuilt.tar.gz
P=$B/bin/parity; R=$OUT/x3; mkdir -p $R
T0=$SECONDS
(timeout 200 $B/tests/parity_gpu_tests 2>&1 | grep -E "OK|FAIL|PASSED|Failure|Expected|Actual|Which is|seed|error|trace" | tail -80) > $R/tests.log
echo "tests $((SECONDS-T0)) s" >> $R/times.txt
run() {
  local name=$1; shift
  echo "== $name" >> $R/sweep.log
  env "$@" timeout 60 $P bench tbe ${CFG:---config C2} --reps 20 --warmup 3 --backward-variant row >> $R/sweep.log 2>&1
}
run default X=1
run chunk96 PARITY_X_CHUNK=96
run chunk64 PARITY_X_CHUNK=64
run chunk256 PARITY_X_CHUNK=256
run poskey PARITY_X_BAGKEY=0
run default_again X=1
CFG="--config C4" run C4 X=1
CFG="--config C2 --index-dtype int32" run C2_i32 X=1
echo "sweep $((SECONDS-T0)) s" >> $R/times.txt
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
for c in C2 C4; do
  echo "== $c" >> $R/ncu_bounds.txt
  timeout 90 $NCU --clock-control none -k regex:bounds --launch-count 1 --section SpeedOfLight --section Occupancy \
    --section LaunchStats --section WarpStateStats --section SchedulerStats \
    $P bench tbe --config $c --reps 1 --warmup 0 --backward-variant row 2>&1 | grep -vE '^==PROF==|^\s*$' | tail -100 >> $R/ncu_bounds.txt
done
for v in "X=1" "PARITY_X_CHUNK=96"; do
  echo "== $v" >> $R/ncu_chunk.txt
  env $v timeout 90 $NCU --clock-control none -k regex:'chunk|combine' --launch-count 2 \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct \
    --csv $P bench tbe --config C2 --reps 1 --warmup 0 --backward-variant row 2>&1 | grep -E '^"[0-9]' | cut -d, -f5,13,15- >> $R/ncu_chunk.txt
done
echo "ncu $((SECONDS-T0)) s" >> $R/times.txt
