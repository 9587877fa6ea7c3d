#!/bin/bash
# How often a source edit that defines a macro no directive reads keeps its
# closure (closure/closure_snapshot.h): the first source of the generated
# Boost project (TUS TUs) or of a copy of a real CMake project
# (SOURCE=path[:ARGS]) is rebuilt EDITS times through lexpack as the CMake
# launcher with the server, each time after its first line is made the
# define of a name never used before (`#define <NAME><k> 1`, NAME
# LEXPACK_INERT_ unless given; the previous one taken out). Each name that
# the snapshot's filter of macro reads holds by collision makes its edit
# evaluated again: the counts of the decision log's two answers tell the
# filter's collision rate on that TU.
#
#   bench/launcher/inert_defines.sh LEXPACK [LEXPACK...]     (EDITS, NAME, TUS, SOURCE)
set -eu
[ $# -ge 1 ] || { echo "usage: $0 LEXPACK [LEXPACK...]" >&2; exit 2; }
EDITS=${EDITS:-30}
NAME=${NAME:-LEXPACK_INERT_}
TUS=${TUS:-8}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"
need_tools inert-defines cmake ninja python3
alternate_binaries inert-defines "$@"
if [ -n "$SOURCE" ]; then
  FILE=${FILE:-$(first_compiled "$WORK/src")}
else
  FILE=${FILE:-$(cd "$WORK/src" && ls lib0/src/*.cc | head -1)}
fi
cp "$WORK/src/$FILE" "$WORK/original"

echo "$what, $EDITS rebuilds of $FILE, each after a define of a new name no directive reads:"
printf "%-50s %8s %10s\n" "binary" "taken" "evaluated"
for lexpack in "${BINS[@]}"; do
  stop_servers
  rm -rf "$WORK/cache" "$WORK/b" "$WORK/log"
  cp "$WORK/original" "$WORK/src/$FILE"
  # shellcheck disable=SC2086  # the arguments' words
  cmake --no-warn-unused-cli -S "$WORK/src" -B "$WORK/b" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_COMPILER_LAUNCHER="$lexpack" -DCMAKE_C_COMPILER_LAUNCHER="$lexpack" $cmake_args >/dev/null
  ninja -C "$WORK/b" >/dev/null
  for k in $(seq "$EDITS"); do
    sleep 1  # the edit lands in another second than the files before it
    sed -i "/^#define $NAME[0-9]* 1\$/d" "$WORK/src/$FILE"
    sed -i "1i #define $NAME$k 1" "$WORK/src/$FILE"
    LEXPACK_LOGFILE=$WORK/log ninja -C "$WORK/b" >/dev/null
  done
  printf "%-50s %8s %10s\n" "$lexpack" \
    "$(grep -c 'changed only in macros its evaluation never read' "$WORK/log" || true)" \
    "$(grep -c 'the source changed, and its directives changed' "$WORK/log" || true)"
done
