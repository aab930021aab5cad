#!/usr/bin/env bash
# Installs what is missing, builds Release into build/ and runs every test with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cd build
ctest --output-on-failure -j"${JOBS:-2}" "$@"
