#!/bin/bash
# Run 90's second call (the same warm H200 machine, right after call_a2.sh): the host's CPU and the
# GEMM selection latency (h200 model, 10000 unseen shapes) with OpenBLAS's pool as it is and with one
# thread, twice each; one long run (200000 shapes); one run pinned to a single CPU with one thread.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
P=build/pb/bin/parity
[ -x $P ] || { mkdir -p build/pb; tar -C build/pb -xaf build/carry/branch/prebuilt.tar.xz; }
T=$OUT
lscpu > "$T/lscpu.txt"; grep -E "Model name|^CPU\(s\)|Thread|Core\(s\)|Socket|MHz" "$T/lscpu.txt"
for r in 1 2; do
  for th in default 1; do
    if [ $th = default ]; then timeout 30 $P gemm select --hw h200 --latency > "$T/lat_${th}_$r.txt" 2>&1
    else OPENBLAS_NUM_THREADS=1 timeout 30 $P gemm select --hw h200 --latency > "$T/lat_${th}_$r.txt" 2>&1; fi
  done
done
timeout 40 $P gemm select --hw h200 --latency --latency-samples 200000 > "$T/lat_long.txt" 2>&1
taskset -c 2 env OPENBLAS_NUM_THREADS=1 timeout 30 $P gemm select --hw h200 --latency > "$T/lat_pinned.txt" 2>&1
