#!/bin/bash
# Call 3: GEMM test suite 5 (bench/shapes/gemm_shapes_test5.csv, committed unmeasured in 4403e07) scored once,
# both modes (analytical, hybrid), through scripts/gpu/bench_gemm_test.sh; then the selection latency on the
# device host (h200 twice, mi300x, mi350x). Binary: call 2's bin/parity (Release, sm_90a; GEMM code as in 4403e07).
T=/tmp/c3; mkdir -p $T build/prebuilt
tar -C build/prebuilt -xaf build/carry/c2/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt
P=build/prebuilt/bin/parity
pack() { tar czf $OUT/all.tgz -C $T . ; }
s=$(date +%s)
OUT=$T GEMM_TEST_SUITE=bench/shapes/gemm_shapes_test5.csv GEMM_TEST_BUDGET_S=240 timeout 420 bash scripts/gpu/bench_gemm_test.sh build/prebuilt > $T/gemm_test.log 2>&1
echo "gemm_test rc=$? $(( $(date +%s) - s ))s"; pack
for mode in analytical hybrid; do echo "== $mode"; grep -E -i "geomean|worst|within" $T/gemm_test_$mode/*.md | head -12; done
for hw in h200 mi300x mi350x h200; do timeout 60 $P gemm select --hw $hw --latency > $T/latency_${hw}_$((++i)).txt 2>&1; echo "latency $hw rc=$? $(grep -E '^  p50|aligned shapes' $T/latency_${hw}_$i.txt | tr '\n' ' ')"; done
pack
