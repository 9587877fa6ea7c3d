#!/bin/bash
# What a server that does not answer costs a build: a warm rebuild (after
# `ninja -t clean`, every compile a hit) of a generated project of TUS TUs by
# `lexpack ninja`, with the server off, running, stopped (SIGSTOP), and
# replaced by one that accepts and never answers (a deadlocked server: a
# listener on its socket that holds its lock). Prints medians over RUNS and what the sick server adds to the
# build with the server off (target: under 100 ms in total for a stopped
# one; one 2 s wait for one that never answers).
#
#   bench/server/sick.sh [LEXPACK] [TUS]     (RUNS, CXX)
set -eu
LEXPACK=$(realpath "${1:-$(pwd)/build/bin/lexpack}")
TUS=${2:-40}
RUNS=${RUNS:-3}
CXX=${CXX:-g++}
for tool in cmake ninja python3 "$CXX"; do
  command -v "$tool" >/dev/null || { echo "sick-server bench: $tool not found" >&2; exit 1; }
done
WORK=$(mktemp -d)
export LEXPACK_DIR="$WORK/cache"
unset LEXPACK_LOGFILE LEXPACK_DISABLE LEXPACK_SERVER LEXPACK_REMOTE_STORAGE || true
HOLE_PID=""
cleanup() {
  [ -n "$HOLE_PID" ] && kill "$HOLE_PID" 2>/dev/null || true
  pid=$(LEXPACK_SERVER=1 "$LEXPACK" server --status 2>/dev/null | awk '$1=="pid"{print $2}')
  [ -n "$pid" ] && kill -CONT "$pid" 2>/dev/null || true
  LEXPACK_SERVER=1 "$LEXPACK" server --stop >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT
. "$(cd "$(dirname "$0")" && pwd)/../lib.sh"

write_std_project "$WORK/src" "$TUS"
sleep 2  # sources older than the settle time, as in a real tree
cmake -S "$WORK/src" -B "$WORK/b" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$CXX" \
  >/dev/null

# build SERVER: one warm rebuild by `lexpack ninja`, seconds on stdout.
build() {
  ninja -C "$WORK/b" -t clean >/dev/null
  local t0 t1
  t0=$(now)
  LEXPACK_SERVER=$1 "$LEXPACK" ninja -C "$WORK/b" >/dev/null 2>&1 || echo "build failed" >&2
  t1=$(now)
  echo "$t1 - $t0" | bc -l
}
server_pid() { LEXPACK_SERVER=1 "$LEXPACK" server --status 2>/dev/null | awk '$1=="pid"{print $2}'; }
sock_dir="$LEXPACK_DIR/server-$(id -u)"

# Fill the cache, and the server's memory.
for _ in 1 2 3; do build 1 >/dev/null; done
declare -A T
for run in $(seq "$RUNS"); do
  T[off]+="$(build 0) "
  T[running]+="$(build 1) "
  pid=$(server_pid)
  [ -n "$pid" ] || { echo "no server running" >&2; exit 1; }
  kill -STOP "$pid"
  T[stopped]+="$(build 1) "
  kill -CONT "$pid"
  LEXPACK_SERVER=1 "$LEXPACK" server --stop >/dev/null 2>&1 || true
  for _ in $(seq 200); do [ -z "$(server_pid)" ] && break; sleep 0.02; done
  # A listener on the server's socket that accepts and never answers.
  rm -f "$sock_dir/sock" "$sock_dir/stopped" "$WORK/listening"
  # It holds the server's lock, as a deadlocked server does.
  python3 -c '
import fcntl, os, socket, sys
lock = os.open(sys.argv[1] + "/lock", os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(lock, fcntl.LOCK_EX)
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1] + "/sock"); s.listen(64)
open(sys.argv[2], "w").close()
held = []
while True:
    c, _ = s.accept(); held.append(c)' "$sock_dir" "$WORK/listening" &
  HOLE_PID=$!
  for _ in $(seq 200); do [ -e "$WORK/listening" ] && break; sleep 0.02; done
  T[unanswering]+="$(build 1) "
  kill "$HOLE_PID" 2>/dev/null || true
  wait "$HOLE_PID" 2>/dev/null || true
  HOLE_PID=""
  # A new server (a start the listener made fail is not retried for a
  # while), warmed again.
  rm -f "$sock_dir/sock" "$sock_dir/stopped" "$sock_dir/start-failed"
  LEXPACK_SERVER=1 "$LEXPACK" server --start >/dev/null 2>&1
  for _ in 1 2 3; do build 1 >/dev/null; done
  echo "run $run of $RUNS done" >&2
done

off=$(med "${T[off]}")
echo "$TUS TUs, warm rebuild by lexpack ninja, $CXX, median of $RUNS runs"
printf "%-14s %10s %16s\n" "server" "build (s)" "added to off (ms)"
for c in off running stopped unanswering; do
  m=$(med "${T[$c]}")
  printf "%-14s %10.3f %16.0f\n" "$c" "$m" "$(echo "($m - $off) * 1000" | bc -l)"
done
echo "target: stopped adds under 100 ms in total; unanswering adds one wait (about 2 s), not one per compile"
