#!/usr/bin/env bash
# Run HERE (the development machine), not on the GPU machine: downloads the wheels that
# `pip install .` needs to build the Python package (scikit-build-core, nanobind and their
# dependencies) and that the Python tests need (pytest), into .deps/py/, which git ignores locally.
# The GPU image already has them (docs/python.md); the carried wheels are the fallback for an image
# that does not. Name `.deps` in the device call's `carry`; scripts/gpu/bench_python.sh installs
# from .deps/py with --no-index. Pure-Python wheels only (any Python version on the device).
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
mkdir -p .deps/py
exclude="$(git rev-parse --git-path info/exclude)"
mkdir -p "$(dirname "$exclude")"
grep -qxF '/.deps/' "$exclude" 2>/dev/null || echo '/.deps/' >> "$exclude"
python3 -m pip download --only-binary=:all: --python-version 3.12 --implementation py --no-deps \
  --dest .deps/py scikit-build-core nanobind packaging pathspec pytest iniconfig pluggy pygments
ls -l .deps/py
du -sh .deps/py
