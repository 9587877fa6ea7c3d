#!/bin/bash
# Whole-build figures of the server, side by side in one run on a generated
# project of TUS TUs (a few standard headers each, a quarter of them also
# including one shared header): the warm rebuild after `ninja -t clean`, and
# an incremental rebuild after a shared header is edited and put back (its
# dependents rebuild and all hit). Each with ccache as the CMake launcher,
# lexpack as the CMake launcher and `lexpack ninja`, without and with
# `lexpack server`, and `lexpack ninja` right after the server was stopped
# (the first build a new server sees: it is started on demand, as in a CI
# job). And the floor of any CMake launcher: a static program that exits at
# once, writing nothing (ninja still starts /bin/sh for each command, and
# accepts the missing depfile). Prints medians over RUNS, the ratios to
# ccache, and the server's resident memory.
#
#   bench/server/warm.sh [LEXPACK] [TUS]     (RUNS, CXX)
set -eu
LEXPACK=$(realpath "${1:-$(pwd)/build/bin/lexpack}")
TUS=${2:-60}
RUNS=${RUNS:-3}
CXX=${CXX:-g++}
for tool in ccache cmake ninja "$CXX"; do
  command -v "$tool" >/dev/null || { echo "warm bench: $tool not found" >&2; exit 1; }
done
WORK=$(mktemp -d)
export CCACHE_DIR="$WORK/ccache" LEXPACK_DIR="$WORK/lexpack-cache" CCACHE_DIRECT=1
unset LEXPACK_LOGFILE LEXPACK_DISABLE LEXPACK_SERVER CCACHE_DISABLE || true
trap 'LEXPACK_SERVER=1 "$LEXPACK" server --stop >/dev/null 2>&1 || true
  LEXPACK_DIR=$WORK/lexpack-cache-new LEXPACK_SERVER=1 "$LEXPACK" server --stop >/dev/null 2>&1 || true
  rm -rf "$WORK"' EXIT

. "$(cd "$(dirname "$0")" && pwd)/../lib.sh"

mkdir -p "$WORK/src"
{
  echo "cmake_minimum_required(VERSION 3.21)"
  echo "project(warmbench CXX)"
  printf "add_library(objs OBJECT"
  for i in $(seq "$TUS"); do printf " t%d.cpp" "$i"; done
  echo ")"
} > "$WORK/src/CMakeLists.txt"
echo '#pragma once
#include <string>
inline std::string shared_name() { return "shared"; }' > "$WORK/src/shared.h"
for i in $(seq "$TUS"); do
  extra=""
  [ $((i % 4)) -eq 0 ] && extra='#include "shared.h"'
  write_std_tu "$WORK/src/t$i.cpp" "$i" "#include <memory>
$extra"
done
sleep 2  # sources older than the settle time, as in a real tree
cat > "$WORK/noop.c" <<'SRC'
void _start(void) {
#if defined(__x86_64__)
  __asm__ volatile("mov $231, %eax\n xor %edi, %edi\n syscall");
#elif defined(__aarch64__)
  __asm__ volatile("mov x8, #94\n mov x0, #0\n svc #0");
#endif
  for (;;) {}
}
SRC
"${CC:-gcc}" -O2 -static -nostdlib -fno-stack-protector -o "$WORK/noop" "$WORK/noop.c"

# setup NAME LAUNCHER: a build directory configured with that launcher.
setup() {
  cmake -S "$WORK/src" -B "$WORK/$1" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_COMPILER="$CXX" ${2:+-DCMAKE_CXX_COMPILER_LAUNCHER=$2} >/dev/null
}
# build NAME WAY SERVER: one ninja run, seconds on stdout.
build() {
  local t0 t1
  # The new-server row has a cache (and so a server) of its own, stopped
  # before each of its builds; the other rows' server keeps running.
  local cache=$LEXPACK_DIR
  case $1 in *new-server)
    cache=$WORK/lexpack-cache-new
    LEXPACK_DIR=$cache LEXPACK_SERVER=1 "$LEXPACK" server --stop >/dev/null 2>&1 || true ;;
  esac
  t0=$(now)
  if [ "$2" = ninja ]; then
    LEXPACK_DIR=$cache LEXPACK_SERVER=$3 "$LEXPACK" ninja -C "$WORK/$1" >/dev/null 2>&1
  else
    LEXPACK_DIR=$cache LEXPACK_SERVER=$3 ninja -C "$WORK/$1" >/dev/null 2>&1
  fi
  t1=$(now)
  echo "$t1 - $t0" | bc -l
}
edit_shared() { echo "// edit $1" >> "$WORK/src/shared.h"; }
restore_shared() { sed -i '/^\/\/ edit/d' "$WORK/src/shared.h"; }

configs="ccache lexpack-launcher lexpack-ninja lexpack-ninja+new-server lexpack-launcher+server lexpack-ninja+server noop-launcher"
declare -A WARM INCR
setup ccache ccache
setup lexpack-launcher "$LEXPACK"
setup lexpack-ninja ""
setup lexpack-launcher+server "$LEXPACK"
setup lexpack-ninja+server ""
setup lexpack-ninja+new-server ""
setup noop-launcher "$WORK/noop"
LEXPACK_SERVER=1 "$LEXPACK" server --start >/dev/null 2>&1 || true
way() { case $1 in *ninja*) echo ninja ;; *) echo plain ;; esac; }
srv() { case $1 in *server*) echo 1 ;; *) echo 0 ;; esac; }
for c in $configs; do build "$c" "$(way "$c")" "$(srv "$c")" >/dev/null; done  # fill the caches
for run in $(seq "$RUNS"); do
  for c in $configs; do
    ninja -C "$WORK/$c" -t clean >/dev/null
    WARM[$c]+="$(build "$c" "$(way "$c")" "$(srv "$c")") "
  done
  # Edit, rebuild (misses, stored), put back: the rebuild after that hits.
  edit_shared "$run"
  for c in $configs; do build "$c" "$(way "$c")" "$(srv "$c")" >/dev/null; done
  restore_shared
  for c in $configs; do INCR[$c]+="$(build "$c" "$(way "$c")" "$(srv "$c")") "; done
  echo "run $run of $RUNS done" >&2
done
status=$(LEXPACK_SERVER=1 "$LEXPACK" server --status 2>/dev/null || true)
pid=$(echo "$status" | awk '$1=="pid"{print $2}')
rss=$(awk '/^VmRSS/{print $2, $3}' "/proc/$pid/status" 2>/dev/null || echo "not running")

base_w=$(med "${WARM[ccache]}")
base_i=$(med "${INCR[ccache]}")
echo "$TUS TUs ($((TUS / 4)) include the edited header), $CXX, median of $RUNS runs"
printf "%-26s %16s %8s %22s %8s\n" "" "warm rebuild (s)" "ccache/x" "incremental, hits (s)" "ccache/x"
for c in $configs; do
  w=$(med "${WARM[$c]}")
  i=$(med "${INCR[$c]}")
  printf "%-26s %16.2f %8.2f %22.2f %8.2f\n" "$c" "$w" "$(echo "$base_w / $w" | bc -l)" "$i" \
    "$(echo "$base_i / $i" | bc -l)"
done
echo "target: warm rebuild at least 4x faster than ccache's (noop-launcher: the most a CMake launcher can reach)"
echo "server resident memory after the runs: $rss"
