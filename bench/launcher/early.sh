#!/bin/bash
# A compile whose source's directives changed (a #define line added): its
# closure is evaluated again, and with early compiles (the default) the
# compiler starts before the key. By default on a Boost-heavy TU
# (bench/scan/gen_boost_project.py); SOURCE=path/to/cmake-project[:ARGS]
# takes a copy of a real project instead (FILE=one of its sources, else its
# first C++ source, else its first). Side by side in one run, the one
# compile's wall time and CPU (its processes', and the server's when on):
# plain; lexpack without and with the server, each with early compiles off
# (LEXPACK_COMPILE_EARLY=0) and on. Medians over RUNS edits; the ratios are
# over plain (target: wall 1.00x, CPU at most +3%).
#
#   bench/launcher/early.sh [LEXPACK]     (RUNS, CXX, SOURCE, FILE)
set -eu
LEXPACK=$(realpath "${1:-$(pwd)/build/bin/lexpack}")
RUNS=${RUNS:-7}
CXX=${CXX:-g++}
HERE=$(cd "$(dirname "$0")" && pwd)
for tool in cmake python3 bc "$CXX"; do
  command -v "$tool" >/dev/null || { echo "early bench: $tool not found" >&2; exit 1; }
done
WORK=$(mktemp -d)
unset LEXPACK_LOGFILE LEXPACK_DISABLE LEXPACK_SERVER LEXPACK_REMOTE_STORAGE LEXPACK_COMPILE_EARLY || true
stop_server() { LEXPACK_DIR=$1 LEXPACK_SERVER=1 "$LEXPACK" server --stop >/dev/null 2>&1 || true; }
trap 'for c in "$WORK"/cache-*; do [ -d "$c" ] && stop_server "$c"; done; rm -rf "$WORK"' EXIT
. "$HERE/../lib.sh"

SOURCE=${SOURCE:-}
if [ -n "$SOURCE" ]; then
  take_source early "$WORK/src"
else
  [ -d /usr/include/boost ] || { echo "early bench: needs Boost headers (libboost-dev)" >&2; exit 1; }
  python3 "$HERE/../scan/gen_boost_project.py" "$WORK/src" --tus 4 >/dev/null
  cmake_args="-DCMAKE_CXX_COMPILER=$CXX"
  FILE=${FILE:-$(cd "$WORK/src" && ls lib0/src/*.cc | head -1)}
  what="Boost"
fi
# shellcheck disable=SC2086  # the arguments' words
cmake -S "$WORK/src" -B "$WORK/b" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON $cmake_args >/dev/null
# The source (relative to the project), its compile command and the
# directory it runs in.
read -r SRC DIR CMD < <(python3 - "$WORK/b/compile_commands.json" "$WORK/src" "${FILE:-}" <<'PY'
import json, os, shlex, sys
entries = json.load(open(sys.argv[1]))
root, want = os.path.realpath(sys.argv[2]), sys.argv[3]
def rel(e):
    return os.path.relpath(os.path.realpath(os.path.join(e["directory"], e["file"])), root)
def command(e):
    return e["command"] if "command" in e else shlex.join(e["arguments"])
cxx = [e for e in entries if rel(e).endswith((".cc", ".cpp", ".cxx"))]
pick = [e for e in entries if rel(e) == want] if want else (cxx or entries)
if pick:
    print(rel(pick[0]), pick[0]["directory"], command(pick[0]))
PY
)
[ -n "${CMD:-}" ] || { echo "early bench: no compile command for ${FILE:-a source}" >&2; exit 1; }

# The server's evaluation_ms (its own timer of the closures it evaluated)
# for cache $1, 0 when none runs.
evaluation_ms() {
  LEXPACK_DIR=$1 LEXPACK_SERVER=1 "$LEXPACK" server --status 2>/dev/null |
    awk '$1=="evaluation_ms"{print $2; found=1} END {if (!found) print 0}'
}
# run WAY: the one compile through WAY; prints "wall cpu evaluation-ms",
# seconds and the server's milliseconds.
run() {
  local way=$1 cache=$WORK/cache-$1 server=0 early=1 prefix=$LEXPACK
  case $way in
    plain) prefix="" ;;
    off) early=0 ;;
    server-off) server=1 early=0 ;;
    server-on) server=1 ;;
  esac
  local before after t0 t1 cpu ms
  before=$(server_cpu "$LEXPACK" "$cache")
  ms=$(evaluation_ms "$cache")
  t0=$(now)
  # shellcheck disable=SC2086  # the command's words
  cpu=$(cd "$DIR" && LEXPACK_DIR=$cache LEXPACK_SERVER=$server LEXPACK_COMPILE_EARLY=$early \
        cpu_of $prefix $CMD)
  t1=$(now)
  after=$(server_cpu "$LEXPACK" "$cache")
  echo "$(echo "$t1 - $t0" | bc -l) $(echo "$cpu + $after - $before" | bc -l)" \
    "$(($(evaluation_ms "$cache") - ms))"
}
# The edit: a #define line of its own at the top of the source.
edit() { sed -i "1s/^.*$/#define LEXPACK_BENCH_EDIT $1/" "$WORK/src/$SRC"; }
sed -i '1i #define LEXPACK_BENCH_EDIT 0' "$WORK/src/$SRC"

ways="plain off on server-off server-on"
# Each cache knows the TU (memo, snapshot); the server has evaluated it.
for w in $ways; do run "$w" >/dev/null; done
declare -A WALL CPU MS
for r in $(seq "$RUNS"); do
  edit "$r"
  sleep 1.1  # the edit settles, as it would between saving and building
  for w in $ways; do
    read -r wall cpu ms < <(run "$w")
    WALL[$w]+="$wall "
    CPU[$w]+="$cpu "
    MS[$w]+="$ms "
  done
  echo "run $r of $RUNS done (load $(cut -d' ' -f1 /proc/loadavg))" >&2
done

pw=$(med "${WALL[plain]}")
pc=$(med "${CPU[plain]}")
echo "$what: $SRC, its directives edited; seconds, median of $RUNS edits"
printf "%-28s %8s %8s %8s %8s\n" "" "wall" "vs plain" "CPU" "vs plain"
for w in $ways; do
  case $w in
    plain) name="plain" ;;
    off) name="lexpack, early off" ;;
    on) name="lexpack, early on" ;;
    server-off) name="lexpack+server, early off" ;;
    server-on) name="lexpack+server, early on" ;;
  esac
  wl=$(med "${WALL[$w]}")
  c=$(med "${CPU[$w]}")
  printf "%-28s %8.3f %7.2fx %8.3f %+7.1f%%\n" "$name" "$wl" "$(echo "$wl / $pw" | bc -l)" "$c" \
    "$(echo "($c / $pc - 1) * 100" | bc -l)"
done
echo "the server's evaluation of the edited TU (evaluation_ms), median:" \
  "$(med "${MS[server-off]}") ms early off, $(med "${MS[server-on]}") ms early on"
echo "target: wall 1.00x plain, CPU at most +3%"
