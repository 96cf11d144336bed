#!/bin/bash
# Call 2: GPU tests (attention fused-dQ default incl. the bitwise test that now runs; TBE bounds check incl. the
# vectorised offsets edges); bounds-check A/B, old (057536d) and new binaries alternating on the same configurations;
# attention targets with the anchors (Triton HSTU, torch padded, SDPA) and the separate-pass backward in the same call.
T=/tmp/c2; mkdir -p $T build/prebuilt build/ab
tar -C build/prebuilt -xaf build/carry/prebuilt.tar.xz
xz -dc build/carry/ab/parity_057536d.xz > build/ab/parity_old; chmod +x build/ab/parity_old
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt
P=build/prebuilt/bin/parity; G=build/prebuilt/tests/parity_gpu_tests; OLD=build/ab/parity_old
pack() { tar czf $OUT/all.tgz -C $T . ; }
timeout 150 stdbuf -oL $G --gtest_brief=1 --gtest_filter='GpuTbeBoundsCheck.*:*/wgmma_ws_dqtma_pair_walk_overlap_tanh_fused_dq:AttentionGpu.Deterministic*:AttentionGpu.FusedDqConversionIsBitwiseTheSeparatePass:AttentionGpu.WgmmaBackwardOnManySequences' > $T/gpu_tests.log 2>&1
rc=$?; echo "tests rc=$rc $(grep -E '^\[  (PASSED|FAILED)' $T/gpu_tests.log | tr '\n' ' ')"; grep -a "FAILED\|Failure" $T/gpu_tests.log | head; pack
mkdir -p $T/bounds
run_cfg() {  # name, then bench flags
  local name=$1; shift
  for round in 1 2; do
    for which in old new; do
      local bin=$P; [ $which = old ] && bin=$OLD
      timeout 40 $bin bench tbe "$@" --reps 30 --warmup 5 --out $T/bounds/${name}_${which}_$round.json > $T/bounds/${name}_${which}_$round.log 2>&1 || echo "$name $which $round failed"
    done
  done
}
run_cfg C2 --config C2
run_cfg BC --config BC
for S in 11:01 10:01 11:04 11:08 9:03; do
  set_no=${S%%:*}; c=${S##*:}; D=bench/tbe/test_set_$set_no
  flags=$(python3 -c "
import json,sys
for x in json.load(open('$D/manifest.json'))['configurations']:
    if x['name']=='test_set_${set_no}_$c': print(' '.join(x['flags']))")
  run_cfg set${set_no}_$c --layout $D/test_set_${set_no}_$c.json $flags
done
python3 - $T/bounds <<'PY' | tee $T/bounds_ab.txt
import json, glob, os, sys, statistics
d = sys.argv[1]; names = sorted({os.path.basename(p).rsplit('_', 2)[0] for p in glob.glob(d + '/*.json')})
print('config            old us (2 runs)   new us (2 runs)   floor us   old/floor new/floor')
for n in names:
    def get(w, k):
        v = []
        for r in (1, 2):
            p = f'{d}/{n}_{w}_{r}.json'
            if os.path.exists(p): v.append(json.load(open(p))[k]['median_ms'] * 1000)
        return v
    o, nw, fl = get('old', 'bounds_check_clean'), get('new', 'bounds_check_clean'), get('new', 'bounds_check_floor_index_offsets_read')
    if not o or not nw or not fl: print(n, 'missing'); continue
    f = statistics.median(fl)
    print(f'{n:16s} {" ".join("%.2f" % x for x in o):16s} {" ".join("%.2f" % x for x in nw):16s} {f:8.2f}   {statistics.median(o)/f:.2f}      {statistics.median(nw)/f:.2f}')
PY
pack
mkdir -p $T/attn
OUT=$T/attn ATTN_CONFIGS=targets ATTN_FORWARD_VARIANTS= ATTN_BACKWARD_VARIANTS=attention_backward_gpu_wgmma_ws_dqtma_pair_walk_overlap_tanh timeout 280 scripts/gpu/bench_attention.sh build/prebuilt > $T/attn.log 2>&1; echo "attn rc=$?"; grep -E "^(hstu|jfa)|attention_backward|TF" $T/attn.log | head -30
pack
