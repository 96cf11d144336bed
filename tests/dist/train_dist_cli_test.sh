#!/usr/bin/env bash
# `parity train --distributed` under mpirun (deterministic, 12 gradient chunks, tiny):
#  1. 8 steps on 4 ranks (the reference);
#  2. 4 steps on 4 ranks, then resumed to 8 on 2 ranks, and (from a copy of the 4-rank set) on 1:
#     both must give the reference's 8 losses bit for bit (summary.json's step_losses, printed with
#     round-trip precision);
#  3. a bad flag (--gradient-chunks 5 on 4 ranks) exits 2 naming it; --reduction-timings prints the
#     overlapped reduction's timings (2 ranks, 1 KiB buckets) and --bucket-bytes 64x exits 2;
#  4. a table-wise plan from `parity plan --gpus 4` places the tables of a 4-rank run, and a
#     2-rank run refuses it naming the rank counts;
#  5. re-sharding with mixed placements: a model whose bags have at most 2 ids (so row shards'
#     partial sums change no bit, docs/training.md), planned row-wise + data-parallel for 4 ranks
#     and for 2 (other shards, other replicated tables): 4 steps on 4 ranks resumed to 8 on 2
#     give the uninterrupted 4-rank run's losses bit for bit.
# Usage: train_dist_cli_test.sh MPIEXEC PARITY_BINARY
set -u
mpiexec=$1
parity=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
run() {  # ranks, out dir, extra flags...
  local ranks=$1 out=$2
  shift 2
  timeout 120 "$mpiexec" --allow-run-as-root --oversubscribe -np "$ranks" "$parity" train --model "${model:-tiny}" \
    --batch 96 --distributed --deterministic --gradient-chunks 12 --eval-samples 500 --out "$out" "$@"
}
losses() { sed -n '/"step_losses": \[/,/\]/p' "$1/summary.json" | grep -v step_losses | tr -d ' ,]'; }
fail=0
run 4 "$dir/full" --synthetic 4000 --steps 8 >"$dir/log" 2>&1 || { cat "$dir/log"; echo "FAIL: reference run"; exit 1; }
data="$dir/full/data"
run 4 "$dir/split" --data "$data" --steps 4 >"$dir/log" 2>&1 || { cat "$dir/log"; echo "FAIL: 4-step run"; exit 1; }
cp -r "$dir/split" "$dir/split1"
for ranks in 2 1; do
  out="$dir/split"
  [ "$ranks" -eq 1 ] && out="$dir/split1"
  if ! run "$ranks" "$out" --data "$data" --steps 8 --resume >"$dir/log" 2>&1; then
    cat "$dir/log"; echo "FAIL: resume on $ranks rank(s)"; fail=1; continue
  fi
  grep -q "resumed from the checkpoint at step 4" "$dir/log" || { echo "FAIL: $ranks rank(s) did not resume at step 4"; fail=1; }
  if [ "$(losses "$out")" != "$(losses "$dir/full")" ] || [ -z "$(losses "$out")" ]; then
    echo "FAIL: losses after resuming on $ranks rank(s) differ from the uninterrupted 4-rank run:"
    paste <(losses "$out") <(losses "$dir/full"); fail=1
  else
    echo "resumed 4 -> $ranks ranks: the 8 losses equal the uninterrupted run's bit for bit"
  fi
done
timeout 120 "$mpiexec" --allow-run-as-root --oversubscribe -np 4 "$parity" train --model tiny --batch 96 \
  --distributed --gradient-chunks 5 --data "$data" --steps 1 --out "$dir/bad" >"$dir/log" 2>&1
code=$?
if [ "$code" -ne 2 ] || ! grep -q "gradient-chunks: 5" "$dir/log"; then
  cat "$dir/log"; echo "FAIL: --gradient-chunks 5 on 4 ranks: exit $code (expected 2 naming the flag)"; fail=1
fi
# The overlapped dense reduction's flags: timings printed, a malformed bucket size refused.
timeout 120 "$mpiexec" --allow-run-as-root --oversubscribe -np 2 "$parity" train --model tiny --batch 96 \
  --distributed --data "$data" --steps 3 --eval-samples 96 --bucket-bytes 1KiB --reduction-timings \
  --out "$dir/timings" >"$dir/log" 2>&1
if [ $? -ne 0 ] || ! grep -q "reduction timings (rank 0, overlapped, .* bucket(s) of <= 1024 B, mean of 2 steps)" "$dir/log"; then
  cat "$dir/log"; echo "FAIL: --reduction-timings with --bucket-bytes 1KiB"; fail=1
fi
timeout 120 "$mpiexec" --allow-run-as-root --oversubscribe -np 2 "$parity" train --model tiny --batch 96 \
  --distributed --data "$data" --steps 1 --bucket-bytes 64x --out "$dir/bad" >"$dir/log" 2>&1
code=$?
if [ "$code" -ne 2 ] || ! grep -q "bucket-bytes='64x'" "$dir/log"; then
  cat "$dir/log"; echo "FAIL: --bucket-bytes 64x: exit $code (expected 2 naming the flag)"; fail=1
fi
"$parity" plan --model tiny --gpus 4 --batch 96 --sharding table_wise --hw H100 --out "$dir/plan" \
  >"$dir/log" 2>&1 || { cat "$dir/log"; echo "FAIL: parity plan"; fail=1; }
for ranks in 4 2; do
  timeout 120 "$mpiexec" --allow-run-as-root --oversubscribe -np "$ranks" "$parity" train --model tiny --batch 96 \
    --distributed --plan "$dir/plan/plan.json" --data "$data" --steps 2 --out "$dir/planned$ranks" >"$dir/log" 2>&1
  code=$?
  if [ "$ranks" -eq 4 ] && { [ "$code" -ne 0 ] || ! grep -q "placement $dir/plan/plan.json" "$dir/log"; }; then
    cat "$dir/log"; echo "FAIL: training with the plan's placement on 4 ranks (exit $code)"; fail=1
  fi
  if [ "$ranks" -eq 2 ] && { [ "$code" -ne 2 ] || ! grep -q "placed for 4 ranks" "$dir/log"; }; then
    cat "$dir/log"; echo "FAIL: a 4-rank plan on 2 ranks: exit $code (expected 2 naming the rank counts)"; fail=1
  fi
done
cat >"$dir/mixed.json" <<'EOF'
{"name": "mixed", "dense_features": 13, "bottom_mlp": [32, 16], "top_mlp": [64, 32, 1], "interaction": {"kind": "dot"},
 "embedding": {"tables": [{"name": "C1", "rows": 1000, "dim": 16}, {"name": "C2", "rows": 500, "dim": 16, "ids_per_sample": 2},
   {"name": "C3", "rows": 2000, "dim": 16, "ids_per_sample": 2}, {"name": "C4", "rows": 100, "dim": 16},
   {"name": "C5", "rows": 40, "dim": 16}, {"name": "C6", "rows": 3000, "dim": 16}],
   "optimizer": {"kind": "rowwise_adagrad", "lr": 0.05}}}
EOF
for ranks in 4 2; do
  "$parity" plan --model "$dir/mixed.json" --gpus "$ranks" --batch 96 --sharding row_wise,data_parallel --hw H100 \
    --out "$dir/mixed_plan$ranks" >"$dir/log" 2>&1 || { cat "$dir/log"; echo "FAIL: parity plan (mixed, $ranks)"; fail=1; }
done
grep -q '"data_parallel"' "$dir/mixed_plan4/plan.json" && grep -q '"row_wise"' "$dir/mixed_plan4/plan.json" ||
  { echo "FAIL: the 4-rank plan is not row-wise + data-parallel"; fail=1; }
mixed() {  # ranks, out dir, extra flags...
  local ranks=$1 out=$2
  shift 2
  model="$dir/mixed.json" run "$ranks" "$out" --plan "$dir/mixed_plan$ranks/plan.json" "$@"
}
mixed 4 "$dir/mixed_full" --synthetic 4000 --steps 8 >"$dir/log" 2>&1 || { cat "$dir/log"; echo "FAIL: mixed reference run"; fail=1; }
mixed 4 "$dir/mixed_split" --data "$dir/mixed_full/data" --steps 4 >"$dir/log" 2>&1 || { cat "$dir/log"; echo "FAIL: mixed 4-step run"; fail=1; }
if mixed 2 "$dir/mixed_split" --data "$dir/mixed_full/data" --steps 8 --resume >"$dir/log" 2>&1 &&
   grep -q "resumed from the checkpoint at step 4" "$dir/log" &&
   [ -n "$(losses "$dir/mixed_full")" ] && [ "$(losses "$dir/mixed_split")" = "$(losses "$dir/mixed_full")" ]; then
  echo "resumed mixed placements 4 -> 2 ranks: the 8 losses equal the uninterrupted run's bit for bit"
else
  cat "$dir/log"; echo "FAIL: resuming the mixed 4-rank set on 2 ranks with another mixed plan:"
  paste <(losses "$dir/mixed_split") <(losses "$dir/mixed_full"); fail=1
fi
[ "$fail" -eq 0 ] && echo "PASS"
exit "$fail"
