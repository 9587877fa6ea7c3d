#!/bin/bash
# The warm rebuild of a CMake project built with interprocedural optimization
# (CMAKE_INTERPROCEDURAL_OPTIMIZATION=ON, Release: gcc's `-flto=auto
# -fno-fat-lto-objects` on every compile and link) after a fresh configure,
# side by side: ccache as the compiler launcher, and `lexpack ninja`. Each
# fills its cache with one cold build, then RUNS times: the build directory
# removed, configured again, and ninja timed (the configure is not). Prints
# the medians, lexpack's summary of its last run (compiles and archive/link
# steps served), and checks every program and shared library of each warm
# build byte for byte against a plain build of the same tree.
#
#   bench/link/lto.sh [LEXPACK] SOURCE_DIR...     (RUNS, default 3; CC, CXX)
set -eu
LEXPACK=$(realpath "${1:-build/bin/lexpack}")
shift || true
[ $# -gt 0 ] || { echo "usage: $0 LEXPACK SOURCE_DIR..." >&2; exit 2; }
RUNS=${RUNS:-3}
export CC=${CC:-gcc} CXX=${CXX:-g++}
for tool in cmake ninja ccache "$CC" "$CXX"; do
  command -v "$tool" >/dev/null || { echo "lto bench: $tool not found" >&2; exit 1; }
done
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"
WORK=$(mktemp -d)
unset LEXPACK_LOGFILE LEXPACK_DISABLE LEXPACK_CACHE_LINKS LEXPACK_REMOTE_STORAGE || true
trap 'LEXPACK_DIR=$WORK/lexpack-cache "$LEXPACK" server --stop >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT

# configure SRC DIR [LAUNCHER]
configure() {
  rm -rf "$2"
  cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INTERPROCEDURAL_OPTIMIZATION=ON ${3:+-DCMAKE_C_COMPILER_LAUNCHER=$3} \
    ${3:+-DCMAKE_CXX_COMPILER_LAUNCHER=$3} >/dev/null
}
# The linked outputs of build DIR (ELF programs and shared libraries), with
# their content hashes, one "hash path" per line, sorted by path.
linked() {
  (cd "$1" && find . -path ./CMakeFiles -prune -o -type f \( -perm -u+x -o -name '*.so*' \) -print |
    while read -r f; do
      [ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = "177ELF" ] && echo "$(sha256sum < "$f" | cut -c1-16) $f"
    done | sort -k2)
}

for SRC in "$@"; do
  SRC=$(realpath "$SRC")
  name=$(basename "$SRC")
  echo "== $name (LTO: $CXX $("$CXX" -dumpversion), $RUNS warm runs after a fresh configure)"
  configure "$SRC" "$WORK/plain"
  ninja -C "$WORK/plain" >/dev/null
  grep -q -- "-flto" "$WORK/plain/build.ninja" || { echo "lto bench: $name: no -flto in build.ninja" >&2; exit 1; }
  linked "$WORK/plain" > "$WORK/plain.sums"
  [ -s "$WORK/plain.sums" ] || { echo "lto bench: $name links nothing" >&2; exit 1; }

  declare -A TIMES=()
  for way in ccache lexpack; do
    cache=$WORK/$way-cache
    rm -rf "$cache"
    if [ $way = ccache ]; then
      export CCACHE_DIR=$cache CCACHE_NOHASHDIR=1
      run() { ninja -C "$WORK/b" >/dev/null; }
      launcher=ccache
    else
      export LEXPACK_DIR=$cache
      run() { "$LEXPACK" ninja -C "$WORK/b" >/dev/null 2>"$WORK/summary"; }
      launcher=
    fi
    configure "$SRC" "$WORK/b" $launcher
    run  # cold: fills the cache
    times=""
    for _ in $(seq "$RUNS"); do
      configure "$SRC" "$WORK/b" $launcher
      t0=$(now)
      run
      t1=$(now)
      times="$times $(echo "$t1 - $t0" | bc -l)"
      linked "$WORK/b" > "$WORK/$way.sums"
      if ! cmp -s "$WORK/plain.sums" "$WORK/$way.sums"; then
        echo "lto bench: $name: $way's linked outputs differ from the plain build's:" >&2
        diff "$WORK/plain.sums" "$WORK/$way.sums" >&2 || true
        exit 1
      fi
    done
    TIMES[$way]=$(printf '%s\n' $times | median)
    printf '  %-8s warm rebuild %6.2f s  (runs:%s)\n' $way "${TIMES[$way]}" "$times"
  done
  echo "  lexpack's last run:"
  grep -E "compiles|archive/link" "$WORK/summary" | sed 's/^/    /'
  printf '  lexpack %.1fx ccache; %d linked outputs byte-identical to a plain build (target: 5x, every compile and link a hit)\n' \
    "$(echo "${TIMES[ccache]} / ${TIMES[lexpack]}" | bc -l)" "$(wc -l < "$WORK/plain.sums")"
  LEXPACK_DIR=$WORK/lexpack-cache "$LEXPACK" server --stop >/dev/null 2>&1 || true
  unset TIMES
done
