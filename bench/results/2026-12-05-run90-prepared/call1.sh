#!/bin/bash
# Call 1 (prepared; not yet run): where the deterministic TBE step's time goes, and GEMM test suite 10.
# 1. GEMM test suite 10 (seed 20261210, committed unmeasured in 2d6223e) scored once with the device's
#    own model, the heuristic and the hybrid in the same call (scripts/gpu/bench_gemm_test.sh).
# 2. Selection latency on the device host, with OpenBLAS's thread pool as it is and with one thread
#    (OpenBLAS's own variable, for the diagnosis only: its idle workers spin for a while after the
#    library loads, inside the short latency run), and the host's CPU (lscpu).
# 0. The GPU tests of the backward (the vendor sort's bit-for-bit test among them).
# 3. Per-kernel device time of the TBE step under ncu, caches kept between kernels
#    (TBE_BREAKDOWN_CACHE=none), on spent set 13's one-hot SGD layouts under 5x torch (00, 04) and the
#    narrow-rows SGD layout (07); then their step timed with the backward options that change the
#    sort and the chunks (vendor_sort: CUB's radix sort in place of the portable one).
# Binary built here (Release, sm_90a) from the working tree of this commit, carried: build/carry/main.
T=/tmp/r90c1; mkdir -p $T build/pm
tar -C build/pm -xaf build/carry/main/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt; cat $T/smi.txt
lscpu > $T/lscpu.txt; grep -E "Model name|^CPU\(s\)|Thread" $T/lscpu.txt
pack() { tar czf $OUT/call1.tgz -C $T . ; }
P=build/pm/bin/parity; s=$(date +%s)
timeout 150 build/pm/tests/parity_gpu_tests --gtest_filter='GpuTbeBackward*:*RadixSort*' > $T/gpu_tests.log 2>&1
echo "gpu tests rc=$? $(grep -E '^\[  (PASSED|FAILED)' $T/gpu_tests.log | tr '\n' ' ')"
hw=$(nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && echo h200 || echo h100)
OUT=$T GEMM_TEST_SUITE=bench/shapes/gemm_shapes_test10.csv GEMM_TEST_BUDGET_S=220 timeout 320 bash scripts/gpu/bench_gemm_test.sh build/pm > $T/gemm_test.log 2>&1
echo "gemm_test rc=$? $(( $(date +%s) - s ))s"; grep -E "mode (analytical|hybrid)" $T/gemm_test.log; pack
for threads in default 1; do
  if [ $threads = default ]; then timeout 30 $P gemm select --hw $hw --latency > $T/latency_${hw}_$threads.txt 2>&1
  else OPENBLAS_NUM_THREADS=1 timeout 30 $P gemm select --hw $hw --latency > $T/latency_${hw}_$threads.txt 2>&1; fi
  echo "latency openblas=$threads: $(grep -E 'aligned shapes \(|thread CPU' $T/latency_${hw}_$threads.txt | tr -s ' ' | tr '\n' '|')"
done; pack
mkdir -p $T/breakdown
OUT=$T/breakdown TBE_BREAKDOWN_SET=bench/tbe/test_set_13 TBE_BREAKDOWN_CONFIGS=test_set_13_00,test_set_13_04,test_set_13_07 \
  TBE_BREAKDOWN_CACHE=none timeout 200 bash scripts/gpu/tbe_kernel_breakdown_probe.sh build/pm > $T/breakdown.log 2>&1
echo "breakdown rc=$? $(( $(date +%s) - s ))s"; pack
S=bench/tbe/test_set_13
flags() { python3 -c "
import json, sys
for c in json.load(open(sys.argv[1]))['configurations']:
    if c['name'] == sys.argv[2]: print(' '.join(c['flags']))" $S/manifest.json $1; }
for n in 00 04; do
  for v in row vendor_sort large_sort_tiles long_chunks; do
    # shellcheck disable=SC2046  # the manifest's flags are words
    timeout 60 $P bench tbe --layout $S/test_set_13_$n.json $(flags test_set_13_$n) --reps 20 --warmup 3 \
      --backward-variant $v --out $T/time_${n}_$v.json > $T/time_${n}_$v.log 2>&1
    echo "$n $v rc=$? $(grep -E 'fwd \+ bwd' $T/time_${n}_$v.log | head -1 | tr -s ' ')"
  done
done
pack
# 4. The forward sweep of every kernel on spent set 13's forward misses (03: D=16 under Zipf 1.2,
#    05: bf16 one-hot mix of D 16-128+, 06: fp32 D=128 mean short bags): is kAuto's choice the fastest?
mkdir -p $T/sweep
OUT=$T/sweep TBE_SWEEP_SET=bench/tbe/test_set_13 TBE_SWEEP_CONFIGS=test_set_13_03,test_set_13_05,test_set_13_06 \
  timeout 150 bash scripts/gpu/tbe_forward_sweep_probe.sh build/pm > $T/sweep.log 2>&1
echo "sweep rc=$? $(( $(date +%s) - s ))s"; pack
