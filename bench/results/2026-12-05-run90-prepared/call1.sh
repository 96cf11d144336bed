#!/bin/bash
# Call 1 (prepared; not yet run): GPU tests of the backward, GEMM test suite 10, the selection latency.
# 0. The GPU tests of the backward and the radix sorts (the vendor sort's bit-for-bit tests among them).
# 1. GEMM test suite 10 (seed 20261210, committed unmeasured in 2d6223e) scored once with the device's
#    own model, the heuristic and the hybrid in the same call (scripts/gpu/bench_gemm_test.sh).
# 2. Selection latency on the device host, with OpenBLAS's thread pool as it is and with one thread
#    (OpenBLAS's own variable, for the diagnosis only: its idle workers spin for a while after the
#    library loads, inside the short latency run), and the host's CPU (lscpu).
# Binary built here (Release, sm_90a) from the working tree of this commit, carried: build/carry/main.
T=/tmp/r90c1; mkdir -p $T build/pm
tar -C build/pm -xaf build/carry/main/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt; cat $T/smi.txt
lscpu > $T/lscpu.txt; grep -E "Model name|^CPU\(s\)|Thread" $T/lscpu.txt
pack() { tar czf $OUT/call1.tgz -C $T . ; }
P=build/pm/bin/parity; s=$(date +%s)
timeout 150 build/pm/tests/parity_gpu_tests --gtest_filter='GpuTbeBackward*:*RadixSort*' > $T/gpu_tests.log 2>&1
echo "gpu tests rc=$? $(grep -E '^\[  (PASSED|FAILED)' $T/gpu_tests.log | tr '\n' ' ')"
hw=$(nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && echo h200 || echo h100)
OUT=$T GEMM_TEST_SUITE=bench/shapes/gemm_shapes_test10.csv GEMM_TEST_BUDGET_S=220 timeout 320 bash scripts/gpu/bench_gemm_test.sh build/pm > $T/gemm_test.log 2>&1
echo "gemm_test rc=$? $(( $(date +%s) - s ))s"; grep -E "mode (analytical|hybrid)" $T/gemm_test.log; pack
for threads in default 1; do
  if [ $threads = default ]; then timeout 30 $P gemm select --hw $hw --latency > $T/latency_${hw}_$threads.txt 2>&1
  else OPENBLAS_NUM_THREADS=1 timeout 30 $P gemm select --hw $hw --latency > $T/latency_${hw}_$threads.txt 2>&1; fi
  echo "latency openblas=$threads: $(grep -E 'aligned shapes \(|thread CPU' $T/latency_${hw}_$threads.txt | tr -s ' ' | tr '\n' '|')"
done; pack
