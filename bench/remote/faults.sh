#!/bin/bash
# What a sick remote costs a cold build: a generated project of TUS TUs
# (-O1, standard headers) built by `lexpack ninja` from an empty local cache
# with no remote, then with each fault: a Redis port and an HTTP port that
# accept and never answer (alone and together), HTTP answering 500, a byte
# at a time, very slowly, and a real redis-server killed during the build.
# Each build must succeed and produce the same objects as the build with no
# remote. The fault servers are bench/remote/fault_server.py on loopback ports.
#
# Prints, per fault, the median wall time over RUNS, its ratio to no remote
# (target <= 1.05), failed builds and objects that differ.
#
#   bench/remote/faults.sh [LEXPACK] [TUS]      (RUNS=3, CXX=g++)
set -eu
LEXPACK=${1:-$(pwd)/build/bin/lexpack}
TUS=${2:-40}
RUNS=${RUNS:-3}
CXX=${CXX:-g++}
HERE=$(cd "$(dirname "$0")" && pwd)
command -v redis-server >/dev/null || { echo "needs redis-server" >&2; exit 2; }
WORK=$(mktemp -d)
PIDS=""
cleanup() { for p in $PIDS; do kill "$p" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT
. "$HERE/../lib.sh"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/"$1") 2>/dev/null && return 0; sleep 0.05; done; return 1; }

SRC="$WORK/proj"
write_std_project "$SRC" "$TUS"

declare -A PORT
for mode in hole http500 trickle slow; do
  PORT[$mode]=$(free_port)
  python3 "$HERE/fault_server.py" $mode "${PORT[$mode]}" 3600 &
  PIDS="$PIDS $!"
  wait_port "${PORT[$mode]}" || { echo "fault server $mode did not start" >&2; exit 1; }
done
HOLE=${PORT[hole]}

# build NAME URL [kill-redis]: one cold build; prints seconds, appends to T.
declare -A T FAIL DIFF
build() {
  local name=$1 url=$2 redis_pid=""
  if [ "${3:-}" = kill-redis ]; then
    local rport; rport=$(free_port)
    mkdir -p "$WORK/redis"
    redis-server --port "$rport" --bind 127.0.0.1 --save '' --appendonly no --dir "$WORK/redis" >/dev/null &
    redis_pid=$!
    wait_port "$rport" || { echo "redis did not start" >&2; exit 1; }
    url="redis://127.0.0.1:$rport"
  fi
  rm -rf "$SRC/build" "$WORK/cache"
  cmake -S "$SRC" -B "$SRC/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$CXX" \
    -DCMAKE_CXX_FLAGS=-O1 >/dev/null
  local t0 rc=0; t0=$(now)
  LEXPACK_DIR="$WORK/cache" LEXPACK_REMOTE_STORAGE="$url" "$LEXPACK" ninja -C "$SRC/build" \
    >"$WORK/$name.log" 2>&1 &
  local build_pid=$!
  if [ -n "$redis_pid" ]; then sleep 1.5; kill -9 "$redis_pid" 2>/dev/null || true; fi
  wait $build_pid || rc=$?
  local took; took=$(echo "$(now) - $t0" | bc -l)
  T[$name]+="$took "
  printf "  %-14s %6.2f s (exit %d)\n" "$name" "$took" "$rc" >&2
  [ $rc = 0 ] || FAIL[$name]=$(( ${FAIL[$name]:-0} + 1 ))
  # Objects against the build with no remote.
  local diff=0
  if [ "$name" = none ]; then
    rm -rf "$WORK/objs" && mkdir -p "$WORK/objs"
    find "$SRC/build" -name '*.o' -exec cp {} "$WORK/objs/" \;
  else
    for o in "$WORK"/objs/*.o; do
      local mine; mine=$(find "$SRC/build" -name "$(basename "$o")" | head -1)
      [ -n "$mine" ] && cmp -s "$o" "$mine" || diff=$((diff + 1))
    done
  fi
  DIFF[$name]=$(( ${DIFF[$name]:-0} + diff ))
}

FAULTS="redis-hole http-hole both-holes http-500 http-trickle http-slow redis-killed"
echo "project: $TUS TUs of standard headers, -O1, $CXX, cold builds, RUNS=$RUNS"
for run in $(seq "$RUNS"); do
  build none ""
  for f in $FAULTS; do
    case $f in
      redis-hole) build $f "redis://127.0.0.1:$HOLE" ;;
      http-hole) build $f "http://127.0.0.1:$HOLE/c" ;;
      both-holes) build $f "redis://127.0.0.1:$HOLE http://127.0.0.1:$HOLE/c" ;;
      http-500) build $f "http://127.0.0.1:${PORT[http500]}/c" ;;
      http-trickle) build $f "http://127.0.0.1:${PORT[trickle]}/c" ;;
      http-slow) build $f "http://127.0.0.1:${PORT[slow]}/c" ;;
      redis-killed) build $f "" kill-redis ;;
    esac
  done
  echo "run $run of $RUNS done" >&2
done

med() { echo "${T[$1]}" | tr ' ' '\n' | grep -v '^$' | median; }
none=$(med none)
printf "%-14s %8s %8s %8s %8s\n" remote "time(s)" ratio failed wrong
printf "%-14s %8.2f %8.2f %8d %8d\n" none "$none" 1 "${FAIL[none]:-0}" 0
for f in $FAULTS; do
  printf "%-14s %8.2f %8.2f %8d %8d\n" "$f" "$(med $f)" "$(echo "$(med $f) / $none" | bc -l)" \
    "${FAIL[$f]:-0}" "${DIFF[$f]:-0}"
done
echo "target: ratio <= 1.05, 0 failed, 0 wrong"
