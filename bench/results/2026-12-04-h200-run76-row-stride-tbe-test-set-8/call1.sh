#!/bin/bash
# Session call 1: padded row strides. GPU tests (TBE), then packed vs aligned rows on widths the rule pads, and the
# named C2 / D2 on the default (packed-equal) layouts for the kernels' register change.
T=/tmp/c1; mkdir -p $T build/prebuilt
tar -C build/prebuilt -xaf build/carry/prebuilt.tar.xz
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
timeout 200 build/prebuilt/tests/parity_gpu_tests --gtest_filter='*RowStride*:*Tbe*:*TBE*' > $T/gpu_tests.log 2>&1; echo "gpu tests rc=$?"
grep -E '^\[  (PASSED|FAILED) |FAILED  \]|tests ran' $T/gpu_tests.log | head -20
P=build/prebuilt/bin/parity
run() { n=$1; shift; timeout 90 $P bench tbe "$@" --reps 10 --warmup 2 --out $T/$n.json > $T/$n.log 2>&1 || echo "$n failed"; }
for rs in packed aligned; do
  run f_bf16_28_onehot_$rs --tables 8 --rows 2000000 --dim 28 --batch 65536 --pooling-factor one-hot --dtype bf16 --forward-only --row-stride $rs
  run f_bf16_12_onehot_$rs --tables 16 --rows 1000000 --dim 12 --batch 65536 --pooling-factor one-hot --dtype bf16 --forward-only --row-stride $rs
  run f_bf16_60_L20_$rs --tables 8 --rows 1000000 --dim 60 --batch 16384 --pooling-factor 20 --dtype bf16 --forward-only --row-stride $rs
  run f_fp16_44_L4_$rs --tables 16 --rows 1000000 --dim 44 --batch 32768 --pooling-factor 4 --dtype fp16 --forward-only --row-stride $rs
  run f_fp16_156_L8_$rs --tables 8 --rows 1000000 --dim 156 --batch 16384 --pooling-factor 8 --dtype fp16 --forward-only --row-stride $rs
  run s_bf16_28_L8_$rs --tables 8 --rows 2000000 --dim 28 --batch 32768 --pooling-factor 8 --dtype bf16 --optimizer rowwise-adagrad --row-stride $rs
  run s_fp32_28_L0-10_$rs --tables 16 --rows 1000000 --dim 28 --batch 65536 --pooling-factor 0..10 --dtype fp32 --optimizer rowwise-adagrad --row-stride $rs
done
for c in C2 D2 C7; do run n_$c --config $c; done
python3 - $T <<'PY' | tee $T/summary.txt
import json, glob, os, sys
for p in sorted(glob.glob(sys.argv[1] + "/*.json")):
    try: d = json.load(open(p))
    except Exception as e: print(os.path.basename(p), "unreadable", e); continue
    c = d["config"]; fw = d.get("forward", {}); st = d.get("step_fwd_bwd_opt", {}); bw = d.get("forward_bandwidth", {})
    print(f"{os.path.basename(p)[:-5]:28s} {c.get('row_stride')} elems {c.get('weight_elements')} auto {d.get('forward_auto_kernel','?'):26s} "
          f"fwd {fw.get('median_ms',0)*1e3:8.1f} us {bw.get('every_lookup_ratio_to_copy',0)*100:5.1f}% of copy step {st.get('median_ms',0)*1e3:8.1f} us")
PY
tar czf $OUT/all.tgz -C $T .
