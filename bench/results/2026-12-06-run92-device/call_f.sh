#!/bin/bash
# Call F: Gemm::run's measured choice on random-normal scratch operands (was 0x3c in every byte) and with a runoff
# (GemmOptions::measured_finalists: the 3 fastest of the first pass timed again side by side, 5 interleaved rounds;
# the oracle now always runs one). GemmRunGpu tests; then per DLRM model: finalists 0 with the oracle, finalists 3,
# finalists 0, finalists 3 (no oracle), every run scored against the first run's oracle medians.
T=/tmp/r92f; mkdir -p $T build/pm
[ -x build/pm/bin/parity ] || tar -C build/pm -xaf build/carry/main/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt; cat $T/smi.txt
pack() { tar czf $OUT/call_f.tgz -C $T . ; }
P=build/pm/bin/parity; s=$(date +%s)
timeout 120 build/pm/tests/parity_gpu_tests --gtest_filter='GemmRunGpu.*' > $T/gemm_run_tests.log 2>&1
echo "GemmRunGpu rc=$? $(grep -E '^\[  (PASSED|FAILED)' $T/gemm_run_tests.log | tr '\n' ' ') $(( $(date +%s) - s ))s"
for model in dlrm-kaggle dlrm-v2; do
  timeout 200 $P bench gemm-run --model $model --measured-finalists 0 --out $T/${model}_f0_oracle.json > $T/${model}_f0_oracle.log 2>&1
  echo "$model f0+oracle rc=$? $(( $(date +%s) - s ))s"; pack
  for v in f3a f0b f3b; do
    timeout 120 $P bench gemm-run --model $model --measured-finalists ${v:1:1} --no-oracle --out $T/${model}_$v.json > $T/${model}_$v.log 2>&1
    echo "$model $v rc=$? $(( $(date +%s) - s ))s"; pack
  done
done
python3 - $T <<'PY'
import json, math, os, sys
t = sys.argv[1]
for model in ("dlrm-kaggle", "dlrm-v2"):
    base = os.path.join(t, f"{model}_f0_oracle.json")
    if not os.path.exists(base): continue
    rows = json.load(open(base))["results"]
    oracle = {(r["layer"], r["pass"]): r.get("oracle_median_ms", 0) for r in rows}
    for name in ("f0_oracle", "f3a", "f0b", "f3b"):
        path = os.path.join(t, f"{model}_{name}.json")
        if not os.path.exists(path): continue
        ratios, total = [], 0.0
        for r in json.load(open(path))["results"]:
            o, run = oracle.get((r["layer"], r["pass"]), 0), r.get("run", {}).get("median_ms", 0)
            if o > 0 and run > 0 and not r.get("error"):
                ratios.append(o / run); total += run
        if ratios:
            g = math.exp(sum(map(math.log, ratios)) / len(ratios))
            print(f"{model} {name}: {len(ratios)} GEMMs, oracle/run geomean {g:.4f}, worst {min(ratios):.3f}, "
                  f">= 0.97: {sum(x >= 0.97 for x in ratios)}, sum of run medians {total:.3f} ms")
PY
pack
