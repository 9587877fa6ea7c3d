#!/bin/sh
# Served-reads benchmark, side by side in one run: a lexpack miss with the
# compiler reading its headers from the filesystem (LEXPACK_SERVE_READS=0)
# and from the packs through the plugin (=1), for a heavy TU and for a TU
# with 30 -I directories; warm, and with the headers' (and packs') page cache
# dropped before every run. Every run is a miss: the source gets a new last
# line first. Also counts the header-related syscalls of one miss each way.
#
# usage: bench/serve/run.sh [path/to/lexpack]
#   RUNS=N   hyperfine runs per command (default 10)
#   PAIRS=N  alternating disk/served pairs (default 10)
#   CXX=...  compiler (default g++)
set -eu

here=$(cd "$(dirname "$0")" && pwd)
. "$here/../heavy_tu.sh"
root=$(cd "$here/../.." && pwd)
lexpack=$(realpath "${1:-$root/build/bin/lexpack}")
runs=${RUNS:-10}
pairs=${PAIRS:-10}
cxx=${CXX:-g++}
for tool in hyperfine strace python3 "$cxx"; do
  command -v "$tool" >/dev/null || { echo "serve bench: $tool not found" >&2; exit 1; }
done
[ -x "$lexpack" ] || { echo "serve bench: no lexpack at $lexpack" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/lexpack-serve-bench-XXXXXX")
trap 'rm -rf "$work"' EXIT
export LEXPACK_DIR="$work/cache" BENCH_WORK="$work"
unset LEXPACK_LOGFILE LEXPACK_DISABLE LEXPACK_SERVE_READS || true
export LEXPACK_SERVER=0  # every run is a miss: a server would only decline

# Gives the source a new last line, so that the next compile is a miss.
cat > "$work/bump.py" <<'PY'
import sys, time
path = sys.argv[1]
lines = open(path).read().split("\n")
if lines and lines[-1].startswith("int bump_"):
    lines = lines[:-1]
lines.append("int bump_%d = 0;" % time.monotonic_ns())
open(path, "w").write("\n".join(lines))
PY

# Drops the page cache of every file listed in $1 (headers and packs).
cat > "$work/drop.py" <<'PY'
import glob, os, sys
paths = [l.strip() for l in open(sys.argv[1]) if l.strip()]
paths += glob.glob(os.path.join(os.environ["LEXPACK_DIR"], "packs", "*"))
for p in paths:
    try:
        fd = os.open(p, os.O_RDONLY)
    except OSError:
        continue
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)
PY

# Header-related syscalls in an `strace -f -y` log: file calls naming a
# header, and reads/stats/maps on a descriptor open on one; the compiler's
# processes apart from the launcher's (the first process of the log).
cat > "$work/count.py" <<'PY'
import re, sys
calls = {"open": 0, "read": 0, "stat": 0, "readlink": 0, "access": 0, "mmap": 0}
launcher_total = 0
first_pid = None
kind = {"open": "open", "openat": "open", "read": "read", "pread64": "read",
        "newfstatat": "stat", "fstat": "stat", "statx": "stat", "stat": "stat", "lstat": "stat",
        "readlink": "readlink", "readlinkat": "readlink", "access": "access",
        "faccessat": "access", "faccessat2": "access", "mmap": "mmap"}
def is_header(p):
    if p.endswith((".so", ".o", ".d", ".cpp", ".c", ".s", ".lpk", ".mdb")) or ".so." in p:
        return False
    return "/include" in p or p.endswith(".h") or "/inc" in p
for line in open(sys.argv[1]):
    m = re.match(r"^(\d+)\s+([a-z0-9_]+)\((.*)", line)
    if not m:
        continue
    first_pid = first_pid or m.group(1)
    if m.group(2) not in kind:
        continue
    paths = re.findall(r'"([^"]*)"', m.group(3)) + re.findall(r"<(/[^>]*)>", m.group(3))
    if any(is_header(p) for p in paths):
        if m.group(1) == first_pid:
            launcher_total += 1
        else:
            calls[kind[m.group(2)]] += 1
print("compiler:", " ".join("%s=%d" % kv for kv in calls.items()),
      "total=%d;" % sum(calls.values()), "launcher: total=%d" % launcher_total)
PY

# Disk and served misses in alternating order, pair after pair, so that a
# load change on the machine hits both alike: medians of the per-pair wall
# and CPU (user+sys of all processes) differences, warm and cold.
cat > "$work/paired.py" <<'PY'
import os, statistics, subprocess, sys, time
pairs, cmd = int(sys.argv[1]), sys.argv[2:]
def run(serve, cold):
    subprocess.run(["python3", os.path.join(os.environ["BENCH_WORK"], "bump.py"), "tu.cpp"], check=True)
    if cold:
        subprocess.run(["python3", os.path.join(os.environ["BENCH_WORK"], "drop.py"), "headers.txt"],
                       check=True)
    env = dict(os.environ, LEXPACK_SERVE_READS=serve)
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, env=env)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    if status != 0:
        sys.exit("serve bench: compile failed")
    return wall * 1000, (usage.ru_utime + usage.ru_stime) * 1000
for cold in (False, True):
    dw, dc = [], []
    for i in range(pairs):
        order = ("0", "1") if i % 2 == 0 else ("1", "0")
        r = {s: run(s, cold) for s in order}
        dw.append(r["1"][0] - r["0"][0])
        dc.append(r["1"][1] - r["0"][1])
    print("  %s, %d alternating pairs: served minus disk, median wall %+.1f ms, median cpu %+.1f ms"
          % ("cold" if cold else "warm", pairs, statistics.median(dw), statistics.median(dc)))
PY

median() {  # hyperfine json -> "wall_median_ms user_mean_ms sys_mean_ms" per command
  python3 -c '
import json, statistics, sys
for r in json.load(open(sys.argv[1]))["results"]:
    print("%.1f %.1f %.1f" % (statistics.median(r["times"]) * 1000, r["user"] * 1000,
                              r["system"] * 1000))
' "$1"
}

# $1 name, $2 directory, $3 compile arguments
measure() {
  name=$1
  cd "$2"
  args=$3
  $cxx $args -H -o /dev/null 2>&1 | sed -n 's/^\.* //p' | sort -u > headers.txt
  nheaders=$(wc -l < headers.txt)
  sleep 1
  # Fill the cache's file table and the page-aligned blobs once.
  python3 "$work/bump.py" tu.cpp && LEXPACK_SERVE_READS=1 "$lexpack" $cxx $args
  python3 "$work/bump.py" tu.cpp && LEXPACK_SERVE_READS=0 "$lexpack" $cxx $args
  for mode in warm cold; do
    prepare="python3 $work/bump.py tu.cpp"
    [ $mode = cold ] && prepare="$prepare && python3 $work/drop.py headers.txt"
    hyperfine -w 2 -r "$runs" --export-json "$work/$name-$mode.json" --prepare "$prepare" \
      "$cxx $args" \
      "LEXPACK_SERVE_READS=0 $lexpack $cxx $args" \
      "LEXPACK_SERVE_READS=1 $lexpack $cxx $args" >/dev/null 2>&1
    median "$work/$name-$mode.json" > "$work/$name-$mode.txt"
  done
  for serve in 0 1; do
    python3 "$work/bump.py" tu.cpp
    LEXPACK_SERVE_READS=$serve strace -f -y -qq -o "$work/trace-$serve.txt" \
      -e trace=open,openat,read,pread64,newfstatat,fstat,statx,stat,lstat,readlink,readlinkat,access,faccessat,faccessat2,mmap \
      "$lexpack" $cxx $args
    python3 "$work/count.py" "$work/trace-$serve.txt" > "$work/$name-sys-$serve.txt"
  done
  echo "$name ($nheaders headers), $runs runs each, every run a miss;" \
    "wall median / user mean / sys mean, ms:"
  for mode in warm cold; do
    set -- $(cat "$work/$name-$mode.txt")
    echo "  $mode: plain $cxx $1 / $2 / $3; lexpack miss, disk reads $4 / $5 / $6;" \
      "served reads $7 / $8 / $9"
    python3 -c "import sys; d, s = float(sys.argv[1]), float(sys.argv[2]); \
ds, ss = float(sys.argv[3]), float(sys.argv[4]); \
print('  %s: disk/served wall %.3f (%+.1f ms, %+.2f%%), sys time %+.1f ms' % \
(sys.argv[5], d / s, s - d, 100 * (s - d) / d, ss - ds))" "$4" "$7" "$6" "$9" "$mode"
  done
  echo "  header syscalls, one miss: disk $(cat "$work/$name-sys-0.txt")"
  echo "  header syscalls, one miss: served $(cat "$work/$name-sys-1.txt")"
  python3 -c "
import re, sys
def totals(path):
    return [int(x) for x in re.findall(r'total=(\d+)', open(path).read())]
(dc, dl), (sc, sl) = totals(sys.argv[1]), totals(sys.argv[2])
print('  header syscalls cut: compiler %.1f%% (%d -> %d), launcher and compiler %.1f%% (%d -> %d)'
      % (100.0 * (dc - sc) / dc, dc, sc, 100.0 * (dc + dl - sc - sl) / (dc + dl), dc + dl, sc + sl))
" "$work/$name-sys-0.txt" "$work/$name-sys-1.txt"
  python3 "$work/paired.py" "$pairs" "$lexpack" $cxx $args
  cd "$work"
}

# --- a heavy TU: many standard headers ----------------------------------
mkdir -p "$work/heavy"
write_heavy_tu "$work/heavy/tu.cpp"
measure heavy "$work/heavy" "-O0 -c tu.cpp -o tu.o"

# --- a project TU with 30 -I directories ---------------------------------
mkdir -p "$work/project"
iflags=""
for d in $(seq -w 0 29); do
  mkdir -p "$work/project/inc$d"
  iflags="$iflags -Iinc$d"
  for k in 0 1 2; do
    printf '#pragma once\n#include <string>\ninline int f%s_%s() { return %s; }\n' "$d" "$k" "$k" \
      > "$work/project/inc$d/h${d}_$k.h"
  done
done
{
  for d in $(seq -w 0 29); do
    for k in 0 1 2; do echo "#include \"h${d}_$k.h\""; done
  done
  echo "#include <vector>"
  echo "#include <map>"
  echo "#include <memory>"
  echo "#include <algorithm>"
  echo "int project() { return f29_2() + int(std::vector<int>{1}.size()); }"
} > "$work/project/tu.cpp"
measure project "$work/project" "-O0$iflags -c tu.cpp -o tu.o"
