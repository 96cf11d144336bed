#!/bin/bash
# Call 4 (named nvidia-h200; the device may be an H100): the attention targets configuration (B=512, H=4, d=128,
# bf16, causal, N = 2048 / 4096) with main's default kernels, the deterministic backward, and the anchors (Triton
# HSTU from build/carry/gr_triton, torch padded, SDPA) in the same call: issue 15's standing on the lent part.
T=/tmp/r89c4; mkdir -p $T/attn build/pm
tar -C build/pm -xaf build/carry/main/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt; cat $T/smi.txt
pack() { tar czf $OUT/call4.tgz -C $T . ; }
s=$(date +%s)
OUT=$T/attn ATTN_CONFIGS="targets" ATTN_REPS=20 ATTN_FORWARD_VARIANTS= ATTN_BACKWARD_VARIANTS= timeout 360 scripts/gpu/bench_attention.sh build/pm > $T/attn.log 2>&1
echo "attn rc=$? $(( $(date +%s) - s ))s"; pack
grep -iE "useful|triton|sdpa|padded|determin" $T/attn.log | head -40
pack
