#!/bin/bash
# Call J (binary 96de0f5, the session's last C++ change): every GPU test, once.
T=/tmp/r93j; mkdir -p $T build/pm
[ -x build/pm/bin/parity ] || tar -C build/pm -xaf build/carry/main/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt; cat $T/smi.txt
s=$(date +%s)
( while sleep 30; do tar czf $OUT/call_j.tgz -C $T . ; done ) & packer=$!
timeout 520 build/pm/tests/parity_gpu_tests > $T/gpu_tests.log 2>&1
echo "parity_gpu_tests rc=$? $(( $(date +%s) - s ))s"; kill $packer
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[==========\]" $T/gpu_tests.log | tail -8; grep -E "^\[  FAILED  \]" $T/gpu_tests.log | head -20
tar czf $OUT/call_j.tgz -C $T .
