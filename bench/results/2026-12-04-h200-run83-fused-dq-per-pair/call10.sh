#!/bin/bash
# Call 10: GEMM selection latency after the second latency round (31ba7a6), two runs of one binary per device, and the
# TBE bounds-check GPU tests and attention fused-dQ bitwise test on the final binary.
T=/tmp/c10; mkdir -p $T build/prebuilt
tar -C build/prebuilt -xaf build/carry/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt
lscpu > $T/lscpu.txt; uptime > $T/uptime.txt
P=build/prebuilt/bin/parity; G=build/prebuilt/tests/parity_gpu_tests
pack() { tar czf $OUT/all.tgz -C $T . ; }
for r in 1 2; do for hw in h200 mi300x mi350x; do timeout 60 $P gemm select --hw $hw --latency > $T/latency_${hw}_$r.txt 2>&1; echo "latency $hw $r: $(grep -E '^  p50' $T/latency_${hw}_$r.txt | head -1) | aligned: $(grep aligned $T/latency_${hw}_$r.txt | tail -1 | sed 's/.*): //')"; done; done; pack
timeout 120 stdbuf -oL $G --gtest_brief=1 --gtest_filter='GpuTbeBoundsCheck.*:AttentionGpu.FusedDqConversionIsBitwiseTheSeparatePass:*Gemm*' > $T/gpu_tests.log 2>&1
rc=$?; echo "tests rc=$rc $(grep -E '^\[  (PASSED|FAILED)' $T/gpu_tests.log | tr '\n' ' ')"; grep -a "FAILED\|Failure" $T/gpu_tests.log | head
pack
