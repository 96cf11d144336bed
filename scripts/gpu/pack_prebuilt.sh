#!/usr/bin/env bash
# Packs a local CUDA build's two device-run binaries (bin/parity, tests/parity_gpu_tests) into
# build/carry/prebuilt.tar.gz for the device tool's `carry` (the binaries together exceed its
# 64 MiB limit; compressed they are ~10 MB). Then, on the device:
#   scripts/gpu/run_all.sh --prebuilt build/carry/prebuilt.tar.gz
# Usage: scripts/gpu/pack_prebuilt.sh [BUILD_DIR]   (default build/device)
set -euo pipefail
build_dir="${1:-build/device}"
for f in bin/parity tests/parity_gpu_tests; do
  [[ -x "$build_dir/$f" ]] || { echo "pack_prebuilt.sh: $build_dir/$f is missing; build it first" >&2; exit 2; }
done
mkdir -p build/carry
tar -C "$build_dir" -czf build/carry/prebuilt.tar.gz bin/parity tests/parity_gpu_tests
ls -l build/carry/prebuilt.tar.gz
