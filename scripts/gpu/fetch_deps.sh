#!/usr/bin/env bash
# Run HERE (the development machine), not on the GPU machine: downloads the Debian packages of the
# build's header/test dependencies (GoogleTest, CLI11, nlohmann-json, OpenBLAS's static archive and
# header, zlib's header) into .deps/, which git
# ignores locally. The GPU machine's image has CMake, ninja and CUDA but may lack these, and
# nothing can be installed there; name `.deps` in the device call's `carry` and run_all.sh
# unpacks them into /tmp/parity_deps and points CMAKE_PREFIX_PATH at them.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
mkdir -p .deps
exclude="$(git rev-parse --git-path info/exclude)"
mkdir -p "$(dirname "$exclude")"
grep -qxF '/.deps/' "$exclude" 2>/dev/null || echo '/.deps/' >> "$exclude"
(cd .deps && apt-get download libgtest-dev libgmock-dev libcli11-dev nlohmann-json3-dev \
   libopenblas-dev libopenblas-pthread-dev zlib1g-dev)
ls -l .deps
