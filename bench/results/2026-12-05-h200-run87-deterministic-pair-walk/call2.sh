#!/bin/bash
# Call 2 (H200): GEMM test suite 7 (bench/shapes/gemm_shapes_test7.csv, committed unmeasured) scored once with
# main's selector (7191a23's model: the one suite 6 was made for, which ran on an H100 in run 86), both modes, and
# the selection latency on this device host. Binary built here (Release, sm_90a), carried: build/carry/main.
T=/tmp/r87c2; mkdir -p $T build/pm
tar -C build/pm -xaf build/carry/main/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt; cat $T/smi.txt
pack() { tar czf $OUT/call2.tgz -C $T . ; }
s=$(date +%s)
OUT=$T GEMM_TEST_SUITE=bench/shapes/gemm_shapes_test7.csv GEMM_TEST_BUDGET_S=220 timeout 280 bash scripts/gpu/bench_gemm_test.sh build/pm > $T/gemm_test.log 2>&1
echo "gemm_test rc=$? $(( $(date +%s) - s ))s"; pack
for i in 1 2; do timeout 30 build/pm/bin/parity gemm select --hw h200 --latency > $T/latency_h200_$i.txt 2>&1; echo "latency rc=$? $(grep -E 'aligned shapes \(' $T/latency_h200_$i.txt)"; done
pack
