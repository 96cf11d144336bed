#!/bin/bash
# Call C (call B's binary): GemmRunGpu tests; Gemm::run on both DLRM models with the measured choice timed by
# flushed medians (GemmOptions::measured_flush_l2, the new default) against the oracle (its pass flushed too, then
# 8 finalists), then the back-to-back choice (--measured-timing back-to-back --no-oracle) scored against that oracle.
T=/tmp/r93c; mkdir -p $T build/pm
[ -x build/pm/bin/parity ] || tar -C build/pm -xaf build/carry/main/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt; cat $T/smi.txt
pack() { tar czf $OUT/call_c.tgz -C $T . ; }
P=build/pm/bin/parity; s=$(date +%s)
timeout 120 build/pm/tests/parity_gpu_tests --gtest_filter='GemmRunGpu.*:GemmGpu*' > $T/gemm_run_tests.log 2>&1
echo "GemmRunGpu rc=$? $(grep -E '^\[  (PASSED|FAILED)' $T/gemm_run_tests.log | tr '\n' ' ') $(( $(date +%s) - s ))s"
for model in dlrm-kaggle dlrm-v2; do
  timeout 200 $P bench gemm-run --model $model --out $T/${model}_flushed_oracle.json > $T/${model}_flushed_oracle.log 2>&1
  echo "$model flushed+oracle rc=$? $(( $(date +%s) - s ))s"; pack
  timeout 100 $P bench gemm-run --model $model --measured-timing back-to-back --no-oracle --out $T/${model}_b2b.json > $T/${model}_b2b.log 2>&1
  echo "$model back-to-back rc=$? $(( $(date +%s) - s ))s"; pack
done
python3 - $T <<'PY' | tee $T/summary.txt
import json, math, os, sys
t = sys.argv[1]
for model in ("dlrm-kaggle", "dlrm-v2"):
    base = os.path.join(t, f"{model}_flushed_oracle.json")
    if not os.path.exists(base): continue
    rows = json.load(open(base))["results"]
    oracle = {(r["layer"], r["pass"]): r.get("oracle_median_ms", 0) for r in rows}
    for name in ("flushed_oracle", "b2b"):
        path = os.path.join(t, f"{model}_{name}.json")
        if not os.path.exists(path): continue
        ratios, total, create = [], 0.0, 0.0
        for r in json.load(open(path))["results"]:
            o, run = oracle.get((r["layer"], r["pass"]), 0), r.get("run", {}).get("median_ms", 0)
            create += r.get("create_ms", 0)
            if o > 0 and run > 0 and not r.get("error"):
                ratios.append((o / run, r["layer"], r["pass"], round(o * 1e3, 1), round(run * 1e3, 1)))
        g = math.exp(sum(math.log(x[0]) for x in ratios) / len(ratios))
        print(f"{model} {name}: {len(ratios)} GEMMs, oracle/run geomean {g:.4f}, worst {min(ratios)[0]:.3f}, "
              f">= 0.97: {sum(x[0] >= 0.97 for x in ratios)}, sum of run medians {total + sum(x[4] for x in ratios) / 1e3:.3f} ms, "
              f"create {create:.0f} ms")
        for x in sorted(ratios)[:4]: print("   ", x)
PY
pack
