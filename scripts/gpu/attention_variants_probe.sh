#!/usr/bin/env bash
# Attention variant probe (issue 15; docs/attention.md): each named forward / backward variant's GPU
# tests under its own timeout (a kernel that deadlocks is reported as HANG and left out, instead of
# stalling the whole device run), then `parity bench attention --config targets` timing the default
# beside the variants that passed, and the torch / Triton baselines on the same lengths.
# Called like the bench_*.sh pieces (build dir as $1, $OUT set): run_all.sh runs it with
# `--only attention_variants_probe`.
#   PROBE_FORWARD=wgmma_tma_tile_major,wgmma_tma_persistent,wgmma_tma_pair_walk   # forward suffixes (test parameter names)
#   PROBE_BACKWARD=wgmma_ws,wgmma_ws_dqtma                    # backward suffixes
#   PROBE_TEST_TIMEOUT_S=60  PROBE_BENCH_TIMEOUT_S=240  PROBE_BASELINES=1
set -uo pipefail
build_dir="${1:-build/cuda}"
: "${OUT:?OUT must be set}"
here="$(dirname "$0")"
tests="$build_dir/tests/parity_gpu_tests"
parity="$build_dir/bin/parity"
test_timeout_s="${PROBE_TEST_TIMEOUT_S:-60}"
bench_timeout_s="${PROBE_BENCH_TIMEOUT_S:-240}"
summary="$OUT/attention_variants_summary.txt"
: > "$summary"

# probe_variant DIRECTION SUFFIX: prints the variant's full name when its tests pass.
probe_variant() {
  # */SUFFIX: the variant's parameterised tests only (the TMA schedules' many-sequence walk
  # test is one per variant, TmaSchedules/*/SUFFIX, so one schedule's stall names only itself).
  local direction="$1" suffix="$2" log="$OUT/tests_$2.log"
  timeout "$test_timeout_s" "$tests" --gtest_filter="*/$suffix" > "$log" 2>&1
  local rc=$? verdict
  case $rc in
    0) verdict=ok ;;
    124) verdict="HANG (killed after ${test_timeout_s} s; last test: $(grep -E '^\[ RUN' "$log" | tail -1))" ;;
    *) verdict="FAILED ($(grep -cE '^\[  FAILED' "$log") failing lines)" ;;
  esac
  echo "$direction $suffix: $verdict" >> "$summary"
  [[ $rc -eq 0 ]] && echo "attention_${direction}_gpu_${suffix}"
}

forward_ok=()
forward_list="${PROBE_FORWARD-wgmma_tma_tile_major,wgmma_tma_persistent,wgmma_tma_pair_walk}"
for s in ${forward_list//,/ }; do
  v=$(probe_variant forward "$s") && forward_ok+=("$v")
done
backward_ok=()
backward_list="${PROBE_BACKWARD-wgmma_ws,wgmma_ws_dqtma}"
for s in ${backward_list//,/ }; do
  v=$(probe_variant backward "$s") && backward_ok+=("$v")
done
cat "$summary"

join_by_comma() { local IFS=,; echo "$*"; }
bench_flags=(--forward-variants "$(join_by_comma attention_forward_gpu_wgmma_tma_seq "${forward_ok[@]}")")
[[ ${#backward_ok[@]} -gt 0 ]] && bench_flags+=(--backward-variants "$(join_by_comma "${backward_ok[@]}")")
echo "bench: ${bench_flags[*]}" | tee -a "$summary"
timeout "$bench_timeout_s" "$parity" bench attention --config targets --reps 20 --warmup 5 --warmup-ms 25 \
  --rep-ms 200 "${bench_flags[@]}" --out "$OUT/attention_targets.json" > "$OUT/bench.log" 2>&1
bench_rc=$?
echo "bench rc: $bench_rc" >> "$summary"
if [[ $bench_rc -eq 0 && "${PROBE_BASELINES:-1}" == 1 ]] && python3 -c "import torch" 2>/dev/null; then
  triton_dir="${ATTN_TRITON_DIR:-build/carry/gr_triton}"
  [[ -d "$triton_dir/generative_recommenders" ]] && export PYTHONPATH="$triton_dir${PYTHONPATH:+:$PYTHONPATH}"
  python3 "$here/torch_attention_baseline.py" --ours "$OUT/attention_targets.json" \
    --out "$OUT/attention_targets_baselines.json" > "$OUT/baselines.log" 2>&1
  echo "baselines rc: $?" >> "$summary"
fi
exit $bench_rc
