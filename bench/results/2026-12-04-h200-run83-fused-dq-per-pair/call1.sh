#!/bin/bash
# Call 1: the per-pair fused dQ conversion (tests, then A/B against the default overlapped backward in the same call);
# TBE per-kernel breakdown of spent set 11's small D=16 cases (attribution only).
T=/tmp/c1; mkdir -p $T build/prebuilt
tar -C build/prebuilt -xaf build/carry/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt
P=build/prebuilt/bin/parity; G=build/prebuilt/tests/parity_gpu_tests
pack() { tar czf $OUT/all.tgz -C $T . ; }
timeout 120 stdbuf -oL $G --gtest_brief=1 --gtest_filter='*/wgmma_ws_dqtma_pair_walk_overlap_tanh_fused_dq:*/wgmma_ws_dqtma_pair_walk_overlap_tanh:AttentionGpu.Deterministic*:AttentionGpu.FusedDqConversionIsBitwiseTheSeparatePass:AttentionGpu.WgmmaBackwardOnManySequences:AttentionGpu.WgmmaBackwardRefusesWithReasons' > $T/gpu_tests.log 2>&1
rc=$?; echo "tests rc=$rc $(grep -E '^\[  (PASSED|FAILED)' $T/gpu_tests.log | tr '\n' ' ')"; grep -a "FAILED" $T/gpu_tests.log | head; pack
if [ $rc = 0 ]; then
  timeout 200 $P bench attention --config targets --reps 20 --warmup 5 --warmup-ms 25 --rep-ms 200 --backward-variants attention_backward_gpu_wgmma_ws_dqtma_pair_walk_overlap_tanh_fused_dq --out $T/attention_ab.json > $T/attention_ab.log 2>&1; echo "attn rc=$?"; cat $T/attention_ab.log
fi
pack
mkdir -p $T/tbe; OUT_SAVE=$OUT
OUT=$T/tbe TBE_BREAKDOWN_SET=bench/tbe/test_set_11 TBE_BREAKDOWN_CONFIGS=test_set_11_04,test_set_11_00,test_set_11_05 timeout 150 bash scripts/gpu/tbe_kernel_breakdown_probe.sh build/prebuilt > $T/tbe_breakdown.log 2>&1; echo "tbe breakdown rc=$?"
OUT=$OUT_SAVE; tail -40 $T/tbe/tbe_breakdown.txt
pack
