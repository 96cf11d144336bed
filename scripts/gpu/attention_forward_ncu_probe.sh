#!/usr/bin/env bash
# Nsight Compute counters of the attention forward kernels on one target shape (HSTU, B=512, H=4,
# d=128, bf16, causal): per launch its grid, duration, DRAM bytes read, L2 hit rate and the SM /
# memory throughput of the speed-of-light section (`--clock-control none`: clocks as they are).
# Used to test whether the forward re-reads K and V from DRAM (the schedule question in
# docs/attention.md). run_all.sh does not run it; call it directly on the device:
#   ATTN_NCU_VARIANTS=attention_forward_gpu_wgmma_tma ATTN_NCU_SEQ_LENS="2048 4096" \
#     scripts/gpu/attention_forward_ncu_probe.sh build/prebuilt
# Writes $OUT/attention_ncu_<N>_<variant>.csv and a table $OUT/attention_ncu.txt.
set -uo pipefail
build_dir="${1:-build/cuda}"
: "${OUT:?OUT must be set}"
parity="$build_dir/bin/parity"
ncu_bin="$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)"
[[ -n "$ncu_bin" ]] || { echo "attention_forward_ncu_probe: ncu not found" >&2; exit 2; }
variants="${ATTN_NCU_VARIANTS:-attention_forward_gpu_wgmma_tma}"
metrics="gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sector_hit_rate.pct,launch__grid_size,sm__throughput.avg.pct_of_peak_sustained_elapsed,gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"
for n in ${ATTN_NCU_SEQ_LENS:-4096}; do
  for variant in ${variants//,/ }; do
    csv="$OUT/attention_ncu_${n}_${variant}.csv"
    # The default forward runs first, then the named variant: both launches are profiled.
    "$ncu_bin" --clock-control none --metrics "$metrics" --kernel-name regex:attention_forward \
      --launch-count 4 --csv "$parity" bench attention --kind hstu --batch 512 --heads 4 --dim 128 \
      --seq-len "$n" --dtype bf16 --max-targets 20 --causal true --forward-only --warmup 0 --reps 1 \
      --check-rows 1 --forward-variants "$variant" > "$csv" 2> "${csv%.csv}.err"
    echo "== N=$n $variant rc=$?"
  done
done
python3 - "$OUT" <<'PY' | tee "$OUT/attention_ncu.txt"
import csv, glob, os, sys
for path in sorted(glob.glob(os.path.join(sys.argv[1], "attention_ncu_*.csv"))):
    rows = {}
    for row in csv.DictReader(l for l in open(path) if l.startswith('"')):
        rows.setdefault(row["ID"], {"kernel": row["Kernel Name"][:60]})[row["Metric Name"]] = \
            f'{row["Metric Value"]} {row.get("Metric Unit", "")}'.strip()
    print(f"## {os.path.basename(path)}")
    for launch, values in rows.items():
        print(f"  launch {launch}: " + "; ".join(f"{k}={v}" for k, v in values.items()))
PY
