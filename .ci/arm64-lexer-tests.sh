#!/bin/sh
# Cross-builds the lexer and its tests for ARM64 with Debian's aarch64 toolchain
# and runs them under qemu-aarch64, so the NEON kernel is tested on x86-64 hosts.
# Usage: .ci/arm64-lexer-tests.sh [build-dir]   (default: build-arm64)
set -eu

cd "$(dirname "$0")/.."
build_dir=${1:-build-arm64}

for tool in aarch64-linux-gnu-g++ qemu-aarch64 cmake ninja; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "arm64-lexer-tests: missing $tool (apt-get install g++-aarch64-linux-gnu qemu-user cmake ninja-build)" >&2
    exit 1
  fi
done

cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
  -DLEXPACK_LEXER_ONLY=ON -DLEXPACK_BUILD_BENCH=OFF
cmake --build "$build_dir" -j "${JOBS:-2}"
cd "$build_dir"
# The suites iterate over every available kernel (scalar and NEON here).
ctest --output-on-failure -j "${JOBS:-2}"
