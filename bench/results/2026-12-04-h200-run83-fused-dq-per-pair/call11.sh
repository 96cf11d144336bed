#!/bin/bash
# Call 11: TBE held-out test set 12 scored once (31ba7a6: the final code of this round), torch in the same call; C2 guard.
T=/tmp/c11; mkdir -p $T build/prebuilt
tar -C build/prebuilt -xaf build/carry/prebuilt.tar.xz
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
pack() { tar czf $OUT/all.tgz -C $T . ; }
mkdir -p $T/set12
OUT=$T/set12 TBE_TEST_SET=bench/tbe/test_set_12 timeout 240 scripts/gpu/tbe_test_set.sh build/prebuilt > $T/set12.log 2>&1; echo "set12 rc=$?"; tail -14 $T/set12/tbe_test_set.txt | cut -c1-130
grep -h 'auto =' $T/set12/tbe_test_set_12_*.log | sed 's/.*auto = //' | paste -sd' '; pack
timeout 60 build/prebuilt/bin/parity bench tbe --config C2 --reps 20 --out $T/c2.json > $T/c2.log 2>&1; echo "C2 rc=$?"; grep -E "forward +median|fwd \+ bwd" $T/c2.log | head -2; pack
