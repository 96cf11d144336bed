#!/bin/bash
# Call F (binary with the mixed 16-bit short-bags rule): the forward rule GPU tests; kAuto against the light
# short-bag tiles and the wide tiles on spent layouts at the rule's edges (development figures) and the named
# configurations' forwards (guards); then TBE test set 16 (seed 20270107, committed unmeasured) scored once with
# torch in the same call, C2 as the guard.
T=/tmp/r93f; mkdir -p $T/dev $T/set16 build/pm
[ -x build/pm/bin/parity ] || tar -C build/pm -xaf build/carry/main/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt; cat $T/smi.txt
pack() { tar czf $OUT/call_f.tgz -C $T . ; }
P=build/pm/bin/parity; s=$(date +%s)
timeout 150 build/pm/tests/parity_gpu_tests --gtest_filter='GpuTbeForwardWidths.*:GpuTbeForwardSplitBags.*:GpuTbeForwardOp.*:GpuTbeForwardCandidates*' \
  > $T/forward_tests.log 2>&1; echo "forward tests rc=$? $(grep -E '^\[  (PASSED|FAILED)' $T/forward_tests.log | tr '\n' ' ') $(( $(date +%s) - s ))s"
grep -E "^\[  FAILED" $T/forward_tests.log | head
for cfg in 15_00 1_06 1_08 6_07 3_04 10_07 13_01 14_00; do
  S=bench/tbe/test_set_${cfg%_*}; name=test_set_$cfg
  flags=$(python3 -c "
import json
for c in json.load(open('$S/manifest.json'))['configurations']:
    if c['name']=='$name': print(' '.join(c['flags']))")
  # shellcheck disable=SC2086
  timeout 60 $P bench tbe --layout $S/$name.json $flags --forward-variant auto,warp_tile_short_bags_light,warp_tile_one_hot_wide_rows --forward-only --out $T/dev/$name.json > $T/dev/$name.log 2>&1
  echo "$name rc=$?"
done
for cfg in C1 C2 C3 C4 C5 C6 C7 D1 D2 D3 D4 D5 D6 D7; do
  timeout 60 $P bench tbe --config $cfg --forward-variant auto --forward-only --out $T/dev/$cfg.json > $T/dev/$cfg.log 2>&1; echo "$cfg rc=$?"
done
python3 - $T/dev <<'PY' | tee $T/dev.txt
import glob, json, os, sys
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    doc = json.load(open(path))
    row = [f"{os.path.basename(path)[:-5]}: kAuto takes {doc.get('forward_auto_kernel', '?')}"]
    for v, st in sorted(doc.get("forward_variants", {}).items(), key=lambda kv: kv[1].get("median_ms", 1e9)):
        if "median_ms" in st:
            row.append(f"{v} {st['median_ms']:.4f} ms {100 * st.get('forward_bandwidth', {}).get('evaluated_ratio_to_copy', 0):.1f}%")
    print("; ".join(row))
PY
pack; echo "dev $(( $(date +%s) - s ))s"
( while sleep 20; do pack; done ) & packer=$!
OUT=$T/set16 TBE_TEST_SET=bench/tbe/test_set_16 timeout 400 scripts/gpu/tbe_test_set.sh build/pm > $T/set16.log 2>&1
echo "set16 rc=$? $(( $(date +%s) - s ))s"; tail -14 $T/set16/tbe_test_set.txt | cut -c1-170; kill $packer; pack
grep -H "^kernels:" $T/set16/tbe_test_set_16_*.log | cut -c1-160
timeout 50 $P bench tbe --config C2 --reps 20 --out $T/c2.json > $T/c2.log 2>&1; echo "C2 rc=$?"; grep -E "forward +median|fwd \+ bwd" $T/c2.log | head -2; pack
