#!/usr/bin/env bash
# The one-call device workflow. Runs ON the GPU machine, from the repository root, with $OUT set:
#   1. configure and build the `cuda` preset (incremental when build/cuda is already there);
#   2. run the GPU tests (ctest -L gpu);
#   3. run every scripts/gpu/bench_*.sh with the build dir as $1, each guarded by a timeout so one
#      failure or hang does not stop the rest;
#   4. print a summary table.
# Pieces write into a staging folder (exported to them as $OUT). At the end $OUT receives the
# summary, foundation_comparison.json and one results.tar.gz with every log and results file:
# the device tool returns at most 8 files, so everything else travels inside the archive.
#
# $OUT is refreshed after every step, so a call cut off at its time limit still returns the steps
# done so far.
#
# Usage: scripts/gpu/run_all.sh [--only NAME] [--skip-tests] [--piece-timeout S] [--deadline S]
#   --only NAMES     build, then run only these pieces (comma-separated): "tests" or bench names
#                    ("foundation" for scripts/gpu/bench_foundation.sh), e.g. --only tests,tbe;
#                    probes (scripts/gpu/*_probe.sh) run only when named, e.g. --only tbe_narrow_probe
#   --skip-tests     do not run the GPU tests
#   --piece-timeout  limit for each bench piece (default 240 s)
#   --tests-timeout  limit for the GPU tests (default 360 s: the whole suite takes over 200 s)
#   --prebuilt DIR   use a build made elsewhere (carried to the device, e.g. build/device, or the
#                    archive scripts/gpu/pack_prebuilt.sh writes, build/carry/prebuilt.tar.xz) instead
#                    of configuring and building here; GPU tests then run the test binary directly
#   --targets "T..." build only these CMake targets (e.g. "parity_cli parity_gpu_tests")
#   --deadline       whole-run budget (default 570 s, under the device tool's 600 s per command):
#                    a piece is cut to the time left, and skipped when under 20 s is left
set -uo pipefail

only=""
prebuilt=""
build_targets=""
skip_tests=0
piece_timeout=240
tests_timeout=360
deadline=570
while [[ $# -gt 0 ]]; do
  case "$1" in
    --only) only="${2:?--only needs a piece name}"; shift 2 ;;
    --only=*) only="${1#--only=}"; shift ;;
    --skip-tests) skip_tests=1; shift ;;
    --piece-timeout) piece_timeout="${2:?--piece-timeout needs seconds}"; shift 2 ;;
    --tests-timeout) tests_timeout="${2:?--tests-timeout needs seconds}"; shift 2 ;;
    --prebuilt) prebuilt="${2:?--prebuilt needs a build dir}"; shift 2 ;;
    --deadline) deadline="${2:?--deadline needs seconds}"; shift 2 ;;
    --targets) build_targets="${2:?--targets needs target names}"; shift 2 ;;
    -h|--help) sed -n '2,26p' "$0"; exit 0 ;;
    *) echo "run_all.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
only="${only#bench_}"; only="${only%.sh}"

if [[ -z "${OUT:-}" ]]; then
  echo "run_all.sh: OUT is not set; expected the folder whose files come back (e.g. OUT=/tmp/out)" >&2
  exit 2
fi
if [[ ! -f CMakePresets.json ]]; then
  echo "run_all.sh: run from the repository root (no CMakePresets.json in $PWD)" >&2
  exit 2
fi

final_out="$OUT"
stage="$(mktemp -d /tmp/parity_run.XXXXXX)"
export OUT="$stage"
export PYTHONUNBUFFERED=1
# Never use NVLink multicast on the shared machines.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
build_dir="build/cuda"
start_all=$SECONDS
extra_cmake_args=()

# Build dependencies carried as Debian packages (scripts/gpu/fetch_deps.sh, `carry: [".deps"]`)
# for an image that lacks them: unpacked outside the system tree, found through CMAKE_PREFIX_PATH.
if compgen -G ".deps/*.deb" > /dev/null; then
  deps_root=/tmp/parity_deps
  mkdir -p "$deps_root"
  for deb in .deps/*.deb; do dpkg -x "$deb" "$deps_root"; done
  export CMAKE_PREFIX_PATH="$deps_root/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  # zlib: the carried header with the image's own runtime library (the carried libz.so link points
  # at an absolute path the image may not have).
  if [[ ! -f /usr/include/zlib.h && -f "$deps_root/usr/include/zlib.h" ]]; then
    zlib_so="$(ls /lib/x86_64-linux-gnu/libz.so.1 /usr/lib/x86_64-linux-gnu/libz.so.1 /usr/lib64/libz.so.1 2>/dev/null | head -1)"
    extra_cmake_args+=("-DZLIB_INCLUDE_DIR=$deps_root/usr/include" "-DZLIB_LIBRARY=$zlib_so")
  fi
  echo "run_all.sh: using carried packages from .deps ($(ls .deps/*.deb | wc -l) .deb) via CMAKE_PREFIX_PATH"
fi
summary_rows=()

record() {  # name status seconds log
  summary_rows+=("$(printf '%-22s %-10s %6ss  %s' "$1" "$2" "$3" "$4")")
}

# Seconds a piece may take: the piece limit, cut to what is left of the run's deadline.
time_left() { echo $((deadline - (SECONDS - start_all) - 10)); }
piece_limit() {  # [LIMIT_S], default the piece limit
  local left limit="${1:-$piece_timeout}"; left=$(time_left)
  if (( left < limit )); then echo "$left"; else echo "$limit"; fi
}

# Writes summary.txt, results.tar.gz and foundation_comparison.json into $OUT (after each step).
snapshot() {
  local summary="$stage/summary.txt"
  {
    # The binary's own build provenance (the copied tree's git metadata may be older than the
    # files, and a prebuilt binary may come from another checkout).
    local built; built="$("$build_dir/bin/parity" --version 2>/dev/null | head -1)"
    echo "parity device run: $(date -u +%Y-%m-%dT%H:%M:%SZ), binary: ${built:-not built yet}"
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader 2>/dev/null | sed 's/^/gpu: /'
    printf '%-22s %-10s %7s  %s\n' "step" "status" "time" "log (inside results.tar.gz)"
    printf '%s\n' "${summary_rows[@]}"
    echo "total: $((SECONDS - start_all)) s"
    if [[ -f "$stage/foundation_comparison.txt" ]]; then echo; cat "$stage/foundation_comparison.txt"; fi
  } > "$summary"
  tar -czf "$final_out/results.tar.gz" -C "$stage" . 2>/dev/null
  cp "$summary" "$final_out/summary.txt"
  if [[ -f "$stage/foundation_comparison.json" ]]; then cp "$stage/foundation_comparison.json" "$final_out/"; fi
}

finish() {
  snapshot
  echo
  cat "$stage/summary.txt"
}

# ---- 1. build ----
t0=$SECONDS
{ cmake --version | head -1; g++ --version | head -1; nvcc --version 2>/dev/null | tail -1; } > "$stage/build.log" 2>&1
if [[ -n "$prebuilt" ]]; then
  # A build carried from the development machine: device time is not spent compiling. An archive
  # (scripts/gpu/pack_prebuilt.sh: bin/parity + tests/parity_gpu_tests, ~12 MB as .tar.xz where the
  # two binaries are ~250 MB, above the device tool's 64 MiB carry limit) is unpacked first.
  if [[ "$prebuilt" == *.tar.gz || "$prebuilt" == *.tar.xz ]]; then
    mkdir -p build/prebuilt && tar -C build/prebuilt -xaf "$prebuilt"
    prebuilt=build/prebuilt
  fi
  export PARITY_DATA_DIR="${PARITY_DATA_DIR:-$PWD/data}"  # the binaries hold their build tree's path
  build_dir="$prebuilt"
  if [[ -x "$build_dir/bin/parity" ]]; then
    record build "prebuilt" 0 "$build_dir"
    snapshot
  else
    record build FAILED 0 "--prebuilt $build_dir has no bin/parity"
    finish
    exit 1
  fi
elif cmake --preset cuda "${extra_cmake_args[@]}" >> "$stage/build.log" 2>&1 &&
     cmake --build --preset cuda -j "$(nproc)" ${build_targets:+--target $build_targets} -- -k 0 >> "$stage/build.log" 2>&1; then
  record build ok $((SECONDS - t0)) build.log
  snapshot
else
  record build FAILED $((SECONDS - t0)) build.log
  echo "run_all.sh: build failed; last lines of build.log:" >&2
  grep -E "error|Error" "$stage/build.log" | head -20 >&2
  tail -20 "$stage/build.log" >&2
  finish
  exit 1
fi

failures=0
# ---- 2. GPU tests ----
if [[ $skip_tests -eq 0 && ( -z "$only" || ",$only," == *",tests,"* ) ]]; then
  t0=$SECONDS
  if [[ -n "$prebuilt" || -n "$build_targets" ]]; then
    # Line-buffered, so a run cut by its time limit still leaves the tests it finished in the log.
    gpu_test_command=(stdbuf -oL "$build_dir/tests/parity_gpu_tests" --gtest_brief=1)
    # GPU_TESTS_FILTER=PATTERN runs a subset (a gtest filter), e.g. 'AttentionGpu*' for a kernel round.
    [[ -n "${GPU_TESTS_FILTER:-}" ]] && gpu_test_command+=("--gtest_filter=$GPU_TESTS_FILTER")
  else
    gpu_test_command=(ctest --test-dir "$build_dir" -L gpu --output-on-failure)
  fi
  if timeout "$(piece_limit "$tests_timeout")" "${gpu_test_command[@]}" > "$stage/gpu_tests.log" 2>&1; then
    status=ok
  else
    status=FAILED
    failures=$((failures + 1))
  fi
  passed_line=$(grep -E "tests passed|tests failed|PASSED|FAILED" "$stage/gpu_tests.log" | tail -2 | tr '\n' ' ')
  record gpu_tests "$status" $((SECONDS - t0)) "gpu_tests.log: ${passed_line:-no summary}"
  snapshot
fi

# ---- 3. bench pieces ----
# Probes (scripts/gpu/*_probe.sh, e.g. tbe_narrow_probe) run the same way, only when --only names them.
for script in scripts/gpu/bench_*.sh scripts/gpu/*_probe.sh; do
  [[ -e "$script" ]] || continue
  name="$(basename "$script" .sh)"; name="${name#bench_}"
  if [[ "$name" == *_probe && ",$only," != *",$name,"* ]]; then continue; fi
  if [[ -n "$only" && ",$only," != *",$name,"* ]]; then continue; fi
  limit=$(piece_limit)
  if (( $(time_left) < 20 )); then
    record "bench_$name" "SKIPPED" 0 "no time left under --deadline $deadline"
    failures=$((failures + 1))
    continue
  fi
  t0=$SECONDS
  echo "== bench piece: $name (limit ${limit} s)"
  if timeout "$limit" bash "$script" "$build_dir" > "$stage/bench_$name.log" 2>&1; then
    status=ok
  else
    rc=$?
    status="FAILED($rc)"
    [[ $rc -eq 124 ]] && status="TIMEOUT"
    failures=$((failures + 1))
    tail -5 "$stage/bench_$name.log" | sed "s/^/  [$name] /"
  fi
  record "bench_$name" "$status" $((SECONDS - t0)) "bench_$name.log"
  snapshot
done

finish
[[ $failures -eq 0 ]]
