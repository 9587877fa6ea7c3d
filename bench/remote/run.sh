#!/bin/bash
# A team cache on a real redis-server and a real nginx (WebDAV PUT): machine
# A (empty local cache) builds a generated project and fills the remote;
# machine B (another checkout path, empty local cache) builds it from the
# remote. lexpack and ccache side by side on the same servers, each with its
# base_dir and the project's -ffile-prefix-map. Then the cost of a remote on
# a cold build: none, a working Redis, a refused port, a black hole.
#
# Prints medians over RUNS of: A's and B's wall times, B's ratio
# ccache/lexpack, requests and bytes per compile on B (counted by the
# servers: Redis INFO, nginx's access log), and the cold-build ratios.
#
#   bench/remote/run.sh [LEXPACK] [TUS]      (RUNS, CXX, COLD=0: no cold builds,
#                                             TEAM=0: no A and B builds,
#                                             PROJECT=boost: TUs that include Boost,
#                                             SOURCE=DIR: a real CMake project's
#                                             tree instead, CMAKE_ARGS for it;
#                                             TUS: its compiles, for the per-TU figures)
set -eu
LEXPACK=${1:-$(pwd)/build/bin/lexpack}
TUS=${2:-60}
RUNS=${RUNS:-3}
# COLD=0 leaves out the cold builds (the cost of a remote on a cold build).
COLD_REMOTES="none redis refused hole"; [ "${COLD:-1}" = 0 ] && COLD_REMOTES=""
# TEAM=0 leaves out machine A's and B's builds (only the cold builds).
TEAM_REMOTES="redis http"; [ "${TEAM:-1}" = 0 ] && TEAM_REMOTES=""
CXX=${CXX:-g++}
command -v redis-server >/dev/null && command -v nginx >/dev/null && command -v ccache >/dev/null ||
  { echo "needs redis-server, nginx (with its DAV module) and ccache" >&2; exit 2; }
WORK=$(mktemp -d)
PIDS=""
cleanup() { for p in $PIDS; do kill "$p" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/"$1") 2>/dev/null && return 0; sleep 0.05; done; return 1; }
. "$(cd "$(dirname "$0")" && pwd)/../lib.sh"

# The project: TUS sources of a few standard headers each (and three Boost
# headers with PROJECT=boost), one OBJECT library (compiles only: ccache
# caches nothing else).
PROJECT=${PROJECT:-std}
SOURCE=${SOURCE:-}
write_project() {
  if [ -n "$SOURCE" ]; then
    mkdir -p "$(dirname "$1")" && cp -a "$SOURCE" "$1"
    return
  fi
  write_${PROJECT}_project "$1" "$TUS" \
    "add_compile_options(-ffile-prefix-map=\${CMAKE_SOURCE_DIR}=. -ffile-prefix-map=\${CMAKE_BINARY_DIR}=build)"
}
A_SRC="$WORK/a/proj"
B_SRC="$WORK/b/elsewhere/proj"
write_project "$A_SRC"
write_project "$B_SRC"

# Servers.
REDIS_PORT=$(free_port)
mkdir -p "$WORK/redis"
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$WORK/redis" >/dev/null &
PIDS="$PIDS $!"
NGINX_PORT=$(free_port)
N="$WORK/nginx"
mkdir -p "$N/data/cache"
cat > "$N/nginx.conf" <<CONF
daemon off; master_process off; worker_processes 1;
error_log $N/error.log; pid $N/nginx.pid;
events { worker_connections 256; }
http {
  log_format sizes '\$request_method \$status \$body_bytes_sent';
  access_log $N/access.log sizes;
  client_body_temp_path $N/body; proxy_temp_path $N/proxy; fastcgi_temp_path $N/fastcgi;
  uwsgi_temp_path $N/uwsgi; scgi_temp_path $N/scgi;
  server {
    listen 127.0.0.1:$NGINX_PORT;
    root $N/data;
    location / { dav_methods PUT DELETE; create_full_put_path on; client_max_body_size 512m; }
  }
}
CONF
nginx -p "$N" -e "$N/error.log" -c "$N/nginx.conf" &
PIDS="$PIDS $!"
# A black hole: accepts connections, never answers.
HOLE_PORT=$(free_port)
python3 -c "
import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('127.0.0.1', $HOLE_PORT)); s.listen(512); time.sleep(1e6)" &
PIDS="$PIDS $!"
REFUSED_PORT=$(free_port)
wait_port "$REDIS_PORT" && wait_port "$NGINX_PORT" && wait_port "$HOLE_PORT" ||
  { echo "a server did not start" >&2; exit 1; }
REDIS_URL="redis://127.0.0.1:$REDIS_PORT"
HTTP_URL="http://127.0.0.1:$NGINX_PORT/cache"

flush_remotes() {
  redis-cli -p "$REDIS_PORT" flushall >/dev/null
  rm -rf "$N/data/cache" && mkdir -p "$N/data/cache"
}
redis_counts() {  # commands processed, bytes sent to clients
  redis-cli -p "$REDIS_PORT" info stats |
    awk -F: '/^total_commands_processed/ {c=$2} /^total_net_output_bytes/ {b=$2} END {printf "%d %d\n", c, b}'
}
nginx_counts() {  # GET/HEAD requests, bytes of their bodies
  awk '$1 != "PUT" {n++; b += $3} END {printf "%d %d\n", n, b}' "$N/access.log" 2>/dev/null || echo "0 0"
}

# configure SRC BUILD [launcher]; a real project gets its prefix maps here.
configure() {
  rm -rf "$2"
  local maps=""
  [ -n "$SOURCE" ] && maps="-ffile-prefix-map=$1=. -ffile-prefix-map=$2=build"
  cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$CXX" \
    ${3:+-DCMAKE_CXX_COMPILER_LAUNCHER=$3} ${3:+-DCMAKE_C_COMPILER_LAUNCHER=$3} \
    ${maps:+"-DCMAKE_CXX_FLAGS=$maps"} ${maps:+"-DCMAKE_C_FLAGS=$maps"} ${CMAKE_ARGS:-} >/dev/null
}
# Seconds of one build, run with the environment given before the command.
timed() { local t0; t0=$(now); "$@" >/dev/null 2>&1; echo "$(now) - $t0" | bc -l; }

lexpack_build() {  # SRC CACHE REMOTE [warm|noprefetch|noserver]
  configure "$1" "$1/build"
  local t0; t0=$(now)
  local prefetch=1; [ "${4:-}" = noprefetch ] && prefetch=0
  local server=; [ "${4:-}" = noserver ] && server=0
  if [ "${4:-}" = warm ]; then
    LEXPACK_DIR="$2" LEXPACK_BASE_DIR="$WORK" LEXPACK_REMOTE_STORAGE="$3" "$LEXPACK" warm -C "$1/build" >/dev/null 2>&1
  fi
  LEXPACK_DIR="$2" LEXPACK_BASE_DIR="$WORK" LEXPACK_REMOTE_STORAGE="$3" LEXPACK_PREFETCH=$prefetch \
    LEXPACK_SERVER=$server "$LEXPACK" ninja -C "$1/build" >"$WORK/last.log" 2>&1
  echo "$(now) - $t0" | bc -l
}
ccache_build() {  # SRC CACHE REMOTE
  configure "$1" "$1/build" ccache
  local t0; t0=$(now)
  CCACHE_DIR="$2" CCACHE_BASEDIR="$WORK" CCACHE_REMOTE_STORAGE="$3" \
    ninja -C "$1/build" >/dev/null 2>&1
  echo "$(now) - $t0" | bc -l
}

if [ -n "$SOURCE" ]; then
  echo "project: $SOURCE (every target), $CXX, RUNS=$RUNS; A at $A_SRC, B at $B_SRC"
else
  echo "project: $TUS TUs ($PROJECT headers, one OBJECT library), $CXX, RUNS=$RUNS; A at $A_SRC, B at $B_SRC"
fi
declare -A T
for run in $(seq "$RUNS"); do
  for kind in $TEAM_REMOTES; do
    url=$REDIS_URL; [ $kind = http ] && url=$HTTP_URL
    # B measures: before_counts, then a build, then counts NAME A B.
    before_counts() { before_r=$(redis_counts); : > "$N/access.log"; kill -USR1 "$(cat "$N/nginx.pid")" 2>/dev/null || true; }
    counts() {
      local after_r req bytes; after_r=$(redis_counts)
      if [ $kind = redis ]; then
        req=$(( $(echo "$after_r" | cut -d' ' -f1) - $(echo "$before_r" | cut -d' ' -f1) ))
        bytes=$(( $(echo "$after_r" | cut -d' ' -f2) - $(echo "$before_r" | cut -d' ' -f2) ))
      else
        req=$(nginx_counts | cut -d' ' -f1); bytes=$(nginx_counts | cut -d' ' -f2)
      fi
      T[$kind.$1.a]+="$2 "; T[$kind.$1.b]+="$3 "
      T[$kind.$1.req]+="$req "; T[$kind.$1.bytes]+="$bytes "
    }
    flush_remotes
    rm -rf "$WORK/ca" "$WORK/cb"
    a=$(ccache_build "$A_SRC" "$WORK/ca" "$url")
    before_counts; b=$(ccache_build "$B_SRC" "$WORK/cb" "$url"); counts ccache "$a" "$b"
    # One A for lexpack's three ways of building B, each from an empty cache.
    flush_remotes
    rm -rf "$WORK/ca"
    a=$(lexpack_build "$A_SRC" "$WORK/ca" "$url")
    for tool in lexpack lexpack_warm lexpack_noprefetch lexpack_noserver; do
      rm -rf "$WORK/cb"
      before_counts; b=$(lexpack_build "$B_SRC" "$WORK/cb" "$url" "${tool#lexpack_}"); counts $tool "$a" "$b"
    done
  done
  # A cold build (empty local cache) with and without a remote.
  for remote in $COLD_REMOTES; do
    case $remote in
      none) url="" ;;
      redis) url=$REDIS_URL ;;
      refused) url="redis://127.0.0.1:$REFUSED_PORT" ;;
      hole) url="redis://127.0.0.1:$HOLE_PORT|connect-timeout=100|operation-timeout=500" ;;
    esac
    flush_remotes
    rm -rf "$WORK/cold"
    T[cold.$remote]+="$(lexpack_build "$A_SRC" "$WORK/cold" "$url") "
  done
  echo "run $run of $RUNS done" >&2
done

# Machine B once more, from the Redis A filled: the compiler, driver and
# linker processes it runs (strace, execve of cc1plus, cc1, g++, c++, clang,
# ld, collect2) and its outputs (objects, archives, libraries, programs)
# against a plain build in the same build directory (objects of OBJECT
# libraries under CMakeFiles/ included, CMake's compiler checks left out).
if [ -n "$TEAM_REMOTES" ] && command -v strace >/dev/null; then
  flush_remotes
  rm -rf "$WORK/ca" "$WORK/cb" "$WORK/plain"
  lexpack_build "$A_SRC" "$WORK/ca" "$REDIS_URL" >/dev/null
  configure "$B_SRC" "$B_SRC/build"
  ninja -C "$B_SRC/build" >/dev/null 2>&1
  outputs() { (cd "$1" && find . -path './CMakeFiles/[0-9]*' -prune -o -type f \( -name '*.o' -o -name '*.a' \
    -o -name '*.so*' -o -perm -u+x \) -print | sort); }
  mkdir -p "$WORK/plain"
  for f in $(outputs "$B_SRC/build"); do mkdir -p "$WORK/plain/$(dirname "$f")"; cp -p "$B_SRC/build/$f" "$WORK/plain/$f"; done
  configure "$B_SRC" "$B_SRC/build"
  LEXPACK_DIR="$WORK/cb" LEXPACK_BASE_DIR="$WORK" LEXPACK_REMOTE_STORAGE="$REDIS_URL" LEXPACK_SERVER=0 \
    strace -f -qq -e trace=execve -o "$WORK/execs" "$LEXPACK" ninja -C "$B_SRC/build" >/dev/null 2>&1
  ran=$(grep -v ENOENT "$WORK/execs" |
    grep -E 'execve\("[^"]*/(cc1plus|cc1|g\+\+[^"/]*|c\+\+|clang[^"/]*|ld[^"/]*|collect2)"' || true)
  compilers=$(echo -n "$ran" | grep -c . || true)
  # Which, when any: the program and its first arguments.
  [ "$compilers" = 0 ] || echo "$ran" | sed -E 's/^[0-9]+ +execve\("([^"]*)", \[("[^"]*"(, )?){0,1}(.{0,160}).*/  ran \1 \4/' >&2
  differ=0 outs=0
  for f in $(outputs "$WORK/plain"); do
    outs=$((outs + 1))
    cmp -s "$WORK/plain/$f" "$B_SRC/build/$f" || differ=$((differ + 1))
  done
  echo "machine B (lexpack ninja, Redis): $compilers compiler or linker processes; $differ of $outs outputs differ from a plain build (targets: 0, 0)"
fi

med() { echo "${T[$1]}" | tr ' ' '\n' | grep -v '^$' | median; }
[ -z "$TEAM_REMOTES" ] ||
  printf "\n%-6s %-28s %9s %9s %12s %14s\n" remote tool "A (s)" "B (s)" "B req/TU" "B bytes/TU"
for kind in $TEAM_REMOTES; do
  for tool in ccache lexpack lexpack_warm lexpack_noprefetch lexpack_noserver; do
    name=$tool; [ $tool = lexpack ] && name="lexpack ninja"
    [ $tool = lexpack_noserver ] && name="lexpack ninja (no server)"
    [ $tool = lexpack_warm ] && name="lexpack (warm, then ninja)"
    [ $tool = lexpack_noprefetch ] && name="lexpack ninja (no prefetch)"
    printf "%-6s %-28s %9.2f %9.2f %12.1f %14.0f\n" $kind "$name" "$(med $kind.$tool.a)" "$(med $kind.$tool.b)" \
      "$(echo "$(med $kind.$tool.req) / $TUS" | bc -l)" "$(echo "$(med $kind.$tool.bytes) / $TUS" | bc -l)"
  done
  printf "%-6s B: ccache / lexpack = %.2fx (with warm: %.2fx, without prefetch: %.2fx)   target >= 3x\n" $kind \
    "$(echo "$(med $kind.ccache.b) / $(med $kind.lexpack.b)" | bc -l)" \
    "$(echo "$(med $kind.ccache.b) / $(med $kind.lexpack_warm.b)" | bc -l)" \
    "$(echo "$(med $kind.ccache.b) / $(med $kind.lexpack_noprefetch.b)" | bc -l)"
done
[ -n "$COLD_REMOTES" ] || exit 0
none=$(med cold.none)
printf "\ncold lexpack build, empty local cache: no remote %.2f s\n" "$none"
for remote in redis refused hole; do
  v=$(med cold.$remote)
  printf "  %-8s %.2f s = %+.1f%% over no remote\n" $remote "$v" "$(echo "($v / $none - 1) * 100" | bc -l)"
done
echo "targets: a working remote <= +3%, a dead one (refused, black hole) <= +2%"
