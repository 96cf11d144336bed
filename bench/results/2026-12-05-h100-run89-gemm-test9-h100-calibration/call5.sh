#!/bin/bash
# Call 5 (named nvidia-h200; the device may be an H100): the HSTU layer (projections through gemm::Gemm, now with
# the device's own GEMM model) at the attention targets' shape, and the same layer in PyTorch in the same call
# (scripts/gpu/bench_hstu_layer.sh). Same binary as calls 1-4.
T=/tmp/r89c5; mkdir -p $T build/pm
tar -C build/pm -xaf build/carry/main/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt; cat $T/smi.txt
s=$(date +%s)
OUT=$T timeout 330 bash scripts/gpu/bench_hstu_layer.sh build/pm > $T/hstu_layer.log 2>&1
echo "hstu_layer rc=$? $(( $(date +%s) - s ))s"; grep -E "^---- |forward|backward" $T/hstu_layer.log | head -30
tar czf $OUT/call5.tgz -C $T .
