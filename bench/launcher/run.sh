#!/bin/sh
# Launcher benchmark, side by side in one run: a heavy TU's and a Boost-heavy
# TU's cache hit with lexpack vs ccache (direct mode) vs a plain compile, and a generated project
# built cold (empty cache) and warm (build dir wiped) with no cache, ccache and lexpack.
#
# usage: bench/launcher/run.sh [path/to/lexpack] [TUS]
#   RUNS=N           runs per heavy-TU command (default 20)
#   PROJECT_RUNS=N   cold/warm builds per setup, median reported (default 1)
#   CXX=...          compiler (default g++)
set -eu

here=$(cd "$(dirname "$0")" && pwd)
. "$here/../heavy_tu.sh"
root=$(cd "$here/../.." && pwd)
lexpack=$(realpath "${1:-$root/build/bin/lexpack}")
tus=${2:-120}
runs=${RUNS:-20}
project_runs=${PROJECT_RUNS:-1}
cxx=${CXX:-g++}
for tool in hyperfine ccache cmake ninja python3 "$cxx"; do
  command -v "$tool" >/dev/null || { echo "launcher bench: $tool not found" >&2; exit 1; }
done
[ -x "$lexpack" ] || { echo "launcher bench: no lexpack at $lexpack" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/lexpack-bench-XXXXXX")
trap 'rm -rf "$work"' EXIT
export LEXPACK_DIR="$work/lexpack-cache" CCACHE_DIR="$work/ccache" CCACHE_DIRECT=1
unset LEXPACK_LOGFILE LEXPACK_DISABLE CCACHE_DISABLE || true
# The launcher's own path (stat-validated): the server's hit is measured by
# bench/server/run.sh.
export LEXPACK_SERVER=0

median_ms() {  # hyperfine json -> "name wall_median_ms cpu_median_ms" lines
  python3 -c '
import json, statistics, sys
for r in json.load(open(sys.argv[1]))["results"]:
    # hyperfine keeps user and system time as means over the runs.
    cpu = r["user"] + r["system"]
    print(r["command"].split()[0].rsplit("/", 1)[-1], "%.2f" % (statistics.median(r["times"]) * 1000),
          "%.2f" % (cpu * 1000))
' "$1"
}

# --- one heavy TU, and a Boost-heavy one -----------------------------------
# hit_bench NAME ARGS: the hits of NAME.cpp (in the current directory) with
# ccache and lexpack side by side, and lexpack's stat calls per hit.
hit_bench() {
  name=$1
  args="$2 -c $name.cpp -o $name.o"
  headers=$($cxx -H $2 -c $name.cpp -o /dev/null 2>&1 | grep -c '^\.' || true)
  sleep 2  # let the sources' stat signatures settle, as in a real tree
  for i in 1 2; do
    "$lexpack" $cxx $args
    ccache $cxx $args
  done
  hyperfine -N -w 3 -r "$runs" --export-json "$work/$name.json" \
    "$cxx $args" "ccache $cxx $args" "$lexpack $cxx $args" >/dev/null 2>&1
  median_ms "$work/$name.json" > "$work/$name.txt"
  plain=$(awk 'NR==1{print $2}' "$work/$name.txt")
  cc_hit=$(awk 'NR==2{print $2}' "$work/$name.txt")
  lp_hit=$(awk 'NR==3{print $2}' "$work/$name.txt")
  cc_cpu=$(awk 'NR==2{print $3}' "$work/$name.txt")
  lp_cpu=$(awk 'NR==3{print $3}' "$work/$name.txt")
  echo "$name TU ($headers headers), median wall time of $runs runs (mean user+sys CPU):"
  echo "  plain compile        $plain ms"
  echo "  ccache hit (direct)  $cc_hit ms   cpu $cc_cpu ms"
  echo "  lexpack hit          $lp_hit ms   cpu $lp_cpu ms"
  echo "  ratio ccache/lexpack hit: $(python3 -c "print('%.1fx wall, %.1fx cpu' % ($cc_hit / $lp_hit, $cc_cpu / $lp_cpu))")"
  echo "  ratio plain/lexpack hit:  $(python3 -c "print('%.1fx' % ($plain / $lp_hit))")"
  if command -v strace >/dev/null; then
    strace -f -c -e trace=stat,lstat,newfstatat,statx -o "$work/$name.strace" "$lexpack" $cxx $args
    awk '$NF == "total" {print "  lexpack stat calls per hit: " $(NF-2) " (" ($(NF-1) ~ /^[0-9]+$/ ? $(NF-1) : 0) " failing)"}' "$work/$name.strace"
  fi
}

mkdir -p "$work/heavy"
cd "$work/heavy"
write_heavy_tu heavy.cpp
hit_bench heavy "-O2"
if [ -d /usr/include/boost ]; then
  write_boost_tu boost.cpp
  hit_bench boost "-O2 -Ii1 -Ii2 -Ii3"
else
  echo "boost TU: skipped (libboost-dev is not installed)"
fi
args="-O2 -c heavy.cpp -o heavy.o"

# The floor of any hit that checks its inputs by stat: a process that only
# stats the files, once with the compiler's own list (g++ -M, what any such
# cache must check) and once with lexpack's closure (every #if branch).
floor=$(dirname "$lexpack")/lexpack-bench-stat-floor
if [ -x "$floor" ]; then
  $cxx -O2 -M heavy.cpp | tr ' \\' '\n\n' | grep -v -e '^$' -e ':$' | xargs realpath -m | sort -u > compiler-deps.txt
  printf '[{"directory": "%s", "file": "heavy.cpp", "command": "%s %s"}]\n' "$PWD" "$cxx" "$args" > compdb.json
  "$lexpack" scan --compdb compdb.json 2>/dev/null | tr ' \\' '\n\n' | grep -v -e '^$' -e ':$' | sort -u > lexpack-deps.txt
  hyperfine -N -w 3 -r "$runs" --export-json "$work/floor.json" \
    "$floor $PWD/compiler-deps.txt" "$floor $PWD/lexpack-deps.txt" >/dev/null 2>&1
  median_ms "$work/floor.json" > "$work/floor.txt"
  floor_cc=$(awk 'NR==1{print $2}' "$work/floor.txt")
  floor_lp=$(awk 'NR==2{print $2}' "$work/floor.txt")
  echo "  stat floor, compiler's $(wc -l < compiler-deps.txt) deps:   $floor_cc ms (best possible ratio over ccache: $(python3 -c "print('%.1fx' % ($cc_hit / $floor_cc))"))"
  echo "  stat floor, lexpack's $(wc -l < lexpack-deps.txt) files:    $floor_lp ms (best possible ratio over ccache: $(python3 -c "print('%.1fx' % ($cc_hit / $floor_lp))"))"
  echo "  lexpack hit over its floor: +$(python3 -c "print('%.2f' % ($lp_hit - $floor_lp))") ms"
fi

# --- a generated project ------------------------------------------------
python3 "$root/examples/gen_project.py" "$work/project" --tus "$tus" >/dev/null
sleep 2
build() {  # $1 = launcher or "", $2 = build dir; prints seconds of the ninja step
  rm -rf "$2"
  if [ -n "$1" ]; then
    cmake -S "$work/project" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CXX_COMPILER="$(command -v $cxx)" -DCMAKE_CXX_COMPILER_LAUNCHER="$1" >/dev/null
  else
    cmake -S "$work/project" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CXX_COMPILER="$(command -v $cxx)" >/dev/null
  fi
  start=$(date +%s.%N)
  ninja -C "$2" >/dev/null
  end=$(date +%s.%N)
  python3 -c "print('%.2f' % ($end - $start))"
}
median() { python3 -c 'import statistics,sys; print("%.2f" % statistics.median(map(float, sys.argv[1:])))' "$@"; }

none_cold=""; cc_cold=""; cc_warm=""; lp_cold=""; lp_warm=""
i=0
while [ "$i" -lt "$project_runs" ]; do
  i=$((i + 1))
  none_cold="$none_cold $(build "" "$work/b-none")"
  rm -rf "$CCACHE_DIR"
  cc_cold="$cc_cold $(build ccache "$work/b-ccache")"
  cc_warm="$cc_warm $(build ccache "$work/b-ccache")"
  rm -rf "$LEXPACK_DIR"
  export LEXPACK_LOGFILE="$work/cold.log"
  lp_cold="$lp_cold $(build "$lexpack" "$work/b-lexpack")"
  unset LEXPACK_LOGFILE
  lp_warm="$lp_warm $(build "$lexpack" "$work/b-lexpack")"
done
n=$(median $none_cold); cc=$(median $cc_cold); ccw=$(median $cc_warm)
lc=$(median $lp_cold); lw=$(median $lp_warm)
echo "project ($tus TUs, $(nproc) cores), ninja time, median of $project_runs:"
echo "  no cache             $n s"
echo "  ccache  cold $cc s   warm $ccw s"
echo "  lexpack cold $lc s   warm $lw s"
python3 -c "
n, cc, ccw, lc, lw = $n, $cc, $ccw, $lc, $lw
print('  cold overhead over no cache: ccache %+.1f%%, lexpack %+.1f%%' % ((cc / n - 1) * 100, (lc / n - 1) * 100))
print('  warm speedup over no cache:  ccache %.1fx, lexpack %.1fx' % (n / ccw, n / lw))
print('  warm ratio ccache/lexpack:   %.1fx' % (ccw / lw))
"
# The launcher's own time on cold misses, from its decision log: load on the
# machine moves whole-build times by more than this, the log does not.
python3 -c '
import re, sys
own = comp = n = 0
for line in open(sys.argv[1]):
    m = re.search(r"\(lexpack (\d+) us: .*compiler (\d+) us\)", line)
    if m:
        own += int(m.group(1)); comp += int(m.group(2)); n += 1
if n:
    print("  lexpack time on cold misses: %.1f ms per compile, %.2f%% of compiler time (%d compiles)"
          % (own / n / 1000, own * 100.0 / comp, n))
' "$work/cold.log"
