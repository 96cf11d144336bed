#!/bin/bash
# Session call 8: issue 13's development configurations D1-D7 and the named ones, ours and torch.nn.EmbeddingBag in
# the same call (scripts/gpu/bench_tbe.sh, TBE_MODE=dev), at the session's final code.
T=/tmp/c8; mkdir -p $T build/prebuilt
tar -C build/prebuilt -xaf build/carry/prebuilt.tar.xz
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
OUT=$T TBE_MODE=dev TBE_REPS=10 timeout 480 scripts/gpu/bench_tbe.sh build/prebuilt > $T/bench_tbe.log 2>&1; echo "bench_tbe rc=$?"
tail -30 $T/bench_tbe.log
tar czf $OUT/all.tgz -C $T .
