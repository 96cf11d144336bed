#!/bin/bash
# Call 3: call 2's build (wgmma descriptors by one add, mbarrier waits with a suspend hint, ring cursor, full tiles
# without classify under the plain causal mask, SiLU tested apart, backward full q tiles) A/B against call 1's binary
# (mask changes), 2 rounds, same call; then the attention GPU tests (not brief, 400 s: call 2 stopped them at 240 s).
T=/tmp/c3; mkdir -p $T build/prebuilt build/ab
tar -C build/prebuilt -xaf build/carry/prebuilt.tar.xz
xz -dc build/carry/ab/parity_mask.xz > build/ab/parity_old; chmod +x build/ab/parity_old
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt
P=build/prebuilt/bin/parity; G=build/prebuilt/tests/parity_gpu_tests; OLD=build/ab/parity_old
pack() { tar czf $OUT/all.tgz -C $T . ; }
if true; then
  for round in 1 2; do
    for which in old new; do
      bin=$P; extra=()
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
print('file             ' + '  '.join('c%d fwd  bwd  det' % i for i in range(4)))
for path in sorted(glob.glob(d + '/attn_*.json')):
    data = json.load(open(path))
    cells = []
    for c in data['cases']:
        f = c.get('forward', {}).get('useful_tflops', 0); b = c.get('backward', {}).get('useful_tflops', 0)
        dt = c.get('backward_deterministic', {}).get('useful_tflops', 0)
        cells.append('%5.1f %5.1f %5.1f' % (f, b, dt))
    print('%-16s %s' % (os.path.basename(path), '  '.join(cells)))
PY
fi
pack
start=$(date +%s)
timeout 400 stdbuf -oL $G --gtest_filter='*Attention*' > $T/gpu_tests.log 2>&1
rc=$?; echo "tests rc=$rc $(( $(date +%s) - start ))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' $T/gpu_tests.log; tail -3 $T/gpu_tests.log | tr '\n' ' ')"; grep -a "FAILED\|Failure" $T/gpu_tests.log | head -20; pack
pack
