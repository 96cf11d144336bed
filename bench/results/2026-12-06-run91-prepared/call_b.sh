#!/bin/bash
# Call B: GEMM test suite 10 scored once and the selection latency with OpenBLAS's pool as it is and
# with one thread, plus the host's CPU (call 1 without its TBE tests, which call A runs).
T=/tmp/r90b; mkdir -p $T build/pm
[ -x build/pm/bin/parity ] || tar -C build/pm -xaf build/carry/main/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt; cat $T/smi.txt
lscpu > $T/lscpu.txt; grep -E "Model name|^CPU\(s\)|Thread" $T/lscpu.txt
pack() { tar czf $OUT/call_b.tgz -C $T . ; }
P=build/pm/bin/parity; s=$(date +%s)
hw=$(nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && echo h200 || echo h100)
for threads in default 1; do
  if [ $threads = default ]; then timeout 30 $P gemm select --hw $hw --latency > $T/latency_${hw}_$threads.txt 2>&1
  else OPENBLAS_NUM_THREADS=1 timeout 30 $P gemm select --hw $hw --latency > $T/latency_${hw}_$threads.txt 2>&1; fi
  echo "latency openblas=$threads: $(grep -E 'aligned shapes \(|thread CPU' $T/latency_${hw}_$threads.txt | tr -s ' ' | tr '\n' '|')"
done; pack
OUT=$T GEMM_TEST_SUITE=bench/shapes/gemm_shapes_test10.csv GEMM_TEST_BUDGET_S=220 timeout 400 bash scripts/gpu/bench_gemm_test.sh build/pm > $T/gemm_test.log 2>&1
echo "gemm_test rc=$? $(( $(date +%s) - s ))s"; grep -E "mode (analytical|hybrid)" $T/gemm_test.log; pack
