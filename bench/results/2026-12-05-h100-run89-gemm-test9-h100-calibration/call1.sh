#!/bin/bash
# Call 1 (named nvidia-h200; the device may be an H100): GPU tests of the Gemm run path (the hardware now
# resolved from the device), GEMM test suite 9 (committed unmeasured) scored once with the device's own
# model (scripts/gpu/bench_gemm_test.sh: GEMM_TEST_HW from the device name; the H200 model's picks scored
# too where the device is not an H200), the selection latency, the TBE forward sweep on spent set 12's
# forward misses (development data), and bench gemm-run on dlrm-kaggle with the model's choice.
# Binary built here (Release, sm_90a) from the working tree of this commit, carried: build/carry/main.
T=/tmp/r89c1; mkdir -p $T build/pm
tar -C build/pm -xaf build/carry/main/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt; cat $T/smi.txt
pack() { tar czf $OUT/call1.tgz -C $T . ; }
s=$(date +%s)
timeout 120 build/pm/tests/parity_gpu_tests --gtest_filter='GemmRunGpu.*:HstuLayerGpu.*' > $T/gpu_tests.log 2>&1
echo "gpu tests rc=$? $(grep -E '^\[  (PASSED|FAILED)' $T/gpu_tests.log | tr '\n' ' ')"
OUT=$T GEMM_TEST_SUITE=bench/shapes/gemm_shapes_test9.csv GEMM_TEST_BUDGET_S=210 timeout 300 bash scripts/gpu/bench_gemm_test.sh build/pm > $T/gemm_test.log 2>&1
echo "gemm_test rc=$? $(( $(date +%s) - s ))s"; grep -E "mode (analytical|hybrid)" $T/gemm_test.log; pack
for hw in h100 h200; do timeout 30 build/pm/bin/parity gemm select --hw $hw --latency > $T/latency_$hw.txt 2>&1; echo "latency $hw rc=$? $(grep -E 'aligned shapes \(' $T/latency_$hw.txt)"; done
pack
mkdir -p $T/sweep
OUT=$T/sweep TBE_SWEEP_SET=bench/tbe/test_set_12 TBE_SWEEP_CONFIGS=test_set_12_03,test_set_12_04,test_set_12_08,test_set_12_07,test_set_12_09,test_set_12_01 timeout 200 bash scripts/gpu/tbe_forward_sweep_probe.sh build/pm > $T/sweep.log 2>&1
echo "sweep rc=$? $(( $(date +%s) - s ))s"; pack
OUT=$T GEMM_RUN_MODELS=dlrm-kaggle GEMM_RUN_CHOICES=model timeout 150 bash scripts/gpu/bench_gemm_run.sh build/pm > $T/gemm_run.log 2>&1
echo "gemm_run rc=$? $(( $(date +%s) - s ))s"; tail -4 $T/gemm_run.log; pack
