#!/bin/bash
# Call A (binary e65b027): GemmRunGpu tests; Gemm::run on both DLRM models against the bench's oracle whose 8 next
# fastest back-to-back candidates are timed again flushed (the issue-12 figure); then the forward sweep of the
# narrow-rows family on spent sets' narrow layouts with bags of >= 13 rows on average (the split-bags rule's
# development data: where kAuto keeps narrow_rows because the bags fill two waves of group slots).
T=/tmp/r93a; mkdir -p $T/sweep build/pm
[ -x build/pm/bin/parity ] || tar -C build/pm -xaf build/carry/main/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt; cat $T/smi.txt
pack() { tar czf $OUT/call_a.tgz -C $T . ; }
P=build/pm/bin/parity; s=$(date +%s)
timeout 120 build/pm/tests/parity_gpu_tests --gtest_filter='GemmRunGpu.*' > $T/gemm_run_tests.log 2>&1
echo "GemmRunGpu rc=$? $(grep -E '^\[  (PASSED|FAILED)' $T/gemm_run_tests.log | tr '\n' ' ') $(( $(date +%s) - s ))s"
for model in dlrm-kaggle dlrm-v2; do
  timeout 220 $P bench gemm-run --model $model --out $T/${model}_oracle.json > $T/${model}_oracle.log 2>&1
  echo "$model rc=$? $(( $(date +%s) - s ))s"; pack
done
python3 - $T <<'PY'
import json, math, os, sys
for model in ("dlrm-kaggle", "dlrm-v2"):
    path = os.path.join(sys.argv[1], f"{model}_oracle.json")
    if not os.path.exists(path): continue
    ratios, b2b = [], []
    for r in json.load(open(path))["results"]:
        o, run = r.get("oracle_median_ms", 0), r.get("run", {}).get("median_ms", 0)
        if o > 0 and run > 0 and not r.get("error"):
            ratios.append((o / run, r["layer"], r["pass"], o, run, r.get("oracle_back_to_back_median_ms")))
    g = math.exp(sum(math.log(x[0]) for x in ratios) / len(ratios))
    print(f"{model}: {len(ratios)} GEMMs, oracle/run geomean {g:.4f}, worst {min(ratios)[0]:.3f}, >= 0.97: {sum(x[0] >= 0.97 for x in ratios)}")
    for x in sorted(ratios)[:5]: print("   ", x)
PY
V=auto,narrow_rows,narrow_rows_split_bags,narrow_rows_light,narrow_rows_deep,lane_rows
for cfg in 2_02 4_08 5_08 5_09 7_09 9_02 9_04 9_05 9_09 11_00 12_00 14_02 6_02 11_03; do
  S=bench/tbe/test_set_${cfg%_*}; name=test_set_$cfg
  flags=$(python3 -c "
import json,sys
for c in json.load(open('$S/manifest.json'))['configurations']:
    if c['name']=='$name': print(' '.join(c['flags']))")
  # shellcheck disable=SC2086
  timeout 60 $P bench tbe --layout $S/$name.json $flags --forward-variant $V --forward-only --out $T/sweep/$name.json > $T/sweep/$name.log 2>&1
  echo "$name rc=$? $(( $(date +%s) - s ))s"
done
timeout 60 $P bench tbe --config C7 --forward-variant $V --forward-only --out $T/sweep/C7.json > $T/sweep/C7.log 2>&1; echo "C7 rc=$?"
pack
python3 - $T/sweep <<'PY' | tee $T/sweep.txt
import glob, json, os, sys
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    doc = json.load(open(path))
    print(f"{os.path.basename(path)[:-5]}: kAuto takes {doc.get('forward_auto_kernel', '?')}")
    for v, st in sorted(doc.get("forward_variants", {}).items(), key=lambda kv: kv[1].get("median_ms", 1e9)):
        if "median_ms" in st:
            b = st.get("forward_bandwidth", {})
            print(f"  {v:26s} {st['median_ms']:8.4f} ms {100 * b.get('evaluated_ratio_to_copy', 0):6.1f}% of copy")
PY
pack
