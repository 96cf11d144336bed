#!/usr/bin/env bash
# Foundation piece of the device run (called by run_all.sh with the build dir as $1, $OUT set):
#   parity hw probe   -> $OUT/hw_probe.json, $OUT/calibration_<device>.json
#   parity bench hbm  -> $OUT/bench_hbm.json
#   parity bench gemm -> $OUT/bench_gemm_llama70b_r<round>.json (the five Llama-70B dev shapes,
#                        cublasGemmEx: the call torch makes) and ..._cublaslt_r<round>.json (our default)
#   torch baselines   -> $OUT/torch_reference_r<round>.json (do_bench median, same configs, same call,
#                        same warm-up)
#   comparison        -> $OUT/foundation_comparison.json (+ .txt): ours vs torch, within 3%?
# Each step is guarded: a failing step is reported and the rest still run; exit 1 if any failed.
set -uo pipefail
build_dir="${1:-build/cuda}"
parity="$build_dir/bin/parity"
: "${OUT:?OUT must be set}"
here="$(cd "$(dirname "$0")" && pwd)"
export PYTHONUNBUFFERED=1
# shellcheck source=scripts/gpu/common.sh
source "$here/common.sh"

# The five Llama-70B shapes of the dev suite (bench/shapes/gemm_shapes_dev.csv, family llm, the
# rows named llama70b_* plus square8k), as a suite file of their own.
shapes="$OUT/gemm_shapes_llama70b.csv"
{
  echo "name,m,n,k,family"
  grep -E '^(llama70b_[a-z_]+|square8k),' bench/shapes/gemm_shapes_dev.csv
} > "$shapes"
echo "shapes: $(($(wc -l < "$shapes") - 1)) rows from bench/shapes/gemm_shapes_dev.csv"

copy_bytes_total=$((4 << 30))  # 2 GiB read + 2 GiB written, the same count for torch copy_

step hw_probe "$parity" hw probe --results "$OUT/hw_probe.json"
for f in data/calibration/*.json; do  # the probe's calibration file(s), for the lead to commit
  [[ -e "$f" ]] && cp "$f" "$OUT/calibration_$(basename "$f")"
done
step bench_hbm "$parity" bench hbm --bytes "$copy_bytes_total" --warmup 10 --reps 50 --out "$OUT/bench_hbm.json"
# Harness check against torch. Both sides warm up for the same time (GEMM_WARMUP_MS) before timing
# GEMM_REP_MS of repetitions: an H200 drops from 1980 to ~1500 MHz within ~100 ms of sustained GEMM
# load, so a short warm-up on one side and a long one on the other compares power states, not
# timers (seen: the same nvjet kernel at 0.344 ms cold and 0.40 ms warm, on both sides). Rounds are
# interleaved (ours, torch, ours, torch, ...) and each side's figure is the median of its rounds.
# `--library cublas` makes the very call torch's default backend makes for F.linear (cublasGemmEx,
# cuBLAS's own kernel choice), so both sides time the same kernel.
warmup_ms="${GEMM_WARMUP_MS:-500}"
rep_ms="${GEMM_REP_MS:-100}"
rounds="${FOUNDATION_ROUNDS:-3}"
# The L2 flush is do_bench's too (256 MiB written before each repetition): the flush adds to the
# power draw, so a different flush size is a different power state.
gemm_args=(--shapes "$shapes" --dtype bf16 --warmup 10 --reps 50 --warmup-ms "$warmup_ms" --rep-ms "$rep_ms"
           --flush-bytes "${GEMM_FLUSH_BYTES:-256MiB}")
gemm_files=() lt_files=() torch_files=()
for round in $(seq 1 "$rounds"); do
  step "bench_gemm_r$round" "$parity" bench gemm "${gemm_args[@]}" --library cublas \
    --out "$OUT/bench_gemm_llama70b_r$round.json"
  # Our default path (cuBLASLt's heuristic top-1), compared with torch's default beside it.
  step "bench_gemm_cublaslt_r$round" "$parity" bench gemm "${gemm_args[@]}" --library cublaslt \
    --out "$OUT/bench_gemm_llama70b_cublaslt_r$round.json"
  step "torch_reference_r$round" python3 "$here/torch_reference.py" --shapes "$shapes" \
    --copy-bytes "$copy_bytes_total" --warmup-ms "$warmup_ms" --rep-ms "$rep_ms" --preheat-ms "${TORCH_PREHEAT_MS:-2000}" \
    --out "$OUT/torch_reference_r$round.json"
  gemm_files+=(--gemm "$OUT/bench_gemm_llama70b_r$round.json")
  lt_files+=(--gemm "$OUT/bench_gemm_llama70b_cublaslt_r$round.json")
  torch_files+=(--torch "$OUT/torch_reference_r$round.json")
done
step compare python3 "$here/compare_foundation.py" "${gemm_files[@]}" "${torch_files[@]}" \
  --hbm "$OUT/bench_hbm.json" --out "$OUT/foundation_comparison.json" --text "$OUT/foundation_comparison.txt"
step compare_cublaslt python3 "$here/compare_foundation.py" "${lt_files[@]}" "${torch_files[@]}" \
  --hbm "$OUT/bench_hbm.json" --out "$OUT/foundation_comparison_cublaslt.json" \
  --text "$OUT/foundation_comparison_cublaslt.txt"

# Boost protocol: the same comparison with the clock state pinned by rest instead of by load. Each
# timing (ours per shape, torch per shape) starts after BOOST_COOLDOWN_MS idle and lasts ~25 ms
# (5 ms warm-up, 20 ms of repetitions), inside the window before the power limit lowers the clock,
# so both sides run at the maximum SM clock and differ only by their timers.
cooldown_ms="${BOOST_COOLDOWN_MS:-1500}"
boost_gemm=() boost_torch=()
for round in $(seq 1 "$rounds"); do
  while IFS=, read -r name m n k family; do
    one="$OUT/boost_shape_$name.csv"
    printf 'name,m,n,k,family\n%s,%s,%s,%s,%s\n' "$name" "$m" "$n" "$k" "$family" > "$one"
    sleep "$(awk "BEGIN { print $cooldown_ms / 1000 }")"
    step "boost_gemm_${name}_r$round" "$parity" bench gemm --shapes "$one" --dtype bf16 --library cublas \
      --warmup 1 --reps 10 --warmup-ms 5 --rep-ms 20 --flush-bytes "${GEMM_FLUSH_BYTES:-256MiB}" \
      --out "$OUT/boost_gemm_${name}_r$round.json"
  done < <(tail -n +2 "$shapes")
  for f in "$OUT"/boost_gemm_*_r"$round".json; do boost_gemm+=(--gemm "$f"); done
  step "boost_torch_r$round" python3 "$here/torch_reference.py" --shapes "$shapes" --warmup-ms 5 --rep-ms 20 \
    --cooldown-ms "$cooldown_ms" --default-backend-only --skip-copy --out "$OUT/boost_torch_r$round.json"
  boost_torch+=(--torch "$OUT/boost_torch_r$round.json")
done
step compare_boost python3 "$here/compare_foundation.py" "${boost_gemm[@]}" "${boost_torch[@]}" \
  --out "$OUT/foundation_comparison_boost.json" --text "$OUT/foundation_comparison_boost.txt"
exit $failed
