#!/bin/bash
# Call I (binary 96de0f5: call C's code plus the model's no-split rule for K-loops of at most two tiles, which
# changes the model's share of the measured pool on short-K layers): Gemm::run on both DLRM models against the
# oracle again (a second run of the default, flushed choice).
T=/tmp/r93i; mkdir -p $T build/pm
[ -x build/pm/bin/parity ] || tar -C build/pm -xaf build/carry/main/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt; cat $T/smi.txt
P=build/pm/bin/parity; s=$(date +%s)
timeout 120 build/pm/tests/parity_gpu_tests --gtest_filter='GemmRunGpu.*' > $T/gemm_run_tests.log 2>&1
echo "GemmRunGpu rc=$? $(grep -E '^\[  (PASSED|FAILED)' $T/gemm_run_tests.log | tr '\n' ' ')"
for model in dlrm-kaggle dlrm-v2; do
  timeout 220 $P bench gemm-run --model $model --out $T/${model}.json > $T/${model}.log 2>&1
  echo "$model rc=$? $(( $(date +%s) - s ))s"; tar czf $OUT/call_i.tgz -C $T .
done
python3 - $T <<'PY' | tee $T/summary.txt
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
tar czf $OUT/call_i.tgz -C $T .
