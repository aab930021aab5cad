#!/usr/bin/env bash
# Builds tzrec-cpp into build-libtorch2/ against the libtorch of a Python `torch` (PyTorch 2.x, CPU
# or CUDA builds) instead of Debian's libtorch-dev. The other dependencies are the ones
# scripts/setup.sh installs (their -dev packages, including the static libprotobuf.a). Usage:
#   PYTHON=/path/to/python3 scripts/build_libtorch2.sh [extra cmake -D options]
# See README.md, "Building against libtorch 2.x".
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
prefix=$("$PYTHON" -c 'import torch; print(torch.utils.cmake_prefix_path)')
echo "build_libtorch2: torch $("$PYTHON" -c 'import torch; print(torch.__version__)') at $prefix"
cmake -S . -B build-libtorch2 -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix${CMAKE_PREFIX_PATH:+;$CMAKE_PREFIX_PATH}" "$@"
cmake --build build-libtorch2 -j"${JOBS:-$(nproc)}"
