#!/bin/bash
# Call 1: GEMM test suite 6 (bench/shapes/gemm_shapes_test6.csv, committed unmeasured in da44618 for
# the model change of 67ebaf6 / 149c323) scored once, both modes, with selection latency; the GPU tests
# of the layer, the dense ops and the GEMM run API on main (7191a23); then the bias-gradient branch
# (hstu-layer-bias-sums, f45f3b8): its layer tests and the layer bench A/B against main in the same
# call. Binaries built here (Release, sm_90a), carried: build/carry/main, build/carry/bias.
T=/tmp/c1; mkdir -p $T build/pm build/pb
tar -C build/pm -xaf build/carry/main/prebuilt.tar.xz
tar -C build/pb -xaf build/carry/bias/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt; cat $T/smi.txt
pack() { tar czf $OUT/all.tgz -C $T . ; }
s=$(date +%s)
OUT=$T GEMM_TEST_SUITE=bench/shapes/gemm_shapes_test6.csv GEMM_TEST_BUDGET_S=200 timeout 260 bash scripts/gpu/bench_gemm_test.sh build/pm > $T/gemm_test.log 2>&1
echo "gemm_test rc=$? $(( $(date +%s) - s ))s"; pack
for mode in analytical hybrid; do echo "== $mode"; grep -E -i "geomean|worst|within" $T/gemm_test_$mode/*.md | head -14; done
timeout 30 build/pm/bin/parity gemm select --hw h200 --latency > $T/latency_h200.txt 2>&1; echo "latency rc=$? $(grep -E '^  p50|aligned shapes' $T/latency_h200.txt | tr '\n' ' ')"; pack
for b in pm pb; do
  s=$(date +%s)
  timeout 110 build/$b/tests/parity_gpu_tests --gtest_brief=1 --gtest_filter='HstuLayerGpu*:NnDense*:*GemmRun*:*Linear*' > $T/gpu_tests_$b.log 2>&1
  echo "tests $b rc=$? $(( $(date +%s) - s ))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' $T/gpu_tests_$b.log | tr '\n' ' ')"
  grep -a -B2 -A6 "Failure" $T/gpu_tests_$b.log | head -30; pack
done
for n in 2048 4096; do for b in pm pb; do
  timeout 80 build/$b/bin/parity bench hstu-layer --device gpu --batch 512 --seq-len $n --model-dim 512 --heads 4 --dim-qk 128 --dim-v 128 \
    --max-targets 20 --warmup 3 --reps 10 --out $T/hstu_layer_${n}_$b.json > $T/hstu_layer_${n}_$b.log 2>&1
  echo "hstu-layer N=$n $b rc=$? $(grep -E 'median|ms' $T/hstu_layer_${n}_$b.log | tr -s ' ' | head -6 | tr '\n' ' ')"; pack
done; done
