#!/bin/bash
# Session call 4 (diagnostic): is the one-hot bf16 D=28 forward's 2x the output's partial 32-byte sectors?
# Same lookups (2M one-hot bags, 93M rows) with one feature (output rows contiguous) against 31; fp32 output;
# D=24 / 32; ncu DRAM bytes read and written for D=28 and D=32 with 31 features.
T=/tmp/c4; mkdir -p $T build/prebuilt
tar -C build/prebuilt -xaf build/carry/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
P=build/prebuilt/bin/parity
run() { n=$1; shift; timeout 90 $P bench tbe "$@" --forward-only --reps 20 --warmup 3 --out $T/$n.json > $T/$n.log 2>&1 || echo "$n failed"; echo "$n $(grep -E 'auto =' $T/$n.log | sed 's/.*auto = //') | $(grep -E '^  forward auto' $T/$n.log | awk '{printf "%s %s", $4, $9}')"; }
run f31_d28 --tables 31 --rows 3000000 --dim 28 --batch 65536 --pooling-factor one-hot --dtype bf16
run f1_d28 --tables 1 --rows 93000000 --dim 28 --batch 2031616 --pooling-factor one-hot --dtype bf16
run f31_d28_out32 --tables 31 --rows 3000000 --dim 28 --batch 65536 --pooling-factor one-hot --dtype bf16 --output-dtype fp32
run f31_d24 --tables 31 --rows 3000000 --dim 24 --batch 65536 --pooling-factor one-hot --dtype bf16
run f31_d32 --tables 31 --rows 3000000 --dim 32 --batch 65536 --pooling-factor one-hot --dtype bf16
run f1_d32 --tables 1 --rows 93000000 --dim 32 --batch 2031616 --pooling-factor one-hot --dtype bf16
for d in 28 32; do
  timeout 120 ncu --clock-control none --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum -k regex:warp_tile --launch-skip 3 --launch-count 1 \
    $P bench tbe --tables 31 --rows 3000000 --dim $d --batch 65536 --pooling-factor one-hot --dtype bf16 --forward-only --reps 3 --warmup 1 > $T/ncu_d$d.txt 2>&1
  echo "ncu D=$d: $(grep -E 'dram__bytes|gpu__time' $T/ncu_d$d.txt | awk '{printf "%s %s %s | ", $1, $2, $3}')"
done
tar czf $OUT/all.tgz -C $T .
