#!/bin/bash
# The everyday incremental edit: a comment appended to a header that every TU
# includes, then the rebuild, lexpack (`lexpack ninja`) against ccache (CMake's
# compiler launcher) on a real CMake project. Three copies of the project,
# each with a build directory of its own: one built through lexpack, one
# through ccache, one plain (no cache: the reference). After cold builds of
# all three, RUNS times: one more line appended to HEADER in the lexpack and
# the ccache tree, both rebuilt and timed (which one goes first alternates).
# Then the plain tree gets the same HEADER and is rebuilt, and every object of
# the lexpack and the ccache tree is compared byte for byte with the plain
# tree's (the cold objects too, before any edit: they show that objects of
# the three trees are comparable at all).
#
#   bench/launcher/comment_edit.sh LEXPACK SOURCE_DIR HEADER [cmake args...]
#     (RUNS: timed edits, default 3; EDIT=comment (default) appends
#      "/* edited */", EDIT=token appends "#define LEXPACK_BENCH_EDIT 1", an
#      edit that changes the tokens; JOBS: ninja -j for every build, default
#      ninja's; KEEP=1 keeps the work directory and says where)
#
# HEADER is a path inside SOURCE_DIR. Every tree is configured with
# `cmake -G Ninja -DCMAKE_BUILD_TYPE=Release`, the cmake args, and
# -ffile-prefix-map=TREE=. added to CMAKE_C_FLAGS and CMAKE_CXX_FLAGS (to a
# -DCMAKE_C_FLAGS=... among the cmake args too), so that no object records
# which tree it was built in; the trees' paths have the same length anyway.
# Exits non-zero only when something cannot be set up (a configure or a build
# fails), never on the times or on differing objects.
set -u
if [ $# -lt 3 ]; then
  echo "usage: $0 LEXPACK SOURCE_DIR HEADER [cmake args...]" >&2
  exit 2
fi
LEXPACK=$(realpath "$1")
SOURCE=$(realpath "$2")
HEADER=$3
shift 3
case $HEADER in /*) HEADER=$(realpath --relative-to="$SOURCE" "$HEADER") ;; esac
RUNS=${RUNS:-3}
EDIT=${EDIT:-comment}
JOBS=${JOBS:-}
HERE=$(cd "$(dirname "$0")" && pwd)
[ -x "$LEXPACK" ] || { echo "$0: $LEXPACK is not an executable" >&2; exit 2; }
[ -f "$SOURCE/$HEADER" ] || { echo "$0: no $HEADER in $SOURCE" >&2; exit 2; }
case $EDIT in comment | token) ;; *) echo "$0: EDIT is comment or token" >&2; exit 2 ;; esac
case $RUNS in '' | *[!0-9]* | 0) echo "$0: RUNS is a positive number" >&2; exit 2 ;; esac
for tool in cmake ninja ccache awk cmp; do
  command -v "$tool" >/dev/null || { echo "$0: $tool not found" >&2; exit 2; }
done
. "$HERE/../lib.sh"

ROOT=$(mktemp -d -t lexpack-comment-edit-XXXXXX)
cleanup() {
  LEXPACK_DIR=$ROOT/lexpack-cache "$LEXPACK" server --stop >/dev/null 2>&1
  if [ "${KEEP:-0}" = 1 ]; then echo "kept: $ROOT"; else rm -rf "$ROOT"; fi
}
trap cleanup EXIT
unset LEXPACK_LOGFILE LEXPACK_DISABLE LEXPACK_SERVER LEXPACK_REMOTE_STORAGE LEXPACK_BASE_DIR \
  CCACHE_DISABLE CCACHE_RECACHE CCACHE_READONLY CCACHE_PREFIX CCACHE_NODIRECT CCACHE_BASEDIR || true
export LEXPACK_DIR=$ROOT/lexpack-cache CCACHE_DIR=$ROOT/ccache-dir
NINJA_J=()
[ -n "$JOBS" ] && NINJA_J=(-j "$JOBS")

# The trees: L through lexpack, C through ccache, P plain. Same-length paths.
L=$ROOT/L C=$ROOT/C P=$ROOT/P

# fail LOG MESSAGE: the end of LOG, MESSAGE, exit 1.
fail() {
  tail -30 "$1" >&2
  echo "$0: $2" >&2
  exit 1
}

# configure TREE [cmake args...]: copies SOURCE to TREE, configures TREE/build.
configure() {
  local tree=$1 a args=() c_seen=0 cxx_seen=0 map
  shift
  map="-ffile-prefix-map=$tree=."
  cp -a "$SOURCE" "$tree"
  rm -rf "$tree/build"
  for a in "$@"; do
    case $a in
      -DCMAKE_C_FLAGS=* | -DCMAKE_C_FLAGS:*=*) a="$a $map" c_seen=1 ;;
      -DCMAKE_CXX_FLAGS=* | -DCMAKE_CXX_FLAGS:*=*) a="$a $map" cxx_seen=1 ;;
    esac
    args+=("$a")
  done
  [ $c_seen = 1 ] || args+=("-DCMAKE_C_FLAGS=$map")
  [ $cxx_seen = 1 ] || args+=("-DCMAKE_CXX_FLAGS=$map")
  cmake -S "$tree" -B "$tree/build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${args[@]}" \
    > "$tree.configure.log" 2>&1 || fail "$tree.configure.log" "configure of the ${tree##*/} tree failed"
}

# build TREE LOG: builds TREE/build its way; prints the seconds it took.
build() {
  local tree=$1 log=$2 start end rc
  start=$(now)
  if [ "$tree" = "$L" ]; then
    "$LEXPACK" ninja "${NINJA_J[@]}" -C "$tree/build" > "$log" 2>&1
  else
    ninja "${NINJA_J[@]}" -C "$tree/build" > "$log" 2>&1
  fi
  rc=$?
  end=$(now)
  [ $rc = 0 ] || fail "$log" "build of the ${tree##*/} tree failed (exit $rc)"
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f\n", b - a }'
}

# edit TREE: appends one line to TREE's HEADER.
edit() {
  local f=$1/$HEADER
  # A header whose last line has no newline gets one first.
  [ -z "$(tail -c 1 "$f")" ] || echo >> "$f"
  if [ "$EDIT" = token ]; then
    printf '#define LEXPACK_BENCH_EDIT 1\n' >> "$f"
  else
    printf '/* edited */\n' >> "$f"
  fi
}

# compare TREE: "N objects, M differ" of TREE's objects against P's; names the
# first few that differ (or that P does not have).
compare() {
  local tree=$1 o n=0 differ=0
  while read -r o; do
    n=$((n + 1))
    if ! cmp -s "$tree/build/$o" "$P/build/$o"; then
      differ=$((differ + 1))
      [ $differ -le 5 ] && echo "    differs: ${o#./}" >&2
    fi
  done < <(cd "$tree/build" && find . -type f -name '*.o' ! -name '.lexpack-*' | sort)
  echo "$n objects, $differ differ"
}

# ccache's hits and misses since the last `ccache -z`.
ccache_stats() {
  local s
  s=$(ccache --print-stats 2>/dev/null)
  if [ -n "$s" ]; then
    echo "$s" | awk '{ v[$1] = $2 }
      END { printf "%d hits (%d direct, %d preprocessed), %d misses\n",
            v["direct_cache_hit"] + v["preprocessed_cache_hit"], v["direct_cache_hit"],
            v["preprocessed_cache_hit"], v["cache_miss"] }'
  else
    ccache -s
  fi
}

echo "comment-edit bench: ${SOURCE##*/}, header $HEADER, edit $EDIT, runs $RUNS, jobs ${JOBS:-default}"
configure "$L" "$@"
configure "$C" -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache "$@"
configure "$P" "$@"

# Cold builds: empty caches.
t_l=$(build "$L" "$ROOT/L.cold.log") || exit 1
t_c=$(build "$C" "$ROOT/C.cold.log") || exit 1
t_p=$(build "$P" "$ROOT/P.cold.log") || exit 1
echo "cold builds: lexpack $t_l s, ccache $t_c s, plain $t_p s"
echo "cold build, lexpack:"
grep '^lexpack: ' "$ROOT/L.cold.log" | sed 's/^/  /'
ninja -C "$P/build" -t deps | awk -v abs="$P/$HEADER" -v rel="../$HEADER" -v h="$HEADER" '
  /^[^ ].*: #deps / { o = $1; sub(/:$/, "", o); if (o ~ /\.o$/) tus++; next }
  /^    / && o ~ /\.o$/ && ($1 == abs || $1 == rel) && !(o in seen) { seen[o] = 1; n++ }
  END { printf "TUs: %d, of which %d include %s\n", tus, n, h }'
echo "cold objects against the plain tree's: lexpack: $(compare "$L"); ccache: $(compare "$C")"

# The edits.
: > "$ROOT/times.L"
: > "$ROOT/times.C"
i=1
while [ $i -le "$RUNS" ]; do
  edit "$L"
  edit "$C"
  if [ $((i % 2)) = 1 ]; then order="L C"; else order="C L"; fi
  for t in $order; do
    if [ "$t" = L ]; then
      s=$(build "$L" "$ROOT/L.edit.log") || exit 1
    else
      ccache -z > /dev/null
      s=$(build "$C" "$ROOT/C.edit.log") || exit 1
    fi
    echo "$s" >> "$ROOT/times.$t"
  done
  echo "run $i: lexpack $(tail -1 "$ROOT/times.L") s, ccache $(tail -1 "$ROOT/times.C") s"
  i=$((i + 1))
done
m_l=$(median < "$ROOT/times.L")
m_c=$(median < "$ROOT/times.C")
echo "median: lexpack $m_l s, ccache $m_c s, ccache/lexpack $(awk -v l="$m_l" -v c="$m_c" \
  'BEGIN { if (l > 0) printf "%.2fx", c / l; else print "-" }')"
echo "last run, lexpack:"
grep '^lexpack: ' "$ROOT/L.edit.log" | sed 's/^/  /'
echo "last run, ccache: $(ccache_stats)"

# The plain tree gets the edited HEADER: the reference rebuild.
cmp -s "$L/$HEADER" "$C/$HEADER" || { echo "$0: the lexpack and the ccache tree's $HEADER differ" >&2; exit 1; }
cp "$L/$HEADER" "$P/$HEADER"
t_p=$(build "$P" "$ROOT/P.edit.log") || exit 1
echo "plain rebuild after the same edits (no cache): $t_p s"
echo "objects after the edits against the plain tree's: lexpack: $(compare "$L"); ccache: $(compare "$C")"
