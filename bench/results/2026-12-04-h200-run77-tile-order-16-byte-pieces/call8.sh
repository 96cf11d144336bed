#!/bin/bash
# Session call 8 (final TBE code): sample-major warp tiles (kAuto: one dim, and output off sectors or one-hot) and
# 16-byte pieces on padded rows. GPU tests; auto against forced feature- / sample-major tiles on one-hot and short-bag
# layouts, named configurations and the spent test sets 7 and 8 (development now), forward only; then the steps of
# the layouts the rule changes; GEMM selection latency after the grouped Hopper search.
T=/tmp/c8; mkdir -p $T build/prebuilt
tar -C build/prebuilt -xaf build/carry/prebuilt.tar.xz
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
P=build/prebuilt/bin/parity; G=build/prebuilt/tests/parity_gpu_tests
pack() { tar czf $OUT/all.tgz -C $T . ; }
timeout 200 stdbuf -oL $G --gtest_brief=1 --gtest_filter='*Tbe*:*RowStride*:*TileOrder*:*Embedding*:*Radix*:*ShortChunks*' > $T/gpu_tests.log 2>&1
echo "tests rc=$? $(grep -E '^\[  (PASSED|FAILED)' $T/gpu_tests.log | tr '\n' ' ')"; grep -E '^\[  FAILED' $T/gpu_tests.log | head -5; pack
FV=auto,auto_feature_major_tiles,auto_sample_major_tiles
run() { n=$1; shift; timeout 90 $P bench tbe "$@" --forward-only --forward-variant $FV --reps 20 --warmup 3 --out $T/$n.json > $T/$n.log 2>&1 || echo "$n failed"; }
run oh_d28 --tables 31 --rows 3000000 --dim 28 --batch 65536 --pooling-factor one-hot --dtype bf16
run oh_d28_packed --tables 31 --rows 3000000 --dim 28 --batch 65536 --pooling-factor one-hot --dtype bf16 --row-stride packed
run oh_d24 --tables 31 --rows 3000000 --dim 24 --batch 65536 --pooling-factor one-hot --dtype bf16
run oh_d28_out32 --tables 31 --rows 3000000 --dim 28 --batch 65536 --pooling-factor one-hot --dtype bf16 --output-dtype fp32
run oh_d32 --tables 31 --rows 3000000 --dim 32 --batch 65536 --pooling-factor one-hot --dtype bf16
run oh_fp32_12 --tables 26 --rows 2000000 --dim 12 --batch 65536 --pooling-factor one-hot --dtype fp32
run L3_d28 --tables 16 --rows 2000000 --dim 28 --batch 32768 --pooling-factor 3 --dtype bf16
run L4_fp16_44 --tables 16 --rows 1000000 --dim 44 --batch 32768 --pooling-factor 4 --dtype fp16
run L8_fp16_156 --tables 8 --rows 1000000 --dim 156 --batch 16384 --pooling-factor 8 --dtype fp16
for c in C2 C5 C7 D1 D2 D3 D4; do run n_$c --config $c; done; pack
for s in 7 8; do S=bench/tbe/test_set_$s
  while IFS=$'\t' read -r name layout flags; do run s_$name --layout $S/$layout $flags; done < <(python3 -c "
import json
for c in json.load(open('$S/manifest.json'))['configurations']:
    print(c['name'], c['layout'], ' '.join(c['flags']), sep='\t')")
done; pack
python3 - $T <<'PY' | tee $T/summary.txt
import json, glob, os, sys
for p in sorted(glob.glob(sys.argv[1] + "/*.json")):
    try: d = json.load(open(p))
    except Exception as e: print(os.path.basename(p), "unreadable"); continue
    v = d.get("forward_variants", {})
    t = {k: v[k]["median_ms"] * 1e3 for k in v if "median_ms" in v[k]}
    a, f, s = t.get("auto", 0), t.get("auto_feature_major_tiles", 0), t.get("auto_sample_major_tiles", 0)
    pct = v.get("auto", {}).get("every_lookup_ratio_to_copy", v.get("auto", {}).get("ratio_to_copy", 0))
    print(f"{os.path.basename(p)[:-5]:22s} {d.get('forward_auto_kernel','?'):28s} auto {a:8.1f} feature-major {f:8.1f} sample-major {s:8.1f} us  sample/feature {s/f if f else 0:6.3f}")
PY
pack
timeout 90 $P bench tbe --tables 16 --rows 2000000 --dim 28 --batch 32768 --pooling-factor 3 --dtype bf16 --optimizer rowwise-adagrad --reps 10 --warmup 3 --out $T/step_L3_d28.json > $T/step_L3_d28.log 2>&1
timeout 90 $P bench tbe --tables 16 --rows 2000000 --dim 28 --batch 32768 --pooling-factor 3 --dtype bf16 --optimizer rowwise-adagrad --row-stride packed --reps 10 --warmup 3 --out $T/step_L3_d28_packed.json > $T/step_L3_d28_packed.log 2>&1
grep -E '^  forward +median|fwd \+ bwd' $T/step_L3_d28*.log
for round in 1 2; do timeout 90 $P bench tbe --config C2 --reps 30 --warmup 5 --out $T/c2_$round.json > $T/c2_$round.log 2>&1
  echo "C2 $round rc=$? $(python3 -c "import json;d=json.load(open('$T/c2_$round.json'));print('step',d['step_fwd_bwd_opt']['median_ms'],'fwd',d['forward']['median_ms'])" 2>&1)"; done; pack
mkdir -p $T/dev
OUT=$T/dev TBE_MODE=dev TBE_REPS=10 timeout 400 scripts/gpu/bench_tbe.sh build/prebuilt > $T/bench_tbe.log 2>&1; echo "bench_tbe rc=$?"
tail -30 $T/bench_tbe.log; pack
