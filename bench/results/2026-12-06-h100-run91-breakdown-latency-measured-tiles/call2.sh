#!/bin/bash
# Call 2: Gemm::run's measured choice (the trainer's default) on the dense layers of dlrm-kaggle and
# dlrm-v2 at batch 65536, bf16: the GemmRunGpu tests (the measured choice in both model lists), then
# per model the shipped pool (the model's best 4 configurations + the heuristic's 4) against the
# oracle, and with --no-oracle the model's best config of each of its best 4 and 8 tiles
# (GemmOptions::measured_distinct_tiles): ratios to the first run's oracle medians.
T=/tmp/r91c2; mkdir -p $T build/pm
[ -x build/pm/bin/parity ] || tar -C build/pm -xaf build/carry/main/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt; cat $T/smi.txt
pack() { tar czf $OUT/call2.tgz -C $T . ; }
P=build/pm/bin/parity; s=$(date +%s)
timeout 120 build/pm/tests/parity_gpu_tests --gtest_filter='GemmRunGpu.*' > $T/gemm_run_tests.log 2>&1
echo "GemmRunGpu rc=$? $(grep -E '^\[  (PASSED|FAILED)' $T/gemm_run_tests.log | tr '\n' ' ') $(( $(date +%s) - s ))s"
for model in dlrm-kaggle dlrm-v2; do
  timeout 200 $P bench gemm-run --model $model --gemm-choice measured --measured-model-list configs --measured-per-source 4 \
    --out $T/${model}_configs4_oracle.json > $T/${model}_configs4_oracle.log 2>&1
  echo "$model configs4+oracle rc=$? $(( $(date +%s) - s ))s"; pack
  for v in tiles:4 tiles:8; do
    timeout 90 $P bench gemm-run --model $model --gemm-choice measured --measured-model-list ${v%%:*} --measured-per-source ${v##*:} \
      --no-oracle --out $T/${model}_${v%%:*}${v##*:}.json > $T/${model}_${v%%:*}${v##*:}.log 2>&1
    echo "$model $v rc=$? $(( $(date +%s) - s ))s"; pack
  done
done
python3 - $T <<'PY'
import json, math, os, sys
t = sys.argv[1]
for model in ("dlrm-kaggle", "dlrm-v2"):
    base = os.path.join(t, f"{model}_configs4_oracle.json")
    if not os.path.exists(base): continue
    rows = json.load(open(base))["results"]
    oracle = {(r["layer"], r["pass"]): r.get("oracle_median_ms", 0) for r in rows}
    for name in ("configs4_oracle", "tiles4", "tiles8"):
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
