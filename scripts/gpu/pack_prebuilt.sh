#!/usr/bin/env bash
# Packs a local CUDA build's two device-run binaries (bin/parity, tests/parity_gpu_tests) into
# build/carry/prebuilt.tar.xz for the device tool's `carry` (the binaries are ~250 MB, gzip leaves
# ~55 MB, over the 64 MiB limit with the tree; xz leaves ~12 MB). Then, on the device:
#   scripts/gpu/run_all.sh --prebuilt build/carry/prebuilt.tar.xz
# Usage: scripts/gpu/pack_prebuilt.sh [BUILD_DIR]   (default build/device; build/cuda, configured
# with MPI and NCCL, adds tests/dist/parity_nccl_tests)
set -euo pipefail
build_dir="${1:-build/device}"
for f in bin/parity tests/parity_gpu_tests; do
  [[ -x "$build_dir/$f" ]] || { echo "pack_prebuilt.sh: $build_dir/$f is missing; build it first" >&2; exit 2; }
done
mkdir -p build/carry
rm -f build/carry/prebuilt.tar.gz
# A build with NCCL (the cuda preset) also carries the NCCL tests for the comm_train piece.
extra=()
[[ -x "$build_dir/tests/dist/parity_nccl_tests" ]] && extra+=(tests/dist/parity_nccl_tests)
tar -C "$build_dir" -cf - bin/parity tests/parity_gpu_tests "${extra[@]}" | xz -T2 -9 > build/carry/prebuilt.tar.xz
ls -l build/carry/prebuilt.tar.xz
