#!/bin/bash
# Call E (binary with the model's 30 clusters of 4 on the 132-SM Hopper parts, 31905f3): GEMM test suite 14 (seed
# 20261217, committed unmeasured in 537a84d before that change) scored once on this device with its own calibration,
# both modes. Only bin/parity is carried (build/carry/e/parity.tar.xz).
T=/tmp/r94e; mkdir -p $T build/pe
tar -C build/pe -xaf build/carry/e/parity.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt; cat $T/smi.txt
pack() { tar czf $OUT/call_e.tgz -C $T . ; }
s=$(date +%s)
hw=$(nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && echo h200 || echo h100)
( while sleep 20; do pack; done ) & packer=$!
OUT=$T GEMM_TEST_HW=$hw GEMM_TEST_SUITE=bench/shapes/gemm_shapes_test14.csv GEMM_TEST_BUDGET_S=180 timeout 250 bash scripts/gpu/bench_gemm_test.sh build/pe > $T/gemm_test.log 2>&1
echo "gemm_test rc=$? $(( $(date +%s) - s ))s"; grep -E "mode (analytical|hybrid)|geomean" $T/gemm_test.log | head -20; kill $packer; pack
