#!/bin/bash
# Call 1: attention GPU tests (new build: plain causal mask in closed form, forward classes over the stored rows,
# split K/V mbarrier variant); A/B old (HEAD) vs new default forward + backward, and the split variant, same call;
# ncu source-level stall profile of the new default HSTU forward at N=2048.
T=/tmp/c1; mkdir -p $T build/prebuilt build/ab
tar -C build/prebuilt -xaf build/carry/prebuilt.tar.xz
xz -dc build/carry/ab/parity_old.xz > build/ab/parity_old; chmod +x build/ab/parity_old
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt
P=build/prebuilt/bin/parity; G=build/prebuilt/tests/parity_gpu_tests; OLD=build/ab/parity_old
pack() { tar czf $OUT/all.tgz -C $T . ; }
start=$(date +%s)
timeout 240 stdbuf -oL $G --gtest_brief=1 --gtest_filter='*Attention*' > $T/gpu_tests.log 2>&1
rc=$?; echo "tests rc=$rc $(( $(date +%s) - start ))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' $T/gpu_tests.log | tr '\n' ' ')"; grep -a "FAILED\|Failure" $T/gpu_tests.log | head -20; pack
if [ $rc = 0 ]; then
  for round in 1 2; do
    for which in old new; do
      bin=$P; extra=(--forward-variants attention_forward_gpu_wgmma_tma_pair_walk_split_kv)
      [ $which = old ] && { bin=$OLD; extra=(); }
      s=$(date +%s)
      timeout 150 $bin bench attention --config targets --reps 20 --warmup 5 --warmup-ms 25 --rep-ms 200 "${extra[@]}" --out $T/attn_${which}_$round.json > $T/attn_${which}_$round.log 2>&1
      echo "attn $which $round rc=$? $(( $(date +%s) - s ))s"
      pack
    done
  done
  python3 - $T <<'PY' | tee $T/attn_ab.txt
import json, glob, os, sys
d = sys.argv[1]
for path in sorted(glob.glob(d + '/attn_*.json')):
    data = json.load(open(path))
    print('==', os.path.basename(path))
    def walk(x, prefix=''):
        if isinstance(x, dict):
            for k, v in x.items():
                if k in ('useful_tflops', 'median_ms') or 'tflops' in k:
                    print(f'  {prefix}{k} = {v}')
                else:
                    walk(v, prefix + k + '.')
        elif isinstance(x, list):
            for i, v in enumerate(x): walk(v, prefix + str(i) + '.')
    walk(data)
PY
fi
pack
ncu_bin="$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)"
if [ -n "$ncu_bin" ]; then
  s=$(date +%s)
  timeout 200 $ncu_bin --clock-control none --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section InstructionStats --section SourceCounters --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --kernel-name regex:attention_forward_wgmma_ws --launch-count 1 -o $T/fwd2048 $P bench attention --kind hstu --batch 512 --heads 4 --dim 128 --seq-len 2048 --dtype bf16 --max-targets 20 --causal true --forward-only --warmup 0 --reps 1 --check-rows 1 > $T/ncu_run.log 2>&1
  echo "ncu rc=$? $(( $(date +%s) - s ))s"
  $ncu_bin --import $T/fwd2048.ncu-rep --page details --print-details all > $T/ncu_details.txt 2>&1
  $ncu_bin --import $T/fwd2048.ncu-rep --page source --print-source sass --csv > $T/ncu_sass.csv 2>&1
  gzip -f $T/ncu_sass.csv; rm -f $T/fwd2048.ncu-rep
  grep -E "Duration|Throughput|Issue|Stall|Warp Cycles|Eligible|Active Warps" $T/ncu_details.txt | head -40
fi
pack
