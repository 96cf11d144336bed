#!/bin/bash
# Call 12: the store helpers folded into one (store_scaled_piece / store_out_vec with kStreaming): GPU TBE tests and
# kAuto on one-hot fp16 D=128 and set 9's 04 (no change expected: run 81 call 10 gave 159.8 and 44.4 us).
T=/tmp/c12; mkdir -p $T build/prebuilt
tar -C build/prebuilt -xaf build/carry/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
P=build/prebuilt/bin/parity
timeout 150 build/prebuilt/tests/parity_gpu_tests --gtest_filter='*Tbe*' > $T/gpu_tests.log 2>&1; echo "tests rc=$?"; tail -2 $T/gpu_tests.log; grep -a "FAILED" $T/gpu_tests.log | head
timeout 40 $P bench tbe --tables 16 --rows 1000000 --dim 128 --dtype fp16 --batch 65536 --pooling-factor one-hot --forward-only --reps 15 --out $T/f.json 2>&1 | grep "forward auto"
timeout 40 $P bench tbe --layout bench/tbe/test_set_9/test_set_9_04.json --batch 4096 --index-dtype int64 --forward-only --reps 15 --out $T/g.json 2>&1 | grep "forward auto"
tar czf $OUT/all.tgz -C $T .
