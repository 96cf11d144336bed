#!/bin/bash
# Call 1: the GPU tests of both sort options (the counts-in-scatter layout of 48cf426 has not run on a
# GPU yet), GEMM test suite 10 scored once (analytical and hybrid), the selection latency on this host.
T=/tmp/r91c1; mkdir -p $T build/pm
[ -x build/pm/bin/parity ] || tar -C build/pm -xaf build/carry/main/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt; cat $T/smi.txt
lscpu > $T/lscpu.txt; grep -E "Model name|^CPU\(s\)" $T/lscpu.txt
git rev-parse HEAD > $T/commit.txt 2>/dev/null || true
pack() { tar czf $OUT/call1.tgz -C $T . ; }
P=build/pm/bin/parity; s=$(date +%s)
timeout 120 build/pm/tests/parity_gpu_tests --gtest_filter='GpuRadixSort*:GpuTbeBackwardSortCounts*:GpuTbeBackwardVendorSort*' \
  > $T/gpu_tests.log 2>&1; echo "gpu tests rc=$? $(grep -E '^\[  (PASSED|FAILED)' $T/gpu_tests.log | tr '\n' ' ') $(( $(date +%s) - s ))s"
hw=$(nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && echo h200 || echo h100)
timeout 30 $P gemm select --hw $hw --latency > $T/latency_$hw.txt 2>&1
echo "latency: $(grep -E 'aligned shapes \(|thread CPU' $T/latency_$hw.txt | tr -s ' ' | tr '\n' '|')"; pack
OUT=$T GEMM_TEST_SUITE=bench/shapes/gemm_shapes_test10.csv GEMM_TEST_BUDGET_S=220 timeout 400 bash scripts/gpu/bench_gemm_test.sh build/pm > $T/gemm_test.log 2>&1
echo "gemm_test rc=$? $(( $(date +%s) - s ))s"; grep -E "mode (analytical|hybrid)|geomean" $T/gemm_test.log | head -20; pack
