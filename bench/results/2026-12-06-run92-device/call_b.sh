#!/bin/bash
# Call B (binary 8d587ee: the many-bags rule from 65536 bags of at most 16 rows): the forward rule's GPU tests,
# then TBE test set 14 (seed 20270105, committed unmeasured) scored once with run 91's call_t14.sh (torch in the
# same call, C2 as the guard).
T=/tmp/r92b; mkdir -p $T build/pm
[ -x build/pm/bin/parity ] || tar -C build/pm -xaf build/carry/main/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
timeout 120 build/pm/tests/parity_gpu_tests --gtest_filter='GpuTbeForwardWidths.*:GpuTbeForwardOp.*:GpuTbeForwardWideTiles*' \
  > $T/forward_tests.log 2>&1; echo "forward tests rc=$? $(grep -E '^\[  (PASSED|FAILED)' $T/forward_tests.log | tr '\n' ' ')"
tar czf $OUT/call_b.tgz -C $T .
SKIP_SORT_TESTS=1 bash bench/results/2026-12-06-h100-run91-breakdown-latency-measured-tiles/call_t14.sh
