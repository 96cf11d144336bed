#!/bin/bash
# Call 1: the GPU tests of both sort options (the counts-in-scatter layout of 48cf426 has not run on a
# GPU yet); where the deterministic TBE step's time goes (ncu per kernel, caches kept between kernels)
# on spent set 13's one-hot SGD step misses (00, 04) and a narrow-rows SGD layout (07); the GEMM
# selection latency on this host.
T=/tmp/r91c1; mkdir -p $T build/pm
[ -x build/pm/bin/parity ] || tar -C build/pm -xaf build/carry/main/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt; cat $T/smi.txt
lscpu > $T/lscpu.txt; grep -E "Model name|^CPU\(s\)" $T/lscpu.txt
pack() { tar czf $OUT/call1.tgz -C $T . ; }
P=build/pm/bin/parity; s=$(date +%s)
timeout 120 build/pm/tests/parity_gpu_tests --gtest_filter='GpuRadixSort*:GpuTbeBackwardSortCounts*:GpuTbeBackwardVendorSort*' \
  > $T/gpu_tests.log 2>&1; echo "gpu tests rc=$? $(grep -E '^\[  (PASSED|FAILED)' $T/gpu_tests.log | tr '\n' ' ') $(( $(date +%s) - s ))s"
hw=$(nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && echo h200 || echo h100)
# Top 5 per tile (gemm select's list) and top 1 (what Gemm::create's model choice asks), twice each.
for top in 5 1 5 1; do
  timeout 30 $P gemm select --hw $hw --latency --top $top >> $T/latency_${hw}_top$top.txt 2>&1
  echo "latency top $top: $(grep -E 'aligned shapes \(|thread CPU' $T/latency_${hw}_top$top.txt | tail -3 | tr -s ' ' | tr '\n' '|')"
done; pack
mkdir -p $T/breakdown
OUT=$T/breakdown TBE_BREAKDOWN_SET=bench/tbe/test_set_13 TBE_BREAKDOWN_CONFIGS=test_set_13_00,test_set_13_04,test_set_13_07 \
  TBE_BREAKDOWN_CACHE=none timeout 300 bash scripts/gpu/tbe_kernel_breakdown_probe.sh build/pm > $T/breakdown.log 2>&1
echo "breakdown rc=$? $(( $(date +%s) - s ))s"; cat $T/breakdown/tbe_breakdown.txt; pack
