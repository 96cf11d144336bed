#!/bin/bash
# Call A: the deterministic backward's walk (one block per (sequence, head)) with its q / dO rows and row terms
# prefetched into L2 four q steps ahead (bin/, tests/: de8d2ad + that change, uncommitted) — its GPU tests first,
# then `bench attention --config targets` A/B against de8d2ad's binary (base/) in the same call. One archive,
# build/carry/ab/ab.tar.xz (xz with a 512 MiB dictionary: the two parity binaries share most bytes).
T=/tmp/r94a; mkdir -p $T build/pm build/pb/bin
tar -C build/pm -xaf build/carry/ab/ab.tar.xz
mv build/pm/base/parity build/pb/bin/parity
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt; cat $T/smi.txt
pack() { tar czf $OUT/call_a.tgz -C $T . ; }
s=$(date +%s)
timeout 150 build/pm/tests/parity_gpu_tests --gtest_brief=1 \
  --gtest_filter='AttentionGpu.Deterministic*:AttentionGpu.FusedDq*:AttentionGpu.WgmmaBackwardOnManySequences' > $T/gpu_tests_det.log 2>&1
echo "det tests rc=$? $(( $(date +%s) - s ))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' $T/gpu_tests_det.log | tr '\n' ' ')"
grep -a -B2 -A8 "Failure" $T/gpu_tests_det.log | head -40; pack
for which in pm pb; do
  s=$(date +%s)
  timeout 150 build/$which/bin/parity bench attention --config targets --reps 20 --warmup 5 --warmup-ms 25 --rep-ms 200 \
    --out $T/attn_$which.json > $T/attn_$which.log 2>&1
  echo "attn $which rc=$? $(( $(date +%s) - s ))s"; pack
done
python3 - $T <<'PY' | tee $T/attn_ab.txt
import json, glob, os, sys
d = sys.argv[1]
for path in sorted(glob.glob(d + '/attn_*.json')):
    data = json.load(open(path))
    for c in data['cases']:
        f = c.get('forward', {}).get('useful_tflops', 0); b = c.get('backward', {}).get('useful_tflops', 0)
        dt = c.get('backward_deterministic', {}).get('useful_tflops', 0)
        print('%-12s %-40s fwd %6.1f bwd %6.1f det %6.1f det/default time %.3f' % (os.path.basename(path), c.get('label', '?')[:40], f, b, dt, c.get('deterministic_over_default', 0)))
PY
pack
