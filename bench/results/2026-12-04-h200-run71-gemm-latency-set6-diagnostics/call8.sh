#!/bin/bash
# Call 8: GEMM selection latency, the selector before the merged search changes (prebuilt_b: main a74dbd3's
# selector) and after (prebuilt: main 87f4d06), alternated twice in one call on the same host.
T=/tmp/c8; mkdir -p $T build/prebuilt build/prebuilt_b
tar -C build/prebuilt -xaf build/carry/prebuilt.tar.xz
tar -C build/prebuilt_b -xaf build/carry/prebuilt_b.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
for round in 1 2; do for b in prebuilt_b prebuilt; do for hw in h200 mi300x mi350x; do
  timeout 60 build/$b/bin/parity gemm select --hw $hw --latency > $T/latency_${b}_${hw}_$round.txt 2>&1
  echo "$round $b $hw: $(grep -E '^  p50|aligned shapes' $T/latency_${b}_${hw}_$round.txt | sed 's/ (wall)//' | tr '\n' ' ')"
done; done; done
tar czf $OUT/all.tgz -C $T .
