#!/bin/bash
# Precompiled headers across checkouts: a CMake project whose TARGET gets a
# precompiled header (target_precompile_headers, added from outside through
# CMAKE_PROJECT_INCLUDE), built in checkout A through `lexpack ninja`, then in
# checkout B (another path, base_dir above both, one cache). Prints both
# builds' summaries and times, then compares every object B got with a plain
# build of B.
#
#   bench/remote/pch_checkouts.sh LEXPACK SOURCE_DIR TARGET HEADER [cmake args...]
#
# HEADER is a path inside SOURCE_DIR (the project's header to precompile).
set -u
if [ $# -lt 4 ]; then
  echo "usage: $0 LEXPACK SOURCE_DIR TARGET HEADER [cmake args...]" >&2
  exit 2
fi
LEXPACK=$(realpath "$1"); SOURCE=$(realpath "$2"); TARGET=$3; HEADER=$4; shift 4
ROOT=$(mktemp -d "${TMPDIR:-/tmp}/lexpack-pch-XXXXXX")
trap 'LEXPACK_DIR=$ROOT/cache "$LEXPACK" server --stop >/dev/null 2>&1; rm -rf "$ROOT"' EXIT
cat > "$ROOT/pch.cmake" <<CMAKE
cmake_language(DEFER DIRECTORY \${CMAKE_SOURCE_DIR} CALL cmake_language EVAL CODE [[
  if(TARGET $TARGET)
    target_precompile_headers($TARGET PRIVATE "\${CMAKE_SOURCE_DIR}/$HEADER" <vector> <string>)
  endif()
]])
CMAKE
export LEXPACK_DIR=$ROOT/cache LEXPACK_BASE_DIR=$ROOT
for c in A B; do
  cp -r "$SOURCE" "$ROOT/$c"
  rm -rf "$ROOT/$c/build"
  cmake -S "$ROOT/$c" -B "$ROOT/$c/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    "-DCMAKE_CXX_FLAGS=-ffile-prefix-map=$ROOT/$c=." -DCMAKE_PROJECT_INCLUDE="$ROOT/pch.cmake" \
    "$@" > "$ROOT/$c.configure.log" || { echo "configure failed: $ROOT/$c.configure.log"; exit 1; }
done
echo "compiles of $TARGET with the precompiled header (the one making it included): $(grep -c 'FLAGS = .*-include [^ ]*cmake_pch\.hxx' "$ROOT/A/build/build.ninja")"
for c in A B; do
  start=$(date +%s.%N)
  "$LEXPACK" ninja -k 0 -C "$ROOT/$c/build" > "$ROOT/$c.build.log" 2>&1
  end=$(date +%s.%N)
  echo "checkout $c: $(echo "$end - $start" | bc) s"
  grep '^lexpack: ' "$ROOT/$c.build.log"
done
(cd "$ROOT/B/build" && find . -name '*.o' | sort) > "$ROOT/objects"
mkdir -p "$ROOT/served"
while read -r o; do mkdir -p "$ROOT/served/$(dirname "$o")"; cp "$ROOT/B/build/$o" "$ROOT/served/$o"; done < "$ROOT/objects"
ninja -C "$ROOT/B/build" -t clean > /dev/null
ninja -k 0 -C "$ROOT/B/build" > "$ROOT/plain.log" 2>&1
n=0; differ=0
while read -r o; do
  n=$((n + 1))
  cmp -s "$ROOT/served/$o" "$ROOT/B/build/$o" || { differ=$((differ + 1)); echo "differs: $o"; }
done < "$ROOT/objects"
echo "B's objects: $n, differing from a plain build of B: $differ"
