#!/usr/bin/env bash
# Python piece of the device run (called by run_all.sh with the build dir as $1, $OUT set; or by
# hand: OUT=/tmp/out scripts/gpu/bench_python.sh build/cuda). The CUDA build of the library inside
# pip takes minutes, so give it the call, with the CLI (the C++ path) prebuilt here:
#   scripts/gpu/run_all.sh --prebuilt build/carry/prebuilt.tar.xz --only python --skip-tests \
#     --piece-timeout 570 --deadline 590
#   1. pip-installs the package with CUDA into the device's python3 (the one with torch), building
#      the torch ops against that torch (--no-build-isolation; no network: the image's
#      scikit-build-core and nanobind, or the wheels scripts/gpu/fetch_py_deps.sh put in .deps/py);
#   2. times the torch op path against the C++ path (`parity bench tbe`, the build dir's CLI) on C2,
#      forward and step, in one process ($OUT/python_tbe_c2.json);
#   3. times examples/torch_dlrm.py's three variants (stock; Parity embeddings; Parity embeddings +
#      Parity dot interaction), bf16, batch 65536, in one process ($OUT/python_dlrm.json);
#   4. times the dot interaction alone, torch's expression against Parity's op, as torch_dlrm.py runs
#      it ($OUT/python_interaction.json, python/bench/interaction_op.py);
#   5. runs the Python tests (python/tests) on the GPU.
set -uo pipefail
build_dir="${1:-build/cuda}"
: "${OUT:?OUT must be set}"
here="$(dirname "$0")"
# shellcheck source=common.sh
source "$here/common.sh"  # step NAME COMMAND..., failed
python=python3
export CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)"

pip_args=(--no-build-isolation --no-index)
if compgen -G ".deps/py/*.whl" > /dev/null; then
  # A no-op where the image's versions satisfy these; otherwise the carried wheels.
  pip_args+=(--find-links .deps/py)
  step build_requirements $python -m pip install --no-index --find-links .deps/py "scikit-build-core>=0.10" \
    "nanobind>=2.0" pytest
fi
$python -m pip list 2>/dev/null | grep -iE "^(torch|scikit-build-core|nanobind|pytest|numpy|triton) "

# The carried Debian packages (run_all.sh unpacks .deps/*.deb and exports CMAKE_PREFIX_PATH); zlib
# takes the carried header with the image's own runtime library, as in run_all.sh.
cmake_defines=(-C cmake.define.PARITY_ENABLE_CUDA=ON -C cmake.define.PARITY_TORCH=ON
               -C "cmake.define.CMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc"
               -C "cmake.define.CMAKE_CUDA_ARCHITECTURES=90a-real"  # the H200 only: half the kernel builds
               -C build-dir=build/python-cuda)
# CMAKE_PREFIX_PATH puts the carried packages first, where the libz.so link dangles, so CMake would
# take the carried libz.a, which is not position-independent and cannot go into the extension
# modules: name the image's shared library.
zlib_so="$(ls /usr/lib/x86_64-linux-gnu/libz.so /lib/x86_64-linux-gnu/libz.so.1 /usr/lib/x86_64-linux-gnu/libz.so.1 2>/dev/null | head -1)"
if [[ -d /tmp/parity_deps && -n "$zlib_so" ]]; then
  zlib_include=/usr/include
  [[ -f /usr/include/zlib.h ]] || zlib_include=/tmp/parity_deps/usr/include
  cmake_defines+=(-C "cmake.define.ZLIB_INCLUDE_DIR=$zlib_include" -C "cmake.define.ZLIB_LIBRARY=$zlib_so")
fi

step pip_install_cuda $python -m pip install -v "${pip_args[@]}" "${cmake_defines[@]}" . > "$OUT/python_pip_install.log" 2>&1
tail -5 "$OUT/python_pip_install.log"
step build_info $python -c "import parity, parity.torch; print(parity.build_info())"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
# The timings first (the targets), then the tests, so a call cut short keeps the figures.
if [[ -x "$build_dir/bin/parity" ]]; then
  step torch_ops_vs_cxx_C2 $python python/bench/torch_ops_c2.py --config C2 --parity-cli "$build_dir/bin/parity" \
    --out "$OUT/python_tbe_c2.json"
else
  echo "---- torch_ops_vs_cxx_C2: skipped (no $build_dir/bin/parity for the C++ path)"
  failed=1
fi
step torch_dlrm $python examples/torch_dlrm.py --batch 65536 --json "$OUT/python_dlrm.json"
step interaction_op $python python/bench/interaction_op.py --out "$OUT/python_interaction.json"
step python_tests $python -m pytest -q python/tests -p no:cacheprovider
exit $failed
