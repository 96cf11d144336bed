#!/bin/bash
# Session call 9: GEMM selection latency on the device host after the lazy AMD grid stage (f74d02e), twice per device.
T=/tmp/c9; mkdir -p $T build/prebuilt
tar -C build/prebuilt -xaf build/carry/prebuilt.tar.xz
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
P=build/prebuilt/bin/parity
for round in 1 2; do for hw in h200 mi300x mi350x; do timeout 90 $P gemm select --hw $hw --latency > $T/latency${round}_$hw.txt 2>&1; echo "latency $round $hw rc=$? $(grep -E '^  p50|aligned shapes' $T/latency${round}_$hw.txt | tr '\n' ' ')"; done; done
tar czf $OUT/all.tgz -C $T .
