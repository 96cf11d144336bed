#!/bin/bash
# Call H (binary with the model's no-split rule for K-loops of at most two tiles): GEMM test suite 12 (seed
# 20261214, committed unmeasured) scored once on this device with its own calibration, then the selection latency.
T=/tmp/r93h; mkdir -p $T build/pm
[ -x build/pm/bin/parity ] || tar -C build/pm -xaf build/carry/main/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt; cat $T/smi.txt
lscpu > $T/lscpu.txt
pack() { tar czf $OUT/call_h.tgz -C $T . ; }
P=build/pm/bin/parity; s=$(date +%s)
hw=$(nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && echo h200 || echo h100)
( while sleep 20; do pack; done ) & packer=$!
OUT=$T GEMM_TEST_HW=$hw GEMM_TEST_SUITE=bench/shapes/gemm_shapes_test12.csv GEMM_TEST_BUDGET_S=200 timeout 330 bash scripts/gpu/bench_gemm_test.sh build/pm > $T/gemm_test.log 2>&1
echo "gemm_test rc=$? $(( $(date +%s) - s ))s"; grep -E "mode (analytical|hybrid)|geomean" $T/gemm_test.log | head -20; kill $packer; pack
for top in 5 1; do
  timeout 30 $P gemm select --hw $hw --latency --top $top >> $T/latency_${hw}_top$top.txt 2>&1
  echo "latency top $top: $(grep -E 'p50 .*max|aligned shapes \(' $T/latency_${hw}_top$top.txt | tail -3 | tr -s ' ' | tr '\n' '|')"
done; pack
