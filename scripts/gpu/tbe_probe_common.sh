# Shared by the TBE probes (sourced after build_dir is set): the device library path, the two
# binaries, and the GPU-test step.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
parity="$build_dir/bin/parity"
tests="$build_dir/tests/parity_gpu_tests"

# run_tbe_gpu_tests LOG FILTER: the GPU tests matching FILTER into $OUT/LOG; prints the verdict
# lines and returns the test binary's exit status.
run_tbe_gpu_tests() {
  "$tests" --gtest_filter="$2" > "$OUT/$1" 2>&1
  local rc=$?
  echo "tests rc=$rc"
  grep -E "^\[  (PASSED|FAILED) |^\[  FAILED  \]|tests ran" "$OUT/$1" | head -30
  return $rc
}

# run_tbe_bench PREFIX NAME ARGS...: one `parity bench tbe` run into $OUT/PREFIX_NAME.{json,log}
# with $reps repetitions; prints "== NAME rc=..." (and the log's tail on failure); sets failed=1
# on failure.
run_tbe_bench() {
  local prefix="$1" name="$2"
  shift 2
  "$parity" bench tbe "$@" --reps "$reps" --warmup 3 --out "$OUT/${prefix}_${name}.json" \
    > "$OUT/${prefix}_${name}.log" 2>&1
  local rc=$?
  echo "== $name rc=$rc"
  if [ "$rc" != 0 ]; then
    tail -3 "$OUT/${prefix}_${name}.log"
    failed=1
  fi
}
