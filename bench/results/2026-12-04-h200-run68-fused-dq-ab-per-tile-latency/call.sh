#!/bin/bash
# Call 4: fused-dQ attention backward (tests, then A/B against the default), selection latency with the per-tile list.
T=/tmp/c4; mkdir -p $T build/prebuilt
tar -C build/prebuilt -xaf build/carry/prebuilt.tar.xz
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt
P=build/prebuilt/bin/parity; G=build/prebuilt/tests/parity_gpu_tests
pack() { tar czf $OUT/all.tgz -C $T . ; }
for hw in h200 mi300x mi350x; do timeout 60 $P gemm select --hw $hw --latency > $T/latency_$hw.txt 2>&1; echo "latency $hw rc=$?"; done; pack
timeout 90 stdbuf -oL $G --gtest_brief=1 --gtest_filter='*/wgmma_ws_dqtma_pair_walk_overlap_tanh_fused_dq:AttentionGpu.Deterministic*:AttentionGpu.FusedDqConversionIsBitwiseTheSeparatePass:AttentionGpu.WgmmaBackwardOnManySequences:AttentionGpu.WgmmaBackwardRefusesWithReasons' > $T/gpu_tests.log 2>&1
rc=$?; echo "tests rc=$rc $(grep -E '^\[  (PASSED|FAILED)' $T/gpu_tests.log | tr '\n' ' ')"; pack
if [ $rc = 0 ]; then
  timeout 150 $P bench attention --config targets --reps 20 --warmup 5 --warmup-ms 25 --rep-ms 200 --backward-variants attention_backward_gpu_wgmma_ws_dqtma_pair_walk_overlap_tanh_fused_dq --out $T/attention_ab.json > $T/attention_ab.log 2>&1; echo "attn rc=$?"
fi
pack
