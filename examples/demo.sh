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
# Only what the demo runs: the lexpack program and the plugin `lexpack ninja`
# preloads (tests and benchmarks are built by scripts/test.sh).
cmake --build build -j "$(nproc)" --target lexpack lexpack_plugin

lexpack=$root/build/bin/lexpack
export LEXPACK_DIR=${LEXPACK_DIR:-$root/build/demo-cache}
example_build=$root/build/example
rm -rf "$LEXPACK_DIR" "$example_build"

build_example() {
  rm -rf "$example_build"
  # No launcher in the project: `lexpack ninja` routes the compiles itself.
  cmake -S examples/project -B "$example_build" -G Ninja >/dev/null
  local start end
  start=$(date +%s%N)
  "$lexpack" ninja -C "$example_build" 2>"$root/build/demo-summary.txt"
  end=$(date +%s%N)
  cat "$root/build/demo-summary.txt"
  echo "demo: $1 build took $(( (end - start) / 1000000 )) ms"
}

echo "demo: cache directory $LEXPACK_DIR"
build_example "first (empty cache)"
"$lexpack" stats
build_example "second (build directory wiped)"
grep -Eq '^lexpack: ([1-9][0-9]*) compiles, \1 hits,' "$root/build/demo-summary.txt" ||
  { echo "demo: the second build was not served entirely from the cache" >&2; exit 1; }
"$lexpack" stats
"$example_build/scene"
