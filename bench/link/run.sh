#!/bin/sh
# The warm rebuild after `rm -rf build`, side by side: no cache, ccache,
# lexpack caching compiles only, and lexpack caching archives and links too.
# Prints the median ninja time of each and the share of the build's step time
# spent in archive and link steps (from .ninja_log). Projects (PROJECTS):
#   generated  a CMake project of LIBS static libraries of SOURCES_PER_LIB
#              sources each and EXES executables linking them all (default)
#   self       lexpack's own build, from the source tree at HEAD (git archive,
#              so the working tree is neither read nor touched); SELF_TARGETS
#              are the ninja targets built (default: all of them)
#
#   bench/link/run.sh [LEXPACK] [LIBS] [SOURCES_PER_LIB] [EXES]
#     (RUNS: timed runs per figure, default 3; CXX, CC: the compilers;
#      PROJECTS: "generated", "self" or "generated self")
set -eu
LEXPACK=${1:-build/bin/lexpack}
# Absolute: the builds run in another directory.
case $LEXPACK in /*) ;; *) LEXPACK=$(pwd)/$LEXPACK ;; esac
[ -x "$LEXPACK" ] || { echo "$0: $LEXPACK is not an executable" >&2; exit 1; }
LIBS=${2:-4}
PER_LIB=${3:-6}
EXES=${4:-12}
RUNS=${RUNS:-3}
CXX=${CXX:-g++}
CC=${CC:-gcc}
PROJECTS=${PROJECTS:-generated}
SELF_TARGETS=${SELF_TARGETS:-}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
unset LEXPACK_LOGFILE LEXPACK_DISABLE LEXPACK_CACHE_LINKS || true

# Writes the generated project into $SRC.
generate() {
  # The project: LIBS libraries of PER_LIB sources each (a few standard headers
  # per source), EXES executables each linking every library.
  mkdir -p "$SRC"
  {
    echo "cmake_minimum_required(VERSION 3.21)"
    echo "project(linkbench CXX)"
  } > "$SRC/CMakeLists.txt"
  l=0
  while [ $l -lt "$LIBS" ]; do
    srcs=""
    s=0
    while [ $s -lt "$PER_LIB" ]; do
      f="l${l}_s${s}.cpp"
      cat > "$SRC/$f" <<SRC
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
    echo "add_library(lib$l STATIC$srcs)" >> "$SRC/CMakeLists.txt"
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
    } > "$SRC/exe$e.cpp"
    libs=""
    l=0
    while [ $l -lt "$LIBS" ]; do libs="$libs lib$l"; l=$((l + 1)); done
    echo "add_executable(exe$e exe$e.cpp)" >> "$SRC/CMakeLists.txt"
    echo "target_link_libraries(exe$e$libs)" >> "$SRC/CMakeLists.txt"
    e=$((e + 1))
  done
}

configure() {  # $1: extra cmake arguments
  rm -rf "$WORK/build"
  # shellcheck disable=SC2086
  if ! cmake -S "$SRC" -B "$WORK/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_COMPILER="$CXX" $PROJECT_ARGS $1 > "$WORK/configure.log" 2>&1; then
    cat "$WORK/configure.log" >&2
    exit 1
  fi
}

# Prints "seconds link_share" for one build run as "$@" in the build dir.
timed_build() {
  start=$(date +%s.%N)
  # shellcheck disable=SC2086
  (cd "$WORK/build" && "$@" $TARGETS > /dev/null 2>&1)
  end=$(date +%s.%N)
  share=$(awk '!/^#/ { d = $2 - $1; all += d; if ($4 ~ /\.a$/ || $4 !~ /\.o$/) link += d }
               END { if (all > 0) printf "%.0f", 100 * link / all; else print 0 }' \
    "$WORK/build/.ninja_log")
  echo "$(echo "$end - $start" | bc) $share"
}

# Median over RUNS of a warm rebuild after rm -rf build, after one build that
# fills the cache (none for "no cache": there is nothing to fill).
measure() {  # $1: label, $2: cmake arguments, then the build command
  label=$1
  args=$2
  shift 2
  if [ "$label" != "no cache" ]; then
    configure "$args"
    # shellcheck disable=SC2086
    if ! (cd "$WORK/build" && "$@" $TARGETS > "$WORK/build.log" 2>&1); then
      tail -20 "$WORK/build.log" >&2
      exit 1
    fi
  fi
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

# Every side of one project, each with a cache of its own.
measure_all() {
  export LEXPACK_DIR="$WORK/lexpack-cache-$1" CCACHE_DIR="$WORK/ccache-$1"
  measure "no cache" "" ninja
  if command -v ccache > /dev/null; then
    measure "ccache" "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache $CCACHE_C" ninja
  fi
  measure "lexpack, compiles only" "" env LEXPACK_CACHE_LINKS=0 "$LEXPACK" ninja
  measure "lexpack, archives+links" "" "$LEXPACK" ninja
}

for project in $PROJECTS; do
  case $project in
    generated)
      SRC=$WORK/src PROJECT_ARGS="" TARGETS="" CCACHE_C=""
      generate
      echo "project: $LIBS static libraries x $PER_LIB sources, $EXES executables, $CXX, runs $RUNS"
      ;;
    self)
      SRC=$WORK/self TARGETS=$SELF_TARGETS
      PROJECT_ARGS="-DCMAKE_C_COMPILER=$CC" CCACHE_C="-DCMAKE_C_COMPILER_LAUNCHER=ccache"
      mkdir -p "$SRC"
      git -C "$ROOT" archive HEAD | tar -x -C "$SRC"
      echo "project: lexpack's own build at $(git -C "$ROOT" rev-parse --short HEAD)," \
        "targets ${SELF_TARGETS:-all}, $CXX and $CC, runs $RUNS"
      ;;
    *)
      echo "$0: unknown project $project (generated, self)" >&2
      exit 1
      ;;
  esac
  measure_all "$project"
done
