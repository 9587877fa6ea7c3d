#!/bin/sh
# The warm rebuild after `rm -rf build` of a generated CMake project with
# several static libraries and many executables linking them: no cache,
# ccache, lexpack caching compiles only, and lexpack caching archives and
# links too. Prints the median ninja time of each and the share of the
# build's step time spent in archive and link steps (from .ninja_log).
#
#   bench/link/run.sh [LEXPACK] [LIBS] [SOURCES_PER_LIB] [EXES]   (RUNS, CXX)
set -eu
LEXPACK=${1:-$(pwd)/build/bin/lexpack}
LIBS=${2:-4}
PER_LIB=${3:-6}
EXES=${4:-12}
RUNS=${RUNS:-3}
CXX=${CXX:-g++}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export LEXPACK_DIR="$WORK/lexpack-cache" CCACHE_DIR="$WORK/ccache"

# The project: LIBS libraries of PER_LIB sources each (a few standard headers
# per source), EXES executables each linking every library.
mkdir -p "$WORK/src"
{
  echo "cmake_minimum_required(VERSION 3.21)"
  echo "project(linkbench CXX)"
} > "$WORK/src/CMakeLists.txt"
l=0
while [ $l -lt "$LIBS" ]; do
  srcs=""
  s=0
  while [ $s -lt "$PER_LIB" ]; do
    f="l${l}_s${s}.cpp"
    cat > "$WORK/src/$f" <<SRC
#include <map>
#include <string>
#include <vector>
std::string l${l}_s${s}(int n) {
  std::map<int, std::string> m;
  std::vector<int> v(n, ${s});
  for (int i : v) m[i] += std::to_string(i + ${l});
  return m.empty() ? std::string() : m.begin()->second;
}
SRC
    srcs="$srcs $f"
    s=$((s + 1))
  done
  echo "add_library(lib$l STATIC$srcs)" >> "$WORK/src/CMakeLists.txt"
  l=$((l + 1))
done
e=0
while [ $e -lt "$EXES" ]; do
  {
    echo "#include <string>"
    l=0
    while [ $l -lt "$LIBS" ]; do echo "std::string l${l}_s0(int);"; l=$((l + 1)); done
    echo "int main(int argc, char**) {"
    echo "  std::string r;"
    l=0
    while [ $l -lt "$LIBS" ]; do echo "  r += l${l}_s0(argc + $e);"; l=$((l + 1)); done
    echo "  return r.empty();"
    echo "}"
  } > "$WORK/src/exe$e.cpp"
  libs=""
  l=0
  while [ $l -lt "$LIBS" ]; do libs="$libs lib$l"; l=$((l + 1)); done
  echo "add_executable(exe$e exe$e.cpp)" >> "$WORK/src/CMakeLists.txt"
  echo "target_link_libraries(exe$e$libs)" >> "$WORK/src/CMakeLists.txt"
  e=$((e + 1))
done

configure() {  # $1: extra cmake arguments
  rm -rf "$WORK/build"
  cmake -S "$WORK/src" -B "$WORK/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_COMPILER="$CXX" $1 > /dev/null
}

# Prints "seconds link_share" for one build run as "$@" in the build dir.
timed_build() {
  start=$(date +%s.%N)
  (cd "$WORK/build" && "$@" > /dev/null 2>&1)
  end=$(date +%s.%N)
  share=$(awk '!/^#/ { d = $2 - $1; all += d; if ($4 ~ /\.a$/ || $4 !~ /\.o$/) link += d }
               END { if (all > 0) printf "%.0f", 100 * link / all; else print 0 }' \
    "$WORK/build/.ninja_log")
  echo "$(echo "$end - $start" | bc) $share"
}

# Median over RUNS of a warm rebuild after rm -rf build (one cold build first).
measure() {  # $1: label, $2: cmake arguments, then the build command
  label=$1
  args=$2
  shift 2
  configure "$args"
  (cd "$WORK/build" && "$@" > /dev/null 2>&1)
  : > "$WORK/times"
  i=0
  while [ $i -lt "$RUNS" ]; do
    configure "$args"
    timed_build "$@" >> "$WORK/times"
    i=$((i + 1))
  done
  sort -n "$WORK/times" | awk -v label="$label" -v n="$RUNS" \
    'NR == int((n + 1) / 2) { printf "%-28s %6.2f s   archive+link share of step time %3d%%\n", label, $1, $2 }'
}

echo "project: $LIBS static libraries x $PER_LIB sources, $EXES executables, $CXX, runs $RUNS"
measure "no cache" "" ninja
if command -v ccache > /dev/null; then
  measure "ccache" "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache" ninja
fi
measure "lexpack, compiles only" "" env LEXPACK_CACHE_LINKS=0 "$LEXPACK" ninja
measure "lexpack, archives+links" "" "$LEXPACK" ninja
