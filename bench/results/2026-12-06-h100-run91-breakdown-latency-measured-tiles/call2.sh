#!/bin/bash
# Call 2: Gemm::run's measured choice (the trainer's default) on the dense layers of dlrm-kaggle and
# dlrm-v2 at batch 65536, bf16: the GemmRunGpu tests (the measured choice in both model lists), then
# per model the default pool (the model's best config of each of its 8 best tiles + the heuristic's 8)
# against the oracle, and with --no-oracle the previous default (the model's 4 best configurations +
# the heuristic's 4) and 4 tiles: ratios to the first run's oracle medians.
T=/tmp/r91c2; mkdir -p $T build/pm
[ -x build/pm/bin/parity ] || tar -C build/pm -xaf build/carry/main/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt; cat $T/smi.txt
pack() { tar czf $OUT/call2.tgz -C $T . ; }
P=build/pm/bin/parity; s=$(date +%s)
timeout 120 build/pm/tests/parity_gpu_tests --gtest_filter='GemmRunGpu.*' > $T/gemm_run_tests.log 2>&1
echo "GemmRunGpu rc=$? $(grep -E '^\[  (PASSED|FAILED)' $T/gemm_run_tests.log | tr '\n' ' ') $(( $(date +%s) - s ))s"
for model in dlrm-kaggle dlrm-v2; do
  timeout 200 $P bench gemm-run --model $model --gemm-choice measured --measured-model-list tiles --measured-per-source 8 \
    --out $T/${model}_tiles8_oracle.json > $T/${model}_tiles8_oracle.log 2>&1
  echo "$model tiles8+oracle rc=$? $(( $(date +%s) - s ))s"; pack
  for v in configs:4 tiles:4; do
    timeout 90 $P bench gemm-run --model $model --gemm-choice measured --measured-model-list ${v%%:*} --measured-per-source ${v##*:} \
      --no-oracle --out $T/${model}_${v%%:*}${v##*:}.json > $T/${model}_${v%%:*}${v##*:}.log 2>&1
    echo "$model $v rc=$? $(( $(date +%s) - s ))s"; pack
  done
done
python3 - $T <<'PY'
import json, math, os, sys
t = sys.argv[1]
for model in ("dlrm-kaggle", "dlrm-v2"):
    base = os.path.join(t, f"{model}_tiles8_oracle.json")
    if not os.path.exists(base): continue
    rows = json.load(open(base))["results"]
    oracle = {(r["layer"], r["pass"]): r.get("oracle_median_ms", 0) for r in rows}
    for name in ("tiles8_oracle", "configs4", "tiles4"):
        path = os.path.join(t, f"{model}_{name}.json")
        if not os.path.exists(path): continue
        ratios = []
        for r in json.load(open(path))["results"]:
            o, run = oracle.get((r["layer"], r["pass"]), 0), r.get("run", {}).get("median_ms", 0)
            if o > 0 and run > 0 and not r.get("error"): ratios.append(o / run)
        if ratios:
            g = math.exp(sum(map(math.log, ratios)) / len(ratios))
            print(f"{model} {name}: {len(ratios)} GEMMs, oracle/run geomean {g:.4f}, worst {min(ratios):.3f}, >= 0.97: {sum(x >= 0.97 for x in ratios)}")
PY
pack
