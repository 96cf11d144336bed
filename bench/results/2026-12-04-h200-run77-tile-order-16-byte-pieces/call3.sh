#!/bin/bash
# Session call 3: 16-byte pieces on padded 16-bit rows in the warp tiles (stores masked per vector). GPU tests
# (TBE, row stride), then packed vs aligned on the development layouts of call 1 and run 74's one-hot D=28 layout.
T=/tmp/c3; mkdir -p $T build/prebuilt
tar -C build/prebuilt -xaf build/carry/prebuilt.tar.xz
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
P=build/prebuilt/bin/parity; G=build/prebuilt/tests/parity_gpu_tests
pack() { tar czf $OUT/all.tgz -C $T . ; }
timeout 200 stdbuf -oL $G --gtest_brief=1 --gtest_filter='*Tbe*:*RowStride*' > $T/gpu_tests.log 2>&1
echo "tests rc=$? $(grep -E '^\[  (PASSED|FAILED)' $T/gpu_tests.log | tr '\n' ' ')"; grep -E '^\[  FAILED' $T/gpu_tests.log | head -5; pack
run() { n=$1; shift; timeout 90 $P bench tbe "$@" --reps 20 --warmup 3 --out $T/$n.json > $T/$n.log 2>&1 || echo "$n failed"; echo "$n $(grep -E 'auto =' $T/$n.log | sed 's/.*auto = //') | $(grep -E '^  forward (auto +)?median|fwd \+ bwd' $T/$n.log | awk '{printf "%s %s %s | ", $1, $2, $4}')"; }
for rs in packed aligned; do
  run onehot_bf16_28_31x3M_$rs --tables 31 --rows 3000000 --dim 28 --batch 65536 --pooling-factor one-hot --dtype bf16 --forward-only --row-stride $rs
  run f_bf16_28_onehot_$rs --tables 8 --rows 2000000 --dim 28 --batch 65536 --pooling-factor one-hot --dtype bf16 --forward-only --row-stride $rs
  run f_bf16_12_onehot_$rs --tables 16 --rows 1000000 --dim 12 --batch 65536 --pooling-factor one-hot --dtype bf16 --forward-only --row-stride $rs
  run f_bf16_60_L20_$rs --tables 8 --rows 1000000 --dim 60 --batch 16384 --pooling-factor 20 --dtype bf16 --forward-only --row-stride $rs
  run f_fp16_44_L4_$rs --tables 16 --rows 1000000 --dim 44 --batch 32768 --pooling-factor 4 --dtype fp16 --forward-only --row-stride $rs
  run f_fp16_156_L8_$rs --tables 8 --rows 1000000 --dim 156 --batch 16384 --pooling-factor 8 --dtype fp16 --forward-only --row-stride $rs
  run s_bf16_28_L8_$rs --tables 8 --rows 2000000 --dim 28 --batch 32768 --pooling-factor 8 --dtype bf16 --optimizer rowwise-adagrad --row-stride $rs
done
run onehot_bf16_32_31x3M --tables 31 --rows 3000000 --dim 32 --batch 65536 --pooling-factor one-hot --dtype bf16 --forward-only
run n_C2 --config C2; pack
