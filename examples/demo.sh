#!/usr/bin/env bash
# lexpack's main job on the bundled example: build lexpack, then build
# examples/project with Ninja through lexpack twice. The first build compiles
# and fills the cache; the second starts from an empty build directory and is
# served from the cache. Usage: examples/demo.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

scripts/install-deps.sh ${LEXPACK_CI:+--ci}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)"

lexpack=$root/build/bin/lexpack
export LEXPACK_DIR=${LEXPACK_DIR:-$root/build/demo-cache}
example_build=$root/build/example
rm -rf "$LEXPACK_DIR" "$example_build"

build_example() {
  rm -rf "$example_build"
  cmake -S examples/project -B "$example_build" -G Ninja \
    -DCMAKE_CXX_COMPILER_LAUNCHER="$lexpack" >/dev/null
  local start end
  start=$(date +%s%N)
  ninja -C "$example_build"
  end=$(date +%s%N)
  echo "demo: $1 build took $(( (end - start) / 1000000 )) ms"
}

echo "demo: cache directory $LEXPACK_DIR"
build_example "first (empty cache)"
"$lexpack" stats
build_example "second (build directory wiped)"
"$lexpack" stats
"$example_build/scene"
