#!/bin/bash
# Call A2 (branch sort-counts-in-scatter; replaces call A): two binaries carried, build/carry/main_cli (the CLI of main
# at 560378d: the portable sort with a histogram launch per pass) and build/carry/branch (this
# commit: each pass's scatter counts the next pass's digits). 1. The branch binary's GPU tests of the
# radix sorts and the backward (bit-for-bit against std::stable_sort, the portable sort and the fp64
# reference). 2. Set 13's two one-hot SGD step misses (00, 04): main's portable sort, the branch's
# portable sort, the branch's vendor sort. 3. By the rule fixed here before any timing: if the tests
# pass, test set 14 is scored once with the branch binary, with `--backward-variant vendor_sort` if
# the vendor sort's step is more than 1% faster than the branch's portable sort on both, else with the
# default; whichever is scored becomes the default. 4. The forward sweep with the time left.
T=/tmp/r90a2; mkdir -p $T build/pm build/pb
[ -x build/pm/bin/parity ] || tar -C build/pm -xaf build/carry/main_cli/prebuilt.tar.xz
[ -x build/pb/bin/parity ] || tar -C build/pb -xaf build/carry/branch/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt; cat $T/smi.txt
pack() { tar czf "$OUT/call_a2.tgz" -C $T . ; }
s=$(date +%s)
timeout 150 build/pb/tests/parity_gpu_tests --gtest_filter='GpuTbeBackward*:*RadixSort*' > $T/gpu_tests.log 2>&1
tests_rc=$?
echo "gpu tests rc=$tests_rc $(grep -E '^\[  (PASSED|FAILED)' $T/gpu_tests.log | tr '\n' ' ') $(( $(date +%s) - s ))s"
grep -E '^\[  FAILED' $T/gpu_tests.log | head
S=bench/tbe/test_set_13
flags() { python3 -c "
import json, sys
for c in json.load(open(sys.argv[1]))['configurations']:
    if c['name'] == sys.argv[2]: print(' '.join(c['flags']))" $S/manifest.json $1; }
for n in 00 04; do
  for run in main:row branch:row branch:vendor_sort; do
    b=${run%%:*}; v=${run##*:}; bin=build/pm/bin/parity; [ $b = branch ] && bin=build/pb/bin/parity
    # shellcheck disable=SC2046  # the manifest's flags are words
    timeout 45 $bin bench tbe --layout $S/test_set_13_$n.json $(flags test_set_13_$n) --reps 20 --warmup 3 \
      --backward-variant $v --out $T/time_${n}_${b}_$v.json > $T/time_${n}_${b}_$v.log 2>&1
    echo "$n $b $v rc=$? $(grep -E 'fwd \+ bwd' $T/time_${n}_${b}_$v.log | head -1 | tr -s ' ')"
  done
done
pack
decision=$(python3 - $T $tests_rc <<'PY'
import json, os, sys
t, tests_rc = sys.argv[1], int(sys.argv[2])
def step(n, name):
    p = os.path.join(t, f"time_{n}_{name}.json")
    return json.load(open(p))["step_fwd_bwd_opt"]["median_ms"] if os.path.exists(p) else float("nan")
vendor = [step(n, "branch_vendor_sort") / step(n, "branch_row") for n in ("00", "04")]
counts = [step(n, "branch_row") / step(n, "main_row") for n in ("00", "04")]
choice = "none" if tests_rc != 0 else ("vendor_sort" if all(r < 0.99 for r in vendor) else "default")
print(choice, "vendor/branch", " ".join(f"{r:.3f}" for r in vendor), "branch/main", " ".join(f"{r:.3f}" for r in counts))
PY
)
echo "decision: $decision" | tee $T/decision.txt
choice=${decision%% *}
if [ "$choice" != none ]; then
  extra=""; [ "$choice" = vendor_sort ] && extra="--backward-variant vendor_sort"
  mkdir -p $T/set14
  OUT=$T/set14 TBE_TEST_SET=bench/tbe/test_set_14 TBE_TEST_SET_FLAGS="$extra" \
    timeout 300 bash scripts/gpu/tbe_test_set.sh build/pb > $T/set14.log 2>&1
  echo "set 14 rc=$? $(( $(date +%s) - s ))s"; tail -n 13 $T/set14.log
fi
pack
left=$(( ${CALL_LIMIT_S:-570} - ($(date +%s) - s) ))
if [ $left -gt 60 ]; then
  mkdir -p $T/sweep
  OUT=$T/sweep TBE_SWEEP_SET=bench/tbe/test_set_13 TBE_SWEEP_CONFIGS=test_set_13_03,test_set_13_05,test_set_13_06 \
    timeout $left bash scripts/gpu/tbe_forward_sweep_probe.sh build/pb > $T/sweep.log 2>&1
  echo "sweep rc=$? $(( $(date +%s) - s ))s"; tail -n 30 $T/sweep.log
fi
pack
