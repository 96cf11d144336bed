#!/bin/bash
# Session call 5: output store modes (kAuto: cached where a feature's output columns end inside a 32-byte sector).
# GPU tests; then auto against forced streaming / cached stores on one-hot layouts, named C configurations and the
# spent test sets 7 and 8 (development sets now), forward only.
T=/tmp/c5; mkdir -p $T build/prebuilt
tar -C build/prebuilt -xaf build/carry/prebuilt.tar.xz
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
P=build/prebuilt/bin/parity; G=build/prebuilt/tests/parity_gpu_tests
pack() { tar czf $OUT/all.tgz -C $T . ; }
timeout 200 stdbuf -oL $G --gtest_brief=1 --gtest_filter='*Tbe*:*RowStride*:*OutputStores*' > $T/gpu_tests.log 2>&1
echo "tests rc=$? $(grep -E '^\[  (PASSED|FAILED)' $T/gpu_tests.log | tr '\n' ' ')"; grep -E '^\[  FAILED' $T/gpu_tests.log | head -5; pack
FV=auto,auto_streaming_stores,auto_cached_stores
run() { n=$1; shift; timeout 90 $P bench tbe "$@" --forward-only --forward-variant $FV --reps 20 --warmup 3 --out $T/$n.json > $T/$n.log 2>&1 || echo "$n failed"; }
run oh_d28 --tables 31 --rows 3000000 --dim 28 --batch 65536 --pooling-factor one-hot --dtype bf16
run oh_d28_packed --tables 31 --rows 3000000 --dim 28 --batch 65536 --pooling-factor one-hot --dtype bf16 --row-stride packed
run oh_d24 --tables 31 --rows 3000000 --dim 24 --batch 65536 --pooling-factor one-hot --dtype bf16
run oh_d28_out32 --tables 31 --rows 3000000 --dim 28 --batch 65536 --pooling-factor one-hot --dtype bf16 --output-dtype fp32
run oh_d32 --tables 31 --rows 3000000 --dim 32 --batch 65536 --pooling-factor one-hot --dtype bf16
run L8_d28 --tables 8 --rows 2000000 --dim 28 --batch 32768 --pooling-factor 8 --dtype bf16
run L4_fp16_44 --tables 16 --rows 1000000 --dim 44 --batch 32768 --pooling-factor 4 --dtype fp16
for c in C2 C5 C7 D1 D2 D4; do run n_$c --config $c; done; pack
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
    v = d.get("forward_variants", {}); c = d["config"]
    t = {k: v[k]["median_ms"] * 1e3 for k in v if "median_ms" in v[k]}
    a, s, cc = t.get("auto", 0), t.get("auto_streaming_stores", 0), t.get("auto_cached_stores", 0)
    print(f"{os.path.basename(p)[:-5]:22s} {d.get('forward_auto_kernel','?'):28s} auto {a:8.1f} streaming {s:8.1f} cached {cc:8.1f} us  cached/streaming {cc/s if s else 0:6.3f}")
PY
pack
