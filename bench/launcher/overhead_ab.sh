#!/bin/bash
# The CPU of lexpack's own processes (the server, lexpack-main, the front
# door and the client) over the compilers' (cc1plus, cc1, as, the driver) in
# a cold build, from `perf record -a` samples by process name: a figure the
# compilers' own noise does not drown, unlike the whole build's CPU
# (miss_cpu.sh). Two or more lexpack binaries alternated RUNS times in one
# run, so that a change is measured against what it changed. On the
# generated Boost project (TUS TUs) or a copy of a real CMake project
# (SOURCE=path[:ARGS]). MODE=launcher: lexpack as the CMake launcher;
# MODE=ninja: `lexpack ninja`. PHASE=cold: the cold build is measured;
# PHASE=edit: after it, EDITS rebuilds each after a directive line added
# to one source (FILE, else the build's first): EDIT=define (a `#define` of
# a name nothing reads, whose closure is taken again) or EDIT=include (an
# `#include <stddef.h>` line more, whose closure is evaluated again); the
# edit-and-rebuild case. Needs perf and the right to
# sample the system (root, or kernel.perf_event_paranoid <= 0).
#
#   bench/launcher/overhead_ab.sh LEXPACK [LEXPACK...]
#     (RUNS, TUS, MODE, SOURCE, PHASE, EDITS, EDIT, FILE)
set -eu
[ $# -ge 1 ] || { echo "usage: $0 LEXPACK [LEXPACK...]" >&2; exit 2; }
RUNS=${RUNS:-3}
TUS=${TUS:-40}
MODE=${MODE:-launcher}
PHASE=${PHASE:-cold}
EDITS=${EDITS:-5}
EDIT=${EDIT:-define}
case "$EDIT" in
  define) EDIT_LINE='#define LEXPACK_BENCH_EDIT_$k 1' ;;
  include) EDIT_LINE='#include <stddef.h> // LEXPACK_BENCH_EDIT_$k' ;;
  *) echo "EDIT is define or include" >&2; exit 2 ;;
esac
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"
need_tools overhead cmake ninja perf python3
alternate_binaries overhead "$@"
if [ -n "$SOURCE" ]; then
  FILE=${FILE:-$(first_compiled "$WORK/src")}
else
  FILE=${FILE:-$(cd "$WORK/src" && ls lib0/src/*.cc | head -1)}
fi

# One cold build with binary $1 (and with PHASE=edit, the rebuilds after
# each edit): "compiler% lexpack%" of all samples of what is measured.
one_build() {
  local lexpack=$1 cmd
  stop_servers
  rm -rf "$WORK/cache" "$WORK/b"
  local launcher=()
  [ "$MODE" = launcher ] &&
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER="$lexpack" -DCMAKE_C_COMPILER_LAUNCHER="$lexpack")
  # shellcheck disable=SC2086  # the arguments' words
  cmake --no-warn-unused-cli -S "$WORK/src" -B "$WORK/b" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    "${launcher[@]}" $cmake_args >/dev/null
  cmd=(ninja -C "$WORK/b")
  [ "$MODE" = ninja ] && cmd=("$lexpack" ninja -C "$WORK/b")
  if [ "$PHASE" = edit ]; then
    "${cmd[@]}" >/dev/null 2>&1
    # shellcheck disable=SC2016  # expanded by the inner shell
    perf record -q -a -F 999 -o "$WORK/perf.data" -- bash -c 'n=$1 file=$2 line=$3; shift 3
      for k in $(seq "$n"); do
        sleep 1  # the edit lands in another second than the files before it
        sed -i "1i ${line//\$k/$k}" "$file"
        "$@" >/dev/null 2>&1
      done' _ "$EDITS" "$WORK/src/$FILE" "$EDIT_LINE" "${cmd[@]}"
    sed -i '/LEXPACK_BENCH_EDIT_/d' "$WORK/src/$FILE"
  else
    perf record -q -a -F 999 -o "$WORK/perf.data" -- "${cmd[@]}" >/dev/null 2>&1
  fi
  stop_servers
  perf report -i "$WORK/perf.data" --sort comm --stdio -g none 2>/dev/null | awk '
    /^#/ || NF < 2 {next}
    {sub("%", "", $1)}
    $2 == "cc1plus" || $2 == "cc1" || $2 == "as" || $2 == "c++" || $2 == "g++" || $2 == "cc" ||
      $2 == "gcc" {c += $1}
    $2 == "exe" || $2 == "lexpack-main" || $2 == "lexpack" || $2 == "lexpack-client" {x += $1}
    END {printf "%.3f %.3f\n", c, x}'
}

declare -A SHARES
for run in $(seq "$RUNS"); do
  for i in "${!BINS[@]}"; do
    read -r c x < <(one_build "${BINS[$i]}")
    SHARES[$i]+="$(printf "%.2f" "$(echo "100 * $x / $c" | bc -l)") "
  done
  echo "run $run of $RUNS done (load $(cut -d' ' -f1 /proc/loadavg))" >&2
done
phase="cold build"
[ "$PHASE" = edit ] && phase="$EDITS rebuilds after a directive edit ($EDIT) of $FILE"
echo "$what, MODE=$MODE, $phase: lexpack's processes' CPU over the compilers' (perf samples), median of $RUNS, each run alternating"
first=$(med "${SHARES[0]}")
for i in "${!BINS[@]}"; do
  m=$(med "${SHARES[$i]}")
  printf "%-60s %6.2f%%  (runs: %s) %5.2fx the first\n" "${BINS[$i]}" "$m" "${SHARES[$i]}" \
    "$(echo "$m / $first" | bc -l)"
done
