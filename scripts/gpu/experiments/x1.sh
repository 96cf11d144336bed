#!/usr/bin/env bash
# Device call 1 of session 3 (experiment): correctness of the bag-key backward and the fused
# bounds check, sweeps of the temporary PARITY_X_* knobs, ncu of chunk + bounds kernels, and the
# GEMM extra calibration shapes. Writes into $OUT/x1/.
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
export PARITY_DATA_DIR=$PWD/data
B=/tmp/pb; mkdir -p $B; tar -C $B -xzf build/carry/prebuilt.tar.gz
P=$B/bin/parity; R=$OUT/x1; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi.txt
T0=$SECONDS
(timeout 150 $B/tests/parity_gpu_tests --gtest_filter='GpuTbe*:GpuRadixSort*' 2>&1 | tail -40) > $R/tests.log
echo "tests $((SECONDS-T0)) s" >> $R/times.txt
(timeout 200 $P gemm measure --shapes bench/shapes/gemm_shapes_calibration_extra.csv \
   --out $R/gemm_measurements_calibration_extra.json --hw h200 --time-budget-s 150 --reps 30 2>&1 | tail -40) > $R/gemm_measure.log
gzip -f $R/gemm_measurements_calibration_extra.json
echo "gemm $((SECONDS-T0)) s" >> $R/times.txt
run() {  # NAME ENV... -- bench args
  local name=$1; shift
  echo "== $name" >> $R/sweep.log
  env "$@" timeout 60 $P bench tbe --config C2 --reps 20 --warmup 3 --backward-variant row >> $R/sweep.log 2>&1
}
run base_poskey PARITY_X_BAGKEY=0
run bagkey PARITY_X_BAGKEY=1
run bagkey_hint1 PARITY_X_GRADHINT=1
run bagkey_hint2 PARITY_X_GRADHINT=2
run bagkey_chunk128 PARITY_X_CHUNK=128
run bagkey_chunk512 PARITY_X_CHUNK=512
run bagkey_grid4 PARITY_X_GRID=4
run bagkey_again PARITY_X_BAGKEY=1
echo "sweep $((SECONDS-T0)) s" >> $R/times.txt
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
if [[ -n "$NCU" ]]; then
  for v in "PARITY_X_BAGKEY=0" "PARITY_X_BAGKEY=1" "PARITY_X_GRADHINT=1" "PARITY_X_CHUNK=128"; do
    echo "== $v" >> $R/ncu_chunk.txt
    env $v timeout 90 $NCU --clock-control none -k regex:'chunk|linearize|bounds' --launch-count 4 \
      --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active \
      --csv $P bench tbe --config C2 --reps 1 --warmup 0 --backward-variant row 2>&1 | grep -E '^"[0-9]' | cut -d, -f5,13,15- >> $R/ncu_chunk.txt
  done
  for c in C2 C4; do
    echo "== $c" >> $R/ncu_bounds.txt
    timeout 90 $NCU --clock-control none -k regex:bounds --launch-count 1 --section SpeedOfLight --section Occupancy \
      --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis \
      $P bench tbe --config $c --reps 1 --warmup 0 --backward-variant row 2>&1 | grep -vE '^==PROF==|^\s*$' | tail -120 >> $R/ncu_bounds.txt
  done
fi
echo "ncu $((SECONDS-T0)) s" >> $R/times.txt
