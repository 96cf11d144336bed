#!/bin/bash
# Call T14: TBE held-out test set 14 (seed 20270105, committed unmeasured) scored once on this device with the TBE
# code as it stands (no TBE kernel or rule changed since set 13, which was scored on an H100: this is the target
# device's figure), torch.nn.EmbeddingBag in the same call; C2 as the guard; first the sort options' GPU tests
# (sort_counts_in_scatter's layout since 48cf426 has not run on a GPU).
T=/tmp/r91t14; mkdir -p $T/set14 build/pm
[ -x build/pm/bin/parity ] || tar -C build/pm -xaf build/carry/main/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt; cat $T/smi.txt
pack() { tar czf $OUT/call_t14.tgz -C $T . ; }
s=$(date +%s)
[ "${SKIP_SORT_TESTS:-0}" = 1 ] || timeout 90 build/pm/tests/parity_gpu_tests --gtest_filter='GpuRadixSort*:GpuTbeBackwardSortCounts*:GpuTbeBackwardVendorSort*' \
  > $T/gpu_tests.log 2>&1; echo "sort tests rc=$? $(grep -E '^\[  (PASSED|FAILED)' $T/gpu_tests.log | tr '\n' ' ') $(( $(date +%s) - s ))s"
# Packed every 20 s as well, so a call cut short by the device budget still brings back what ran.
( while sleep 20; do pack; done ) & packer=$!
OUT=$T/set14 TBE_TEST_SET=bench/tbe/test_set_14 timeout 380 scripts/gpu/tbe_test_set.sh build/pm > $T/set14.log 2>&1
echo "set14 rc=$? $(( $(date +%s) - s ))s"; tail -14 $T/set14/tbe_test_set.txt | cut -c1-160; kill $packer; pack
timeout 50 build/pm/bin/parity bench tbe --config C2 --reps 20 --out $T/c2.json > $T/c2.log 2>&1; echo "C2 rc=$?"; grep -E "forward +median|fwd \+ bwd" $T/c2.log | head -2; pack
