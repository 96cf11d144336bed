#!/bin/bash
# Call C (the same binary as call B): TBE test set 17 (seed 20270108, committed unmeasured in run 93) scored once with
# torch in the same call, C2 as the guard; then Gemm::run on both DLRM models against the oracle.
T=/tmp/r94c; mkdir -p $T/set17 build/pm
[ -x build/pm/bin/parity ] || tar -C build/pm -xaf build/carry/main/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt; cat $T/smi.txt
pack() { tar czf $OUT/call_c.tgz -C $T . ; }
P=build/pm/bin/parity; s=$(date +%s)
( while sleep 20; do pack; done ) & packer=$!
OUT=$T/set17 TBE_TEST_SET=bench/tbe/test_set_17 timeout 120 scripts/gpu/tbe_test_set.sh build/pm > $T/set17.log 2>&1
echo "set17 rc=$? $(( $(date +%s) - s ))s"; tail -14 $T/set17/tbe_test_set.txt | cut -c1-170; kill $packer; pack
grep -H "^kernels:" $T/set17/tbe_test_set_17_*.log | cut -c1-160
timeout 50 $P bench tbe --config C2 --reps 20 --out $T/c2.json > $T/c2.log 2>&1; echo "C2 rc=$?"; grep -E "forward +median|fwd \+ bwd" $T/c2.log | head -2; pack
for model in dlrm-kaggle dlrm-v2; do
  timeout 110 $P bench gemm-run --model $model --out $T/${model}.json > $T/${model}.log 2>&1
  echo "$model rc=$? $(( $(date +%s) - s ))s"; pack
done
python3 - $T <<'PY' | tee $T/gemm_run_summary.txt
import json, math, os, sys
for model in ("dlrm-kaggle", "dlrm-v2"):
    path = os.path.join(sys.argv[1], f"{model}.json")
    if not os.path.exists(path): continue
    rows = [r for r in json.load(open(path))["results"] if r.get("oracle_median_ms", 0) > 0 and r.get("run", {}).get("median_ms", 0) > 0 and not r.get("error")]
    ratios = sorted((r["oracle_median_ms"] / r["run"]["median_ms"], r["layer"], r["pass"]) for r in rows)
    over = sorted(r["host_overhead_us"] for r in rows)
    g = math.exp(sum(math.log(x[0]) for x in ratios) / len(ratios))
    print(f"{model}: {len(ratios)} GEMMs, geomean {g:.4f}, worst {ratios[0][0]:.3f} {ratios[0][1:]}, >= 0.97: {sum(x[0] >= 0.97 for x in ratios)}, "
          f"host overhead median {over[len(over) // 2]:.2f} us max {over[-1]:.2f} us")
PY
pack
