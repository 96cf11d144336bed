#!/bin/bash
# Session call 1: TBE sort histogram fused into linearize (correctness + A/B on C2 and small steps), and a
# development forward sweep (auto vs the wide one-hot tiles) over spent sets 1-6 and C5/C7.
T=/tmp/c1; mkdir -p $T build/prebuilt
tar -C build/prebuilt -xaf build/carry/prebuilt.tar.xz
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
P=build/prebuilt/bin/parity; G=build/prebuilt/tests/parity_gpu_tests
pack() { tar czf $OUT/all.tgz -C $T . ; }
timeout 200 $G --gtest_brief=1 --gtest_filter='*TbeBackward*:*Radix*:*Sort*:*GpuTbe*' > $T/gpu_tests.log 2>&1; echo "tests rc=$? $(grep -E '^\[  (PASSED|FAILED)' $T/gpu_tests.log | tr '\n' ' ')"; grep -E '^\[  FAILED' $T/gpu_tests.log | head -5; pack
for round in 1 2; do for v in row_at_a_time separate_sort_histogram; do
  bv=$v; [[ $v == row_at_a_time ]] && bv=row
  timeout 90 $P bench tbe --config C2 --reps 30 --warmup 5 --backward-variant $bv --out $T/c2_${v}_$round.json > $T/c2_${v}_$round.log 2>&1
  echo "C2 $round $v rc=$? $(python3 -c "import json;d=json.load(open('$T/c2_${v}_$round.json'));print('step',d['step_fwd_bwd_opt']['median_ms'],'bwd',d['backward_fused']['median_ms'])" 2>&1)"
done; done; pack
flags_of() { python3 -c "
import json, sys
for c in json.load(open(sys.argv[1]))['configurations']:
    if c['name'] == sys.argv[2]: print(' '.join(c['flags']))" "$1/manifest.json" "$2"; }
for c in 4:00 4:03 4:06 6:02 6:03 6:05 6:06; do s=${c%%:*}; n=${c##*:}; S=bench/tbe/test_set_$s
  for v in row separate_sort_histogram; do
    timeout 60 $P bench tbe --layout $S/test_set_${s}_$n.json $(flags_of $S test_set_${s}_$n) --reps 20 --warmup 3 --backward-variant $v --out $T/step_${s}_${n}_$v.json > $T/step_${s}_${n}_$v.log 2>&1
    echo "step set$s $n $v rc=$? $(python3 -c "import json;d=json.load(open('$T/step_${s}_${n}_$v.json'));print(d['step_fwd_bwd_opt']['median_ms'])" 2>&1)"
  done; done; pack
for s in 1 2 3 4 5 6; do S=bench/tbe/test_set_$s
  for f in $S/test_set_${s}_*.json; do n=$(basename $f .json)
    timeout 45 $P bench tbe --layout $f $(flags_of $S $n) --forward-only --forward-variant auto,warp_tile_one_hot_wide_rows --reps 10 --warmup 2 --out $T/sweep_$n.json > $T/sweep_$n.log 2>&1 || echo "sweep $n rc=$?"
  done; pack; done
for n in C5 C7 C3 C4; do timeout 45 $P bench tbe --config $n --forward-only --forward-variant auto,warp_tile_one_hot_wide_rows --reps 10 --warmup 2 --out $T/sweep_$n.json > $T/sweep_$n.log 2>&1 || echo "sweep $n rc=$?"; done
python3 - $T <<'PY' | tee $T/sweep.txt
import json, glob, os, sys
for p in sorted(glob.glob(sys.argv[1] + "/sweep_*.json")):
    d = json.load(open(p)); v = d.get("forward_variants", {})
    copy = d.get("forward_bandwidth", {}).get("copy_tbps", 0)
    a = v.get("auto", d["forward"])["median_ms"]; w = v.get("warp_tile_one_hot_wide_rows", {}).get("median_ms", float("nan"))
    print(f"{os.path.basename(p)[6:-5]:16s} auto {a*1e3:9.1f} us  wide {w*1e3:9.1f} us  wide/auto {w/a:6.3f}")
PY
pack
