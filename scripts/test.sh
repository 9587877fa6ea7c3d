#!/usr/bin/env bash
# Builds lexpack (Release, Ninja) into build/ and runs every test with ctest.
# The same command runs in CI. Usage: scripts/test.sh [extra ctest args]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh ${LEXPACK_CI:+--ci}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$(nproc)"
ctest --test-dir build --output-on-failure -j "$(nproc)" "$@"
