#!/usr/bin/env bash
# Device call 2 of session 3 (experiment): pipelined chunk kernel (cp.async ring) and the bounds
# check with all first loads issued together. Writes into $OUT/x2/.
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
export PARITY_DATA_DIR=$PWD/data
B=/tmp/pb; mkdir -p $B; tar -C $B -xzf build/carry/prebuilt.tar.gz
P=$B/bin/parity; R=$OUT/x2; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi.txt
T0=$SECONDS
(timeout 150 $B/tests/parity_gpu_tests --gtest_filter='GpuTbe*:GpuRadixSort*' 2>&1 | grep -E "OK|FAIL|PASSED|Failure|Expected|Actual|seed|error" | tail -60) > $R/tests.log
(PARITY_X_PIPE=4 timeout 100 $B/tests/parity_gpu_tests --gtest_filter='GpuTbeBackward*' 2>&1 | tail -5) >> $R/tests.log
echo "tests $((SECONDS-T0)) s" >> $R/times.txt
run() {  # NAME ENV... ; config args in CFG
  local name=$1; shift
  echo "== $name" >> $R/sweep.log
  env "$@" timeout 60 $P bench tbe ${CFG:---config C2} --reps 20 --warmup 3 --backward-variant row >> $R/sweep.log 2>&1
}
run pipe8 PARITY_X_PIPE=8
run pipe0_old PARITY_X_PIPE=0
run pipe4 PARITY_X_PIPE=4
run pipe8_chunk128 PARITY_X_CHUNK=128
run pipe8_chunk512 PARITY_X_CHUNK=512
run pipe8_poskey PARITY_X_BAGKEY=0
run pipe0_poskey PARITY_X_BAGKEY=0 PARITY_X_PIPE=0
run pipe8_grid4 PARITY_X_GRID=4
run pipe8_again PARITY_X_PIPE=8
CFG="--config C4" run C4_pipe8 PARITY_X_PIPE=8
CFG="--config C6" run C6_pipe8 PARITY_X_PIPE=8
CFG="--config C2 --zipf 1.15" run C2zipf_pipe8 PARITY_X_PIPE=8
CFG="--config C2 --dtype fp16" run C2fp16_pipe8 PARITY_X_PIPE=8
echo "sweep $((SECONDS-T0)) s" >> $R/times.txt
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
if [[ -n "$NCU" ]]; then
  for v in "PARITY_X_PIPE=8" "PARITY_X_PIPE=4"; do
    echo "== $v" >> $R/ncu_chunk.txt
    env $v timeout 90 $NCU --clock-control none -k regex:'chunk|bounds|radix|linearize|combine' --launch-count 14 \
      --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,launch__registers_per_thread \
      --csv $P bench tbe --config C2 --reps 1 --warmup 0 --backward-variant row 2>&1 | grep -E '^"[0-9]' | cut -d, -f5,13,15- >> $R/ncu_chunk.txt
  done
  for c in C2 C4; do
    echo "== $c" >> $R/ncu_bounds.txt
    timeout 90 $NCU --clock-control none -k regex:bounds --launch-count 1 --section SpeedOfLight --section Occupancy \
      --section LaunchStats --section WarpStateStats --section SchedulerStats \
      $P bench tbe --config $c --reps 1 --warmup 0 --backward-variant row 2>&1 | grep -vE '^==PROF==|^\s*$' | tail -100 >> $R/ncu_bounds.txt
  done
fi
echo "ncu $((SECONDS-T0)) s" >> $R/times.txt
