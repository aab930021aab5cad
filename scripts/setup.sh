#!/usr/bin/env bash
# Installs the Debian packages tzrec-cpp needs (idempotent, non-interactive) and builds Release
# into build/. Usage: scripts/setup.sh [--no-build | --target T ...] (default: every target, tests
# included; quickstart builds only the tzrec binary).
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  build-essential cmake git pkg-config
  libtorch-dev libopenblas0-openmp libdnnl-dev libgloo-dev librdkafka-dev
  libprotobuf-dev protobuf-compiler
  libgtest-dev libgmock-dev libbenchmark-dev
  libcli11-dev nlohmann-json3-dev libfmt-dev
  libsnappy-dev libzstd-dev liblz4-dev libbrotli-dev zlib1g-dev
  libicu-dev libfaiss-dev
  clang libclang-rt-14-dev ccache
  python3-torch python3-sklearn python3-numpy python3-faiss
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# libtorch's GEMM is ~20x slower on reference BLAS: make sure the OpenMP OpenBLAS is selected.
blas_link=$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 2>/dev/null || true)
if [[ -n "$blas_link" && "$blas_link" != *openblas* ]]; then
  echo "setup: warning: libblas.so.3 resolves to $blas_link, not OpenBLAS (update-alternatives --config libblas.so.3-x86_64-linux-gnu)" >&2
fi

if [[ "${1:-}" == "--no-build" ]]; then exit 0; fi

JOBS=${JOBS:-2}
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$JOBS" "$@"
