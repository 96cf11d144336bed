#!/bin/bash
# Call B (binary of this commit; GEMM code of de8d2ad: the legacy model's split partials priced as fp32): GEMM test
# suite 13 (seed 20261215, committed unmeasured in run 93) scored once on this device with its own calibration, both
# modes, then the selection latency; then the GEMM GPU tests.
T=/tmp/r94b; mkdir -p $T build/pm
[ -x build/pm/bin/parity ] || tar -C build/pm -xaf build/carry/main/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt; cat $T/smi.txt
lscpu > $T/lscpu.txt
pack() { tar czf $OUT/call_b.tgz -C $T . ; }
P=build/pm/bin/parity; s=$(date +%s)
hw=$(nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && echo h200 || echo h100)
( while sleep 20; do pack; done ) & packer=$!
OUT=$T GEMM_TEST_HW=$hw GEMM_TEST_SUITE=bench/shapes/gemm_shapes_test13.csv GEMM_TEST_BUDGET_S=180 timeout 240 bash scripts/gpu/bench_gemm_test.sh build/pm > $T/gemm_test.log 2>&1
echo "gemm_test rc=$? $(( $(date +%s) - s ))s"; grep -E "mode (analytical|hybrid)|geomean" $T/gemm_test.log | head -20; kill $packer; pack
for top in 5 1; do
  timeout 30 $P gemm select --hw $hw --latency --top $top >> $T/latency_${hw}_top$top.txt 2>&1
  echo "latency top $top: $(grep -E 'p50 .*max|aligned shapes \(' $T/latency_${hw}_top$top.txt | tail -3 | tr -s ' ' | tr '\n' '|')"
done; pack
timeout 60 build/pm/tests/parity_gpu_tests --gtest_brief=1 --gtest_filter='GemmRunGpu.*' > $T/gemm_gpu_tests.log 2>&1
echo "gemm gpu tests rc=$? $(( $(date +%s) - s ))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' $T/gemm_gpu_tests.log | tr '\n' ' ')"; pack
