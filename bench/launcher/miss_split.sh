#!/bin/bash
# Where a cold build's misses spend lexpack's CPU, per process: each
# launcher's own CPU (user + system, every thread, from the `stored` line of
# its decision log) and the server's (`lexpack server --status`: cpu_ms, per
# closure it evaluated), beside the whole build's CPU from /proc (compilers,
# ninja, launchers; the server runs detached and is not in it). Lexpack as
# the CMake launcher with the server, on the generated Boost project (TUS
# TUs) or a copy of a real CMake project (SOURCE=path[:ARGS]). Two or more
# binaries are alternated RUNS times in one run; medians.
#
#   bench/launcher/miss_split.sh LEXPACK [LEXPACK...]     (RUNS, TUS, SOURCE)
set -eu
[ $# -ge 1 ] || { echo "usage: $0 LEXPACK [LEXPACK...]" >&2; exit 2; }
RUNS=${RUNS:-3}
TUS=${TUS:-24}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"
need_tools miss-split cmake ninja python3 bc
alternate_binaries miss-split "$@"

# One cold build with binary $1: "launcher_ms server_ms build_s misses
# closures" (launcher: median per stored miss; server: per closure).
one_build() {
  local lexpack=$1 build_s status
  stop_servers
  rm -rf "$WORK/cache" "$WORK/b" "$WORK/log"
  # shellcheck disable=SC2086  # the arguments' words
  cmake --no-warn-unused-cli -S "$WORK/src" -B "$WORK/b" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_COMPILER_LAUNCHER="$lexpack" -DCMAKE_C_COMPILER_LAUNCHER="$lexpack" \
    $cmake_args >/dev/null
  build_s=$(export LEXPACK_LOGFILE=$WORK/log; cpu_of ninja -C "$WORK/b")
  status=$("$lexpack" server --status 2>/dev/null || true)
  stop_servers
  python3 - "$WORK/log" "$build_s" "$status" <<'EOF'
import re, statistics, sys
cpu = [int(m.group(1)) for m in re.finditer(r": stored \S+ \(lexpack \d+ us, CPU (\d+) us", open(sys.argv[1]).read())]
status = dict(l.split(" ", 1) for l in sys.argv[3].splitlines() if " " in l)
server_ms, closures = int(status.get("cpu_ms", 0)), int(status.get("closures_evaluated", 0))
launcher = statistics.median(cpu) / 1000 if cpu else 0
print(f"{launcher:.2f} {server_ms / max(closures, 1):.2f} {sys.argv[2]} {len(cpu)} {closures}")
EOF
}

declare -A L S B N
for run in $(seq "$RUNS"); do
  for i in "${!BINS[@]}"; do
    read -r l s b n c < <(one_build "${BINS[$i]}")
    L[$i]+="$l " S[$i]+="$s " B[$i]+="$b " N[$i]="$n misses, $c closures"
  done
  echo "run $run of $RUNS done (load $(cut -d' ' -f1 /proc/loadavg))" >&2
done
echo "$what, cold build, lexpack as the CMake launcher with the server, medians of $RUNS:"
printf "%-50s %14s %14s %12s\n" "binary" "launcher ms" "server ms" "build CPU s"
for i in "${!BINS[@]}"; do
  printf "%-50s %14.2f %14.2f %12.2f   (%s; launcher per miss, server per closure)\n" "${BINS[$i]}" \
    "$(med "${L[$i]}")" "$(med "${S[$i]}")" "$(med "${B[$i]}")" "${N[$i]}"
done
