#!/bin/bash
# A Meson project's warm rebuild after `ninja -t clean`, links included, side
# by side in one run: ccache as Meson picks it up by itself (ccache on PATH,
# CC and CXX unset), and `lexpack ninja` on a build configured with CC and CXX
# set to the compiler alone. Each cache is filled by one build (lexpack's
# server by two more). Prints each run, the median ratio, and how many of
# lexpack's archive and link steps hit in the last run.
#
#   bench/link/meson.sh LEXPACK SOURCE_DIR [meson setup options...]   (RUNS, CC, CXX)
set -eu
LEXPACK=$(realpath "$1")
SRC=$(realpath "$2")
shift 2
RUNS=${RUNS:-3}
CC=${CC:-gcc}
CXX=${CXX:-g++}
for tool in ccache meson ninja bc "$CC" "$CXX"; do
  command -v "$tool" >/dev/null || { echo "meson bench: $tool not found" >&2; exit 1; }
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
# Meson uses ccache when it finds it and CC/CXX are unset.
env -u CC -u CXX meson setup "$WORK/cc" "$SRC" --buildtype=release "$@" >/dev/null
CC=$CC CXX=$CXX meson setup "$WORK/lx" "$SRC" --buildtype=release "$@" >/dev/null
grep -q ccache "$WORK/cc/build.ninja" || { echo "meson bench: meson did not pick up ccache" >&2; exit 1; }
ninja -C "$WORK/cc" >/dev/null
LEXPACK_SERVER=0 "$LEXPACK" ninja -C "$WORK/lx" >/dev/null 2>&1
compiles=$(ninja -C "$WORK/lx" -t commands | grep -c -- ' -c ' || true)
links=$(ninja -C "$WORK/lx" -t commands | grep -v -- ' -c ' | grep -cE '(^| )(ar|[a-z+]+) .* -o ' || true)
sleep 2  # signatures settle: the server may trust what it validates
for _ in 1 2; do
  ninja -C "$WORK/lx" -t clean >/dev/null
  LEXPACK_SERVER=1 "$LEXPACK" ninja -C "$WORK/lx" >/dev/null 2>&1
done
CC_T="" LX_T=""
for run in $(seq "$RUNS"); do
  ninja -C "$WORK/cc" -t clean >/dev/null
  a=$(seconds ninja -C "$WORK/cc")
  ninja -C "$WORK/lx" -t clean >/dev/null
  t0=$(now)
  LEXPACK_SERVER=1 "$LEXPACK" ninja -C "$WORK/lx" >/dev/null 2>"$WORK/summary"
  b=$(echo "$(now) - $t0" | bc -l)
  CC_T+="$a " LX_T+="$b "
  printf "run %d: ccache %.2f s, lexpack ninja %.2f s (load %s)\n" "$run" "$a" "$b" \
    "$(cut -d' ' -f1 /proc/loadavg)"
done
c=$(med "$CC_T")
l=$(med "$LX_T")
echo "$(basename "$SRC"): $compiles compiles and about $links other steps, warm rebuild after ninja -t clean, median of $RUNS"
printf "  ccache %.2f s, lexpack ninja %.2f s: %.1fx (target 3x)\n" "$c" "$l" "$(echo "$c / $l" | bc -l)"
echo "  lexpack's last summary:"
sed 's/^/    /' "$WORK/summary"
