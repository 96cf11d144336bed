#!/bin/bash
# Call 4 (final of the round): the deterministic-order change (previous kv tile's reduce-adds waited for before the next
# tile's first add) tested; then the attention bench of every named configuration with the new defaults, the anchors
# (Triton HSTU, torch padded, SDPA) on the targets configuration in the same call.
T=/tmp/c4; mkdir -p $T build/prebuilt
tar -C build/prebuilt -xaf build/carry/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt
P=build/prebuilt/bin/parity; G=build/prebuilt/tests/parity_gpu_tests
pack() { tar czf $OUT/all.tgz -C $T . ; }
s=$(date +%s)
timeout 130 stdbuf -oL $G --gtest_filter='AttentionGpu.Deterministic*:AttentionGpu.FusedDqConversionIsBitwiseTheSeparatePass:BackwardVariants/*/wgmma_ws_dqtma_pair_walk_overlap_tanh_fused_dq:AttentionGpu.WgmmaBackwardOnManySequences' > $T/gpu_tests.log 2>&1
rc=$?; echo "tests rc=$rc $(( $(date +%s) - s ))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' $T/gpu_tests.log | tr '\n' ' ')"; grep -a "FAILED\|Failure" $T/gpu_tests.log | head; pack
mkdir -p $T/attn
s=$(date +%s)
OUT=$T/attn ATTN_CONFIGS="targets H1 J1 G1 H2" ATTN_FORWARD_VARIANTS= ATTN_BACKWARD_VARIANTS= timeout 340 scripts/gpu/bench_attention.sh build/prebuilt > $T/attn.log 2>&1; echo "attn rc=$? $(( $(date +%s) - s ))s"
pack
python3 - $T/attn <<'PY' | tee $T/attn_summary.txt
import json, glob, os, sys
d = sys.argv[1]
for path in sorted(glob.glob(d + '/attention_*.json')):
    data = json.load(open(path))
    if 'cases' not in data: print(os.path.basename(path), list(data)[:6]); continue
    for c in data['cases']:
        f = c.get('forward', {}).get('useful_tflops', 0); b = c.get('backward', {}).get('useful_tflops', 0)
        dt = c.get('backward_deterministic', {}).get('useful_tflops', 0)
        print('%-28s %-40s fwd %6.1f bwd %6.1f det %6.1f' % (os.path.basename(path), str(c.get('name', c.get('label', '')))[:40], f, b, dt))
PY
grep -iE "triton|sdpa|padded|tflops" $T/attn.log | head -30
pack
