#!/usr/bin/env bash
# The Python step of scripts/test: `pip install .` into a fresh virtual environment under build/,
# then pytest on python/tests. Each phase is timed (docs/python.md has the figures).
#   python/test.sh            with torch (from PyPI, ~2.5 GB download): the torch ops are built
#                             against it and the torch tests run
#   python/test.sh --no-torch the binding's non-torch tests only (the torch tests report as skipped)
# The package is built with --no-build-isolation so the torch ops see the venv's torch; the build
# requirements come from PyPI into the same venv.
set -euo pipefail
cd "$(dirname "$0")/.."
with_torch=1
case "${1:-}" in
  --no-torch) with_torch=0 ;;
  "") ;;
  *) echo "python/test.sh: unknown argument '$1' (--no-torch or nothing)" >&2; exit 2 ;;
esac
venv=build/py-venv
seconds() { echo $(( $(date +%s) - $1 )); }

t0=$(date +%s)
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip
"$venv/bin/python" -m pip install -q "scikit-build-core>=0.10" "nanobind>=2.0" numpy pytest
echo "python: venv with build requirements, numpy, pytest: $(seconds "$t0") s"
if (( with_torch )); then
  t0=$(date +%s)
  "$venv/bin/python" -m pip install -q torch
  echo "python: pip install torch: $(seconds "$t0") s ($(du -sh "$venv" | cut -f1) venv)"
fi
t0=$(date +%s)
# The compiler cache, as for the CMake presets (ccache when present).
if command -v ccache > /dev/null; then export CMAKE_CXX_COMPILER_LAUNCHER=ccache; fi
export CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)"
"$venv/bin/python" -m pip install -q --no-build-isolation .
echo "python: pip install . (library + binding$( (( with_torch )) && echo ' + torch ops')): $(seconds "$t0") s"
t0=$(date +%s)
# From outside the source tree, so the installed package (not python/parity) is what is tested.
(cd build && "../$venv/bin/python" -m pytest -q ../python/tests -p no:cacheprovider)
echo "python: pytest: $(seconds "$t0") s"
