#!/bin/bash
# Call 3 (named nvidia-h200; the device may be an H100): TBE held-out test set 13 (committed unmeasured in 0a1c747)
# scored once with the TBE code as it stood after set 12, torch.nn.EmbeddingBag in the same call; C2 as the guard.
# Same binary as calls 1-2 (no TBE source changed since set 12's scoring).
T=/tmp/r89c3; mkdir -p $T/set13 build/pm
tar -C build/pm -xaf build/carry/main/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt; cat $T/smi.txt
pack() { tar czf $OUT/call3.tgz -C $T . ; }
s=$(date +%s)
OUT=$T/set13 TBE_TEST_SET=bench/tbe/test_set_13 timeout 360 scripts/gpu/tbe_test_set.sh build/pm > $T/set13.log 2>&1
echo "set13 rc=$? $(( $(date +%s) - s ))s"; tail -14 $T/set13/tbe_test_set.txt | cut -c1-140; pack
timeout 60 build/pm/bin/parity bench tbe --config C2 --reps 20 --out $T/c2.json > $T/c2.log 2>&1; echo "C2 rc=$?"; grep -E "forward +median|fwd \+ bwd" $T/c2.log | head -2; pack
