#!/bin/bash
# Call B (binary with the long-bags split rule, kSplitLongBagMinMeanRows = 24, and GemmOptions::measured_flush_l2):
# the split-bags GPU tests; kAuto's forward on the four spent layouts the rule moves (development figures) and on
# the named configurations (guards); then TBE test set 15 (seed 20270106, committed unmeasured) scored once with
# torch in the same call, C2 as the guard.
T=/tmp/r93b; mkdir -p $T/dev $T/set15 build/pm
[ -x build/pm/bin/parity ] || tar -C build/pm -xaf build/carry/main/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt; cat $T/smi.txt
pack() { tar czf $OUT/call_b.tgz -C $T . ; }
P=build/pm/bin/parity; s=$(date +%s)
timeout 120 build/pm/tests/parity_gpu_tests --gtest_filter='GpuTbeForwardSplitBags.*:GpuTbeForwardWidths.*:GpuTbeForwardOp.*' \
  > $T/forward_tests.log 2>&1; echo "forward tests rc=$? $(grep -E '^\[  (PASSED|FAILED)' $T/forward_tests.log | tr '\n' ' ') $(( $(date +%s) - s ))s"
grep -E "^\[  FAILED" $T/forward_tests.log | head
for cfg in 12_00 14_02 2_02 5_09; do
  S=bench/tbe/test_set_${cfg%_*}; name=test_set_$cfg
  flags=$(python3 -c "
import json
for c in json.load(open('$S/manifest.json'))['configurations']:
    if c['name']=='$name': print(' '.join(c['flags']))")
  # shellcheck disable=SC2086
  timeout 60 $P bench tbe --layout $S/$name.json $flags --forward-variant auto,narrow_rows,narrow_rows_split_bags --forward-only --out $T/dev/$name.json > $T/dev/$name.log 2>&1
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
OUT=$T/set15 TBE_TEST_SET=bench/tbe/test_set_15 timeout 400 scripts/gpu/tbe_test_set.sh build/pm > $T/set15.log 2>&1
echo "set15 rc=$? $(( $(date +%s) - s ))s"; tail -14 $T/set15/tbe_test_set.txt | cut -c1-170; kill $packer; pack
timeout 50 $P bench tbe --config C2 --reps 20 --out $T/c2.json > $T/c2.log 2>&1; echo "C2 rc=$?"; grep -E "forward +median|fwd \+ bwd" $T/c2.log | head -2; pack
