#!/bin/bash
# Call C (binary with BackwardOptions::deep_chunk_window, off by default): the backward's bitwise test of the
# deep window (every chunk-kernel shape, four optimisers) and the forward rule's tests; then an A/B of the step
# with the default window against --backward-variant deep_window on spent set 13's SGD and Adam layouts and C2,
# alternating (default, deep, default, deep) on the same build. Development figures.
T=/tmp/r92c; mkdir -p $T/ab build/pm
[ -x build/pm/bin/parity ] || tar -C build/pm -xaf build/carry/main/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt; cat $T/smi.txt
pack() { tar czf $OUT/call_c.tgz -C $T . ; }
P=build/pm/bin/parity; s=$(date +%s)
timeout 200 build/pm/tests/parity_gpu_tests --gtest_filter='GpuTbeBackwardPrefetchState.*:GpuTbeForwardWidths.*:GpuTbeForwardOp.*' \
  > $T/gpu_tests.log 2>&1; echo "gpu tests rc=$? $(grep -E '^\[  (PASSED|FAILED)' $T/gpu_tests.log | tr '\n' ' ') $(( $(date +%s) - s ))s"
grep -E "^\[  FAILED" $T/gpu_tests.log | head; pack
S=bench/tbe/test_set_13
flags_of() { python3 -c "
import json,sys
for c in json.load(open('$S/manifest.json'))['configurations']:
    if c['name']==sys.argv[1]: print('--layout $S/'+c['layout'], ' '.join(c['flags']))" $1; }
for round in 1 2; do
  for cfg in test_set_13_00 test_set_13_04 test_set_13_07 test_set_13_03 test_set_13_08 test_set_13_06 C2; do
    for v in row_at_a_time deep_window; do
      if [ $cfg = C2 ]; then f="--config C2"; else f=$(flags_of $cfg); fi
      bv=$([ $v = deep_window ] && echo deep_window || echo row)
      # shellcheck disable=SC2086
      timeout 60 $P bench tbe $f --backward-variant $bv --reps 10 --warmup 3 --out $T/ab/${cfg}_${v}_$round.json > $T/ab/${cfg}_${v}_$round.log 2>&1
      echo "$cfg $v r$round rc=$? $(grep -E 'fwd \+ bwd' $T/ab/${cfg}_${v}_$round.log | head -1 | tr -s ' ' | cut -c1-120)"
    done
  done; pack
done
python3 - $T/ab <<'PY'
import glob, json, os, statistics, sys
d = sys.argv[1]
def metric(path, key):
    return json.load(open(path)).get(key, {}).get("median_ms")
for cfg in ("test_set_13_00", "test_set_13_04", "test_set_13_07", "test_set_13_03", "test_set_13_08", "test_set_13_06", "C2"):
    for key in ("step_fwd_bwd_opt", "backward_fused"):
        vals = {v: [x for x in (metric(p, key) for p in sorted(glob.glob(os.path.join(d, f"{cfg}_{v}_*.json")))) if x]
                for v in ("row_at_a_time", "deep_window")}
        if vals["row_at_a_time"] and vals["deep_window"]:
            a, b = statistics.median(vals["row_at_a_time"]), statistics.median(vals["deep_window"])
            print(f"{cfg:15s} {key:17s} default {a:.4f} deep {b:.4f} ms  default/deep {a / b:.3f}  runs {vals}")
PY
pack
