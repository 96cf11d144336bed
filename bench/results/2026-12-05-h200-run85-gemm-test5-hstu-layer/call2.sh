#!/bin/bash
# Call 2: the GPU HSTU layer (new: hstu_layer_{forward,backward}_gpu) — its GPU tests, then
# `parity bench hstu-layer --device gpu` at the attention targets' shape (B=512, H=4, d=128, D=512,
# lengths U[0.9N, N), num_targets U[1, 20], N = 2048 and 4096); then GEMM test suite 5
# (bench/shapes/gemm_shapes_test5.csv, committed unmeasured in 4403e07) scored once, both modes,
# and the selection latency on the device host. Binaries built here (Release, sm_90a), carried.
T=/tmp/c2; mkdir -p $T build/prebuilt
tar -C build/prebuilt -xaf build/carry/c2/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt
P=build/prebuilt/bin/parity; G=build/prebuilt/tests/parity_gpu_tests
pack() { tar czf $OUT/all.tgz -C $T . ; }
s=$(date +%s)
timeout 120 $G --gtest_brief=1 --gtest_filter='HstuLayerGpu*' > $T/gpu_tests.log 2>&1
rc=$?; echo "tests rc=$rc $(( $(date +%s) - s ))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' $T/gpu_tests.log | tr '\n' ' ')"
grep -a -B2 -A6 "Failure" $T/gpu_tests.log | head -60; pack
for n in 2048 4096; do
  s=$(date +%s)
  timeout 90 $P bench hstu-layer --device gpu --batch 512 --seq-len $n --model-dim 512 --heads 4 --dim-qk 128 --dim-v 128 \
    --max-targets 20 --warmup 3 --reps 10 --out $T/hstu_layer_$n.json > $T/hstu_layer_$n.log 2>&1
  echo "hstu-layer N=$n rc=$? $(( $(date +%s) - s ))s"; cat $T/hstu_layer_$n.log; pack
done
s=$(date +%s)
OUT=$T GEMM_TEST_SUITE=bench/shapes/gemm_shapes_test5.csv GEMM_TEST_BUDGET_S=220 timeout 330 bash scripts/gpu/bench_gemm_test.sh build/prebuilt > $T/gemm_test.log 2>&1
echo "gemm_test rc=$? $(( $(date +%s) - s ))s"; pack
for mode in analytical hybrid; do echo "== $mode"; grep -E -i "geomean|worst|within" $T/gemm_test_$mode/*.md | head -12; done
for hw in h200 mi300x; do timeout 30 $P gemm select --hw $hw --latency > $T/latency_$hw.txt 2>&1; echo "latency $hw rc=$? $(grep -E '^  p50|aligned shapes' $T/latency_$hw.txt | tr '\n' ' ')"; done
pack
