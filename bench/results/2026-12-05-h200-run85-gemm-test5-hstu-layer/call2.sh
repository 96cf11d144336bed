#!/bin/bash
# Call 2: the GPU HSTU layer (new: hstu_layer_{forward,backward}_gpu) — its GPU tests, then
# `parity bench hstu-layer --device gpu` at the attention targets' shape (B=512, H=4, d=128, D=512,
# lengths U[0.9N, N), num_targets U[1, 20], N = 2048 and 4096). The PyTorch layer baseline (scripts/gpu/torch_hstu_layer_baseline.py:
# GR's Triton attention forward, the padded PyTorch attention forward and backward) in the same call. Binaries built here (Release, sm_90a), carried.
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
PYTHONPATH=build/carry/gr_triton timeout 150 python3 scripts/gpu/torch_hstu_layer_baseline.py $T/torch_hstu_layer.json 512 2048 4096 > $T/torch_hstu_layer.log 2>&1
echo "torch layer baseline rc=$? $(( $(date +%s) - s ))s"; tail -4 $T/torch_hstu_layer.log; pack
pack
