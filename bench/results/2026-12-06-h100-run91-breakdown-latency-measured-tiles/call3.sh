#!/bin/bash
# Call 3: GEMM test suite 10 scored once (analytical and hybrid, cuBLASLt's heuristic beside them), then
# the forward sweep of every TBE kernel on spent set 13's three forward misses (is kAuto's choice the
# fastest?).
T=/tmp/r91c3; mkdir -p $T build/pm
[ -x build/pm/bin/parity ] || tar -C build/pm -xaf build/carry/main/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt; cat $T/smi.txt
pack() { tar czf $OUT/call3.tgz -C $T . ; }
s=$(date +%s)
OUT=$T GEMM_TEST_SUITE=bench/shapes/gemm_shapes_test10.csv GEMM_TEST_BUDGET_S=220 timeout 400 bash scripts/gpu/bench_gemm_test.sh build/pm > $T/gemm_test.log 2>&1
echo "gemm_test rc=$? $(( $(date +%s) - s ))s"; grep -E "mode (analytical|hybrid)|geomean" $T/gemm_test.log | head -20; pack
left=$(( 560 - ($(date +%s) - s) ))
if [ $left -gt 60 ]; then
  mkdir -p $T/sweep
  OUT=$T/sweep TBE_SWEEP_SET=bench/tbe/test_set_13 TBE_SWEEP_CONFIGS=test_set_13_03,test_set_13_05,test_set_13_06 \
    timeout $((left - 10)) bash scripts/gpu/tbe_forward_sweep_probe.sh build/pm > $T/sweep.log 2>&1
  echo "sweep rc=$? $(( $(date +%s) - s ))s"; tail -30 $T/sweep.log
fi
pack
