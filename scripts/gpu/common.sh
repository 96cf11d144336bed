# Shared by the scripts/gpu/bench_*.sh pieces (source it; it is not a piece itself).
# step NAME COMMAND...: runs the command, prints its outcome and time, and sets failed=1 on error
# so a piece runs all its steps and still exits non-zero when one failed.
failed=0
step() {
  local name="$1"; shift
  local t0=$SECONDS
  echo "---- $name: $*"
  if "$@"; then
    echo "---- $name: ok ($((SECONDS - t0)) s)"
  else
    echo "---- $name: FAILED (exit $?, $((SECONDS - t0)) s)"
    failed=1
  fi
}
