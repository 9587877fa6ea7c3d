#!/bin/bash
# What a miss costs in CPU over the plain compile, on a project whose TUs use
# Boost (bench/scan/gen_boost_project.py), or a copy of a real CMake project
# (SOURCE=path[:ARGS]; FILE=the source edited, else its first): a cold build
# from an empty cache, then one source edited and rebuilt (the generated
# project's code, a real one's first line: a #define). Side by side in one
# run: no cache, lexpack as the CMake launcher without and with the server,
# and `lexpack ninja` (server on). CPU is user+sys of every process the build
# waited for plus the server's own (it runs detached), read from /proc.
# Prints medians over RUNS and each way's CPU over the plain build (target:
# at most +3%).
#
#   bench/launcher/miss_cpu.sh [LEXPACK] [TUS]     (RUNS, CXX, SOURCE, FILE)
set -eu
LEXPACK=$(realpath "${1:-$(pwd)/build/bin/lexpack}")
TUS=${2:-24}
RUNS=${RUNS:-3}
CXX=${CXX:-g++}
HERE=$(cd "$(dirname "$0")" && pwd)
for tool in cmake ninja python3 bc "$CXX"; do
  command -v "$tool" >/dev/null || { echo "miss-cpu bench: $tool not found" >&2; exit 1; }
done
WORK=$(mktemp -d)
unset LEXPACK_LOGFILE LEXPACK_DISABLE LEXPACK_SERVER LEXPACK_REMOTE_STORAGE || true
stop_server() { LEXPACK_DIR=$1 LEXPACK_SERVER=1 "$LEXPACK" server --stop >/dev/null 2>&1 || true; }
trap 'for c in "$WORK"/cache-*; do [ -d "$c" ] && stop_server "$c"; done; rm -rf "$WORK"' EXIT
. "$HERE/../lib.sh"

SOURCE=${SOURCE:-}
cmake_args=""
if [ -n "$SOURCE" ]; then
  take_source miss-cpu "$WORK/src"
  EDIT=${FILE:-$(first_compiled "$WORK/src")}  # unless FILE names one
  edit() { sed -i "1i #define LEXPACK_BENCH_EDIT $1" "$WORK/src/$EDIT"; }
  unedit() { sed -i "1d" "$WORK/src/$EDIT"; }
else
  [ -d /usr/include/boost ] || { echo "miss-cpu bench: needs Boost headers (libboost-dev)" >&2; exit 1; }
  python3 "$HERE/../scan/gen_boost_project.py" "$WORK/src" --tus "$TUS"
  EDIT=$(cd "$WORK/src" && ls lib0/src/*.cc | head -1)
  what="$TUS TUs using Boost"
  edit() { sed -i "s/return cfg_/return $1 + cfg_/" "$WORK/src/$EDIT"; }
  unedit() { sed -i "s/return [0-9]* + cfg_/return cfg_/" "$WORK/src/$EDIT"; }
fi

# build WAY PHASE: one build of WAY (cold: fresh cache and build dir; edit:
# the tree edited, same cache), CPU seconds on stdout.
build() {
  local way=$1 phase=$2 dir=$WORK/b-$1 cache=$WORK/cache-$1 launcher="" server=0 cmd
  case $way in
    launcher) launcher=$LEXPACK ;;
    launcher+server) launcher=$LEXPACK server=1 ;;
    ninja+server) server=1 ;;
  esac
  if [ "$phase" = cold ]; then
    stop_server "$cache"
    rm -rf "$dir" "$cache"
    # shellcheck disable=SC2086  # the arguments' words
    cmake --no-warn-unused-cli -S "$WORK/src" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$CXX" \
      ${launcher:+-DCMAKE_CXX_COMPILER_LAUNCHER=$launcher -DCMAKE_C_COMPILER_LAUNCHER=$launcher} \
      $cmake_args >/dev/null
  fi
  cmd=(ninja -C "$dir")
  [ "$way" = ninja+server ] && cmd=("$LEXPACK" ninja -C "$dir")
  local before after cpu
  before=$(server_cpu "$LEXPACK" "$cache")
  if [ "$way" = plain ]; then
    cpu=$(LEXPACK_DISABLE=1 cpu_of "${cmd[@]}")
  else
    cpu=$(LEXPACK_DIR=$cache LEXPACK_SERVER=$server cpu_of "${cmd[@]}")
  fi
  after=$(server_cpu "$LEXPACK" "$cache")
  # A server started by this build: all its CPU is this build's.
  [ "$phase" = cold ] && before=0
  echo "$cpu + $after - $before" | bc -l
}

ways="plain launcher launcher+server ninja+server"
declare -A COLD EDITED
for run in $(seq "$RUNS"); do
  for w in $ways; do COLD[$w]+="$(build "$w" cold) "; done
  sleep 1  # the edit lands in another second than the cold build's files
  edit "$run"
  for w in $ways; do EDITED[$w]+="$(build "$w" edit) "; done
  unedit
  echo "run $run of $RUNS done (load $(cut -d' ' -f1 /proc/loadavg))" >&2
done

pc=$(med "${COLD[plain]}")
pe=$(med "${EDITED[plain]}")
echo "$what ($EDIT edited), $CXX, CPU seconds (build and server), median of $RUNS runs"
printf "%-16s %10s %8s %16s %8s\n" "" "cold build" "vs plain" "edit one source" "vs plain"
for w in $ways; do
  c=$(med "${COLD[$w]}")
  e=$(med "${EDITED[$w]}")
  printf "%-16s %10.2f %+7.1f%% %16.2f %+7.1f%%\n" "$w" "$c" "$(echo "($c / $pc - 1) * 100" | bc -l)" \
    "$e" "$(echo "($e / $pe - 1) * 100" | bc -l)"
done
echo "target: cold build and edit at most +3% CPU over plain"
