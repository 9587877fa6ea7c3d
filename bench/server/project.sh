#!/bin/bash
# A real project's warm rebuild after `ninja -t clean`, side by side in one
# run: ccache as the CMake launcher, `lexpack ninja`, and `lexpack ninja` with
# `lexpack server` (whose compiles start lexpack-client). Each cache is filled
# by one build first, and the server's entries by two more. Prints each run's
# seconds and the median ratios to ccache.
#
#   bench/server/project.sh LEXPACK SOURCE_DIR [cmake arguments...]   (RUNS)
set -eu
LEXPACK=$(realpath "$1")
SRC=$(realpath "$2")
shift 2
RUNS=${RUNS:-3}
for tool in ccache cmake ninja bc; do
  command -v "$tool" >/dev/null || { echo "project bench: $tool not found" >&2; exit 1; }
done
WORK=$(mktemp -d)
export LEXPACK_DIR="$WORK/lexpack-cache" CCACHE_DIR="$WORK/ccache" CCACHE_DIRECT=1
unset LEXPACK_LOGFILE LEXPACK_DISABLE LEXPACK_SERVER CCACHE_DISABLE || true
trap 'LEXPACK_SERVER=1 "$LEXPACK" server --stop >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT
. "$(cd "$(dirname "$0")" && pwd)/../lib.sh"

seconds() {  # seconds of one command, its output dropped
  local t0 t1
  t0=$(now)
  "$@" >/dev/null 2>&1
  t1=$(now)
  echo "$t1 - $t0" | bc -l
}
cmake -S "$SRC" -B "$WORK/cc" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache "$@" >/dev/null
cmake -S "$SRC" -B "$WORK/lx" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
ninja -C "$WORK/cc" >/dev/null
LEXPACK_SERVER=0 "$LEXPACK" ninja -C "$WORK/lx" >/dev/null 2>&1
compiles=$(ninja -C "$WORK/lx" -t commands | grep -c -- ' -c ' || true)
sleep 2  # signatures settle: the server may trust what it validates
for i in 1 2; do
  ninja -C "$WORK/lx" -t clean >/dev/null
  LEXPACK_SERVER=1 "$LEXPACK" ninja -C "$WORK/lx" >/dev/null 2>&1
done
CC_T="" LX_T="" SV_T=""
for run in $(seq "$RUNS"); do
  ninja -C "$WORK/cc" -t clean >/dev/null
  a=$(seconds ninja -C "$WORK/cc")
  ninja -C "$WORK/lx" -t clean >/dev/null
  b=$(LEXPACK_SERVER=0 seconds "$LEXPACK" ninja -C "$WORK/lx")  # the server is on by default
  ninja -C "$WORK/lx" -t clean >/dev/null
  c=$(LEXPACK_SERVER=1 seconds "$LEXPACK" ninja -C "$WORK/lx")
  CC_T+="$a " LX_T+="$b " SV_T+="$c "
  printf "run %d: ccache %.2f s, lexpack-ninja %.2f s, lexpack-ninja+server %.2f s (load %s)\n" \
    "$run" "$a" "$b" "$c" "$(cut -d' ' -f1 /proc/loadavg)"
done
c=$(med "$CC_T")
l=$(med "$LX_T")
s=$(med "$SV_T")
echo "$(basename "$SRC"): $compiles compile commands, warm rebuild after ninja -t clean, median of $RUNS"
printf "  ccache %.2f s, lexpack ninja %.2f s (%.1fx), lexpack ninja + server %.2f s (%.1fx)\n" \
  "$c" "$l" "$(echo "$c / $l" | bc -l)" "$s" "$(echo "$c / $s" | bc -l)"
