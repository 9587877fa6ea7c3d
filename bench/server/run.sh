#!/bin/sh
# Server benchmark, side by side in one run: the heavy TU's cache hit answered
# by `lexpack server` (LEXPACK_SERVER=1), asked by `lexpack` and by
# `lexpack-client` (what `lexpack ninja` starts with the server on), against
# the launcher's own stat-validated hit and ccache's (direct mode), and the
# server's figures.
#
# usage: bench/server/run.sh [path/to/lexpack]
#   RUNS=N   runs per command (default 30)
#   CXX=...  compiler (default g++)
set -eu

here=$(cd "$(dirname "$0")" && pwd)
. "$here/../heavy_tu.sh"
root=$(cd "$here/../.." && pwd)
lexpack=$(realpath "${1:-$root/build/bin/lexpack}")
client=$(dirname "$lexpack")/lexpack-client
[ -x "$client" ] || { echo "server bench: $client not found" >&2; exit 1; }
runs=${RUNS:-30}
cxx=${CXX:-g++}
for tool in hyperfine ccache python3 "$cxx"; do
  command -v "$tool" >/dev/null || { echo "server bench: $tool not found" >&2; exit 1; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/lexpack-bench-XXXXXX")
export LEXPACK_DIR="$work/lexpack-cache" CCACHE_DIR="$work/ccache" CCACHE_DIRECT=1
unset LEXPACK_LOGFILE LEXPACK_DISABLE LEXPACK_SERVER CCACHE_DISABLE || true
trap '"$lexpack" server --stop >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

median_ms() {  # hyperfine json -> "wall_median_ms cpu_mean_ms" per command
  python3 -c '
import json, statistics, sys
for r in json.load(open(sys.argv[1]))["results"]:
    print("%.2f" % (statistics.median(r["times"]) * 1000), "%.2f" % ((r["user"] + r["system"]) * 1000))
' "$1"
}

mkdir -p "$work/heavy"
cd "$work/heavy"
write_heavy_tu heavy.cpp
headers=$($cxx -H -O2 -c heavy.cpp -o /dev/null 2>&1 | grep -c '^\.' || true)
sleep 2  # let the source's stat signature settle, as in a real tree
args="-O2 -c heavy.cpp -o heavy.o"
for i in 1 2; do
  "$lexpack" $cxx $args
  ccache $cxx $args
done
hyperfine -N -w 3 -r "$runs" --export-json "$work/local.json" \
  "ccache $cxx $args" "$lexpack $cxx $args" >/dev/null 2>&1

export LEXPACK_SERVER=1
"$lexpack" server --start
for i in 1 2 3; do "$lexpack" $cxx $args; done
hyperfine -N -w 3 -r "$runs" --export-json "$work/server.json" \
  "$lexpack $cxx $args" "$client $cxx $args" >/dev/null 2>&1
# The same four in turn, round after round, so a drifting load weighs on
# each alike (env in front of each: the same extra exec for all four).
interleaved=$(python3 "$here/../launcher/interleaved.py" "$runs" \
  "env ccache $cxx $args" "env LEXPACK_SERVER=0 $lexpack $cxx $args" \
  "env LEXPACK_SERVER=1 $lexpack $cxx $args" "env LEXPACK_SERVER=1 $client $cxx $args")
status=$("$lexpack" server --status)
pid=$(echo "$status" | awk '$1=="pid"{print $2}')
rss=$(awk '/^VmRSS/{print $2, $3}' "/proc/$pid/status" 2>/dev/null || echo unknown)
"$lexpack" server --stop >/dev/null

median_ms "$work/local.json" > "$work/local.txt"
median_ms "$work/server.json" > "$work/server.txt"
cc=$(awk 'NR==1{print $1}' "$work/local.txt")
lp=$(awk 'NR==2{print $1}' "$work/local.txt")
sv=$(awk 'NR==1{print $1}' "$work/server.txt")
cl=$(awk 'NR==2{print $1}' "$work/server.txt")
echo "heavy TU ($headers headers), median wall time of $runs runs (mean user+sys CPU):"
echo "  ccache hit:                 $cc ms ($(awk 'NR==1{print $2}' "$work/local.txt") ms CPU)"
echo "  lexpack hit, no server:     $lp ms ($(awk 'NR==2{print $2}' "$work/local.txt") ms CPU)"
echo "  lexpack hit through server: $sv ms ($(awk 'NR==1{print $2}' "$work/server.txt") ms CPU, client only)"
echo "  lexpack-client through server: $cl ms ($(awk 'NR==2{print $2}' "$work/server.txt") ms CPU, client only)"
python3 -c "import sys; c,l,s,k=map(float,sys.argv[1:]); print('  server hit: %.1fx faster than ccache, %.1fx faster than the launcher alone;\n  through lexpack-client: %.1fx faster than ccache (%.0f%% of its time)' % (c/s, l/s, c/k, 100*k/c))" "$cc" "$lp" "$sv" "$cl"
echo "  target: a hit at most 1/10 of ccache's"
echo "interleaved, $runs rounds (ccache, lexpack without server, lexpack and lexpack-client through server):"
echo "$interleaved" | sed 's/^/  /'
echo "server after the runs:"
echo "$status" | grep -E '^(entries|trusted|watches|hits|misses|validations)' | sed 's/^/  /'
echo "  resident memory: $rss"
