#!/bin/bash
# Call 1 (named nvidia-h200; the tool gave an H100): GEMM test suite 8 (bench/shapes/gemm_shapes_test8.csv, committed unmeasured in e415f2c) scored once
# with main's selector (24b987b's model: the legacy-latency change suite 8 was made for), both modes, and
# the selection latency on this device host. Binary built here (Release, sm_90a) at 7bb5596, carried: build/carry/main.
T=/tmp/r88c1; mkdir -p $T build/pm
tar -C build/pm -xaf build/carry/main/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt; cat $T/smi.txt
pack() { tar czf $OUT/call1.tgz -C $T . ; }
s=$(date +%s)
OUT=$T GEMM_TEST_SUITE=bench/shapes/gemm_shapes_test8.csv GEMM_TEST_BUDGET_S=220 timeout 280 bash scripts/gpu/bench_gemm_test.sh build/pm > $T/gemm_test.log 2>&1
echo "gemm_test rc=$? $(( $(date +%s) - s ))s"; pack
for i in 1 2; do timeout 30 build/pm/bin/parity gemm select --hw h200 --latency > $T/latency_h200_$i.txt 2>&1; echo "latency rc=$? $(grep -E 'aligned shapes \(' $T/latency_h200_$i.txt)"; done
pack
