#!/bin/bash
# Call A (binary 4943ed3, built on the dev host): on an H200, TBE test set 14 scored once (run 91's call_t14.sh)
# then the GEMM selection latency on this host (top 5 and top 1, twice each); on an H100, run 91's call2.sh
# (Gemm::run's measured pool against the oracle; spends no test set) then the latency.
R91=bench/results/2026-12-06-h100-run91-breakdown-latency-measured-tiles
T=/tmp/r92a; mkdir -p $T build/pm
[ -x build/pm/bin/parity ] || tar -C build/pm -xaf build/carry/main/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt; cat $T/smi.txt
lscpu > $T/lscpu.txt; grep -E "Model name|^CPU\(s\)" $T/lscpu.txt
hw=$(nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && echo h200 || echo h100)
if [ $hw = h200 ]; then SKIP_SORT_TESTS=1 bash $R91/call_t14.sh; else bash $R91/call2.sh; fi
P=build/pm/bin/parity
for top in 5 1 5 1; do
  timeout 30 $P gemm select --hw $hw --latency --top $top >> $T/latency_${hw}_top$top.txt 2>&1
  echo "latency top $top: $(grep -E 'aligned shapes \(|thread CPU' $T/latency_${hw}_top$top.txt | tail -3 | tr -s ' ' | tr '\n' '|')"
done
tar czf $OUT/call_a.tgz -C $T .
