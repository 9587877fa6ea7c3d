# Sourced by the whole-build benchmarks (bench/server/*.sh, bench/remote/*.sh):
# timing, medians and the generated project's sources.

now() { date +%s.%N; }
# need_tools BENCH TOOL...: stops with a message naming the first TOOL not on PATH.
need_tools() {
  local bench=$1 tool
  shift
  for tool in "$@"; do
    command -v "$tool" >/dev/null || { echo "$bench bench: $tool not found" >&2; exit 1; }
  done
}
# The median of the numbers on stdin, one per line.
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# The median of the numbers in $1, separated by spaces.
med() { echo "$1" | tr ' ' '\n' | grep -v '^$' | median; }
# cpu_of COMMAND...: runs it; prints the CPU seconds of it and its children.
cpu_of() {
  local out
  out=$( { "$@" >/dev/null 2>&1; times; } | tail -1)
  # `times`' second line: children's user and system, "0m1.234s 0m0.123s".
  echo "$out" | awk '{ split($1, u, "m"); split($2, s, "m"); sub("s", "", u[2]); sub("s", "", s[2]);
                       print u[1] * 60 + u[2] + s[1] * 60 + s[2] }'
}
# take_source BENCH DEST: copies the CMake project SOURCE names
# (path[:cmake args]) to DEST; sets `project`, `cmake_args` and `what` (its
# name). Exits, naming BENCH, when it holds no CMakeLists.txt.
take_source() {
  project=${SOURCE%%:*}
  cmake_args=""
  [[ $SOURCE == *:* ]] && cmake_args=${SOURCE#*:}
  [ -f "$project/CMakeLists.txt" ] || { echo "$1 bench: no CMakeLists.txt in $project" >&2; exit 1; }
  cp -r "$project" "$2"
  what=$(basename "$project")
}
# first_compiled SRC: the first source (relative to SRC) the CMake project
# at SRC compiles, configured with `cmake_args` in a scratch directory.
first_compiled() {
  local probe
  probe=$(mktemp -d)
  # shellcheck disable=SC2086  # the arguments' words
  cmake -S "$1" -B "$probe" -G Ninja -DCMAKE_EXPORT_COMPILE_COMMANDS=ON $cmake_args >/dev/null
  python3 - "$probe/compile_commands.json" "$1" <<'PY'
import json, os, sys
root = os.path.realpath(sys.argv[2])
for e in json.load(open(sys.argv[1])):
    print(os.path.relpath(os.path.realpath(os.path.join(e["directory"], e["file"])), root))
    break
PY
  rm -rf "$probe"
}
# server_cpu LEXPACK CACHE: the CPU seconds the server of cache CACHE has
# used (it runs detached: no `times` counts it), 0 when none runs.
server_cpu() {
  local pid
  pid=$(LEXPACK_DIR=$2 LEXPACK_SERVER=1 "$1" server --status 2>/dev/null | awk '$1=="pid"{print $2}')
  [ -n "$pid" ] && [ -r "/proc/$pid/stat" ] || { echo 0; return; }
  awk -v t="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); print ($12 + $13) / t }' "/proc/$pid/stat"
}

# write_std_tu FILE I [LINES]: a TU of a few standard headers (and LINES,
# e.g. more includes) defining t<I>(), which every TU of a project differs in.
write_std_tu() {
  cat > "$1" <<SRC
#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>
${3:-}
std::string t$2(int n) {
  std::map<int, std::string> m;
  std::vector<int> v(n, $2);
  std::sort(v.begin(), v.end());
  std::ostringstream out;
  for (int x : v) { m[x] += std::to_string(x); out << m[x]; }
  return out.str();
}
SRC
}

# write_std_project DIR TUS [CMAKE LINE]: a CMake project of TUS TUs written by
# write_std_tu (t1.cpp ...) in one object library, with an optional extra
# line of CMake before it.
write_std_project() {
  mkdir -p "$1"
  {
    echo "cmake_minimum_required(VERSION 3.21)"
    echo "project(stdbench CXX)"
    [ -n "${3:-}" ] && echo "$3"
    printf "add_library(objs OBJECT"
    for i in $(seq "$2"); do printf " t%d.cpp" "$i"; done
    echo ")"
  } > "$1/CMakeLists.txt"
  for i in $(seq "$2"); do write_std_tu "$1/t$i.cpp" "$i"; done
}

# write_boost_project DIR TUS [CMAKE LINE]: write_std_project's project whose
# TUs also include three Boost headers each (a rotation of eight, from the
# Debian package libboost-dev), so that each TU reads some hundreds of headers.
BOOST_HEADERS=(algorithm/string.hpp lexical_cast.hpp optional.hpp variant.hpp format.hpp
  range/algorithm.hpp container/flat_map.hpp tokenizer.hpp)
write_boost_project() {
  [ -f /usr/include/boost/version.hpp ] || { echo "needs libboost-dev" >&2; exit 2; }
  write_std_project "$@"
  local i n=${#BOOST_HEADERS[@]}
  for i in $(seq "$2"); do
    write_std_tu "$1/t$i.cpp" "$i" "$(printf '#include <boost/%s>\n' \
      "${BOOST_HEADERS[$((i % n))]}" "${BOOST_HEADERS[$(((i + 3) % n))]}" \
      "${BOOST_HEADERS[$(((i + 5) % n))]}")"
  done
}
# alternate_binaries BENCH LEXPACK...: the setup of a benchmark that
# alternates lexpack binaries: BINS (each made absolute), WORK (a new
# temporary directory, removed at exit), LEXPACK_DIR a cache in it, no
# variable of a caller's lexpack setup, every binary's server stopped at
# exit (stop_servers), and SOURCE's project (take_source) or the generated
# Boost project of TUS TUs in $WORK/src, `what` naming it.
alternate_binaries() {
  local bench=$1 here
  shift
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  BINS=()
  for b in "$@"; do BINS+=("$(realpath "$b")"); done
  WORK=$(mktemp -d)
  unset LEXPACK_LOGFILE LEXPACK_DISABLE LEXPACK_SERVER LEXPACK_REMOTE_STORAGE || true
  export LEXPACK_DIR=$WORK/cache
  trap 'stop_servers; rm -rf "$WORK"' EXIT
  SOURCE=${SOURCE:-}
  cmake_args=""
  if [ -n "$SOURCE" ]; then
    take_source "$bench" "$WORK/src"
  else
    [ -d /usr/include/boost ] || { echo "$bench bench: needs Boost headers (libboost-dev)" >&2; exit 1; }
    python3 "$here/scan/gen_boost_project.py" "$WORK/src" --tus "$TUS"
    what="$TUS TUs using Boost"
  fi
}
stop_servers() { for b in "${BINS[@]}"; do "$b" server --stop >/dev/null 2>&1 || true; done; }
