#!/usr/bin/env bash
# Whole-build dependency scan, side by side in one run on the same compile
# database: lexpack scan (index cold, warm, and right after one source is
# touched), clang-scan-deps -format=make and
# g++ -M per TU (both -j <cores>), for a generated project and lexpack's own build
# (both built), and with no build history for examples/project and a generated
# project using Boost's computed includes (configured, never built). For each:
# TUs exact, files missed and files extra against g++ -M (compare_deps.py),
# and the share of its compiles the launcher would cache (lexpack warm).
#
# usage: bench/scan/run.sh [path/to/lexpack] [TUS]
#   RUNS=N        timed runs per figure, median reported (default 3)
#   PROJECTS=...  which projects (default "generated lexpack example boost"; set
#                 but empty: none, only SOURCES)
#   BOOST_TUS=N   TUs of the Boost project (default 40)
#   SELF_BUILD=D  an already built lexpack build directory to scan instead of
#                 configuring and building lexpack into a temporary one
#   SCAN_DEPS=... clang-scan-deps binary (default clang-scan-deps-14)
#   SOURCES="DIR[:CMAKE_ARGS] ..."
#                 also these CMake projects (a source checkout each, named by
#                 its last component), configured and never built; CMAKE_ARGS
#                 are comma-separated (e.g. fmt:-DFMT_TEST=ON)
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
lexpack=$(realpath "${1:-$root/build/bin/lexpack}")
tus=${2:-120}
runs=${RUNS:-3}
scan_deps=${SCAN_DEPS:-clang-scan-deps-14}
projects=${PROJECTS-generated lexpack example boost}
boost_tus=${BOOST_TUS:-40}
jobs=$(nproc)
for tool in cmake ninja python3 g++ xargs "$scan_deps"; do
  command -v "$tool" >/dev/null || { echo "scan bench: $tool not found" >&2; exit 1; }
done
[ -x "$lexpack" ] || { echo "scan bench: no lexpack at $lexpack" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/lexpack-scan-bench-XXXXXX")
trap 'rm -rf "$work"' EXIT
export LEXPACK_DIR="$work/cache"
unset LEXPACK_LOGFILE LEXPACK_DISABLE || true

export LC_ALL=C  # EPOCHREALTIME with a '.'
median_ms() { python3 -c 'import statistics,sys; print("%.1f" % statistics.median(map(float, sys.argv[1:])))' "$@"; }
ratio() { python3 -c 'import sys; print("%.1f" % (float(sys.argv[1]) / float(sys.argv[2])))' "$1" "$2"; }

# The compile edges of a build dir as a compile_commands.json (ninja -t
# compdb also lists link steps), and the g++ -M command of each TU.
make_inputs() {  # $1 = build dir, $2 = output prefix
  ninja -C "$1" -t compdb > "$2.all.json"
  python3 - "$2.all.json" "$2.json" "$2.gcc" <<'EOF'
import json, shlex, sys
entries = []
for e in json.load(open(sys.argv[1])):
    words = shlex.split(e["command"]) if "command" in e else e["arguments"]
    if "-c" not in words or not e["file"].endswith((".c", ".cc", ".cpp", ".cxx")):
        continue
    entries.append(e)
json.dump(entries, open(sys.argv[2], "w"), indent=1)
drop_with_value = {"-o", "-MF", "-MT", "-MQ"}
with open(sys.argv[3], "w") as out:
    for e in entries:
        words = shlex.split(e["command"]) if "command" in e else e["arguments"]
        args, skip = [], False
        for w in words:
            if skip:
                skip = False
            elif w in drop_with_value:
                skip = True
            elif w not in ("-c", "-MD", "-MMD"):
                args.append(w)
        args += ["-M", "-o", "/dev/null"]
        out.write("cd %s && %s\n" % (shlex.quote(e["directory"]), shlex.join(args)))
EOF
}

time_ms() {  # runs "$@" once, prints milliseconds (bash's clock: no process but the command's)
  local start end us
  start=${EPOCHREALTIME/./}
  "$@" >/dev/null 2>&1 || { echo "scan bench: failed: $*" >&2; exit 1; }
  end=${EPOCHREALTIME/./}
  us=$((end - start))
  printf '%d.%03d\n' $((us / 1000)) $((us % 1000))
}

lexpack_scan() { "$lexpack" scan --compdb "$1" -o "$work/lexpack.d"; }
# clang-scan-deps fails the whole run when it rejects one TU's arguments (a
# gcc-only flag); it still scans the others, so its time counts, and the
# TUs it could not scan are printed with the figures.
scan_deps_run() {
  "$scan_deps" -compilation-database="$1" -format=make -j "$jobs" > "$work/scan-deps.d" \
    2> "$work/scan-deps.err" || true
}
scan_deps_errors() { grep -c '^Error while scanning' "$work/scan-deps.err" || true; }
gcc_m_run() { xargs -d '\n' -P "$jobs" -n 1 sh -c < "$1"; }

# A scan right after an edit: one TU's source touched before each run, so
# that TU is scanned again and the others come from their own memos. The
# source's modification time is put back afterwards.
after_edit_ms() {  # $1 = compile database; prints the median
  local src times="" k=0
  src=$(python3 -c 'import json,os,sys; e=json.load(open(sys.argv[1]))[0]; print(os.path.join(e["directory"], e["file"]))' "$1")
  touch -r "$src" "$work/mtime.ref"
  while [ "$k" -lt "$runs" ]; do
    k=$((k + 1))
    touch "$src"
    times="$times $(time_ms lexpack_scan "$1")"
  done
  touch -r "$work/mtime.ref" "$src"
  median_ms $times
}

# A scan with the store known and the scan memos stale: a comment appended
# to every source before each run (a new one each time, since a memo whose
# files hold the same bytes still holds), so every TU is walked and
# evaluated again, with the compiler's answers an earlier scan kept (a
# restored CI cache, a branch switch). `restore`: the sources cut back to
# their own bytes.
edit_sources() {  # $1 = compile database, $2 = a number, or restore
  python3 - "$1" "$2" "$work/sizes.json" <<'EOF2'
import json, os, sys
db, what, saved = sys.argv[1:4]
paths = sorted({os.path.join(e["directory"], e["file"]) for e in json.load(open(db))})
if not os.path.exists(saved):
    json.dump({p: os.path.getsize(p) for p in paths}, open(saved, "w"))
sizes = json.load(open(saved))
for p in paths:
    os.truncate(p, sizes[p])
    if what != "restore":
        with open(p, "a") as f:
            f.write("\n/* scan bench %s */\n" % what)
if what == "restore":
    os.unlink(saved)
EOF2
}
known_ms() {  # $1 = compile database; prints the median
  local times="" k=0
  lexpack_scan "$1" >/dev/null 2>&1
  while [ "$k" -lt "$runs" ]; do
    k=$((k + 1))
    edit_sources "$1" "$k"
    times="$times $(time_ms lexpack_scan "$1")"
  done
  edit_sources "$1" restore
  median_ms $times
}

bench_project() {  # $1 = name, $2 = build dir (built with plain ninja)
  name=$1
  make_inputs "$2" "$work/$name"
  db=$work/$name.json
  n_tus=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$db")
  cold=""; warm=""; sd=""; gm=""
  i=0
  while [ "$i" -lt "$runs" ]; do
    i=$((i + 1))
    rm -rf "$LEXPACK_DIR"  # cold: an empty cache (removing it is not timed)
    cold="$cold $(time_ms lexpack_scan "$db")"
    warm="$warm $(time_ms lexpack_scan "$db")"
    sd="$sd $(time_ms scan_deps_run "$db")"
    gm="$gm $(time_ms gcc_m_run "$work/$name.gcc")"
  done
  cold=$(median_ms $cold); warm=$(median_ms $warm); sd=$(median_ms $sd); gm=$(median_ms $gm)
  edit=$(after_edit_ms "$db")
  known=$(known_ms "$db")
  stats=$("$lexpack" scan --compdb "$db" -o /dev/null 2>&1 | tail -n 1)
  files=$(echo "$stats" | sed -n 's/.* \([0-9]*\) unique files.*/\1/p')
  mb=$(echo "$stats" | sed -n 's/.* files, \([0-9.]*\) MB.*/\1/p')
  "$lexpack" scan -C "$2" --check -o /dev/null > "$work/check.out" 2> "$work/check.err" || true
  missed=$(grep -c '^missed ' "$work/check.out" || true)
  missed_tus=$(sed -n 's/.*check: \([0-9]*\) TUs miss.*/\1/p' "$work/check.err")
  extra_tus=$(sed -n 's/.* \([0-9]*\) have extra files.*/\1/p' "$work/check.err")
  unrecorded=$(sed -n 's/.* \([0-9]*\) not recorded by ninja.*/\1/p' "$work/check.err")
  echo "project=$name tus=$n_tus unique_files=$files unique_mb=$mb jobs=$jobs runs=$runs"
  echo "project=$name lexpack_cold_ms=$cold"
  echo "project=$name lexpack_warm_ms=$warm"
  echo "project=$name lexpack_after_edit_ms=$edit (one source touched)"
  echo "project=$name lexpack_known_ms=$known (store kept, every source changed)"
  echo "project=$name clang_scan_deps_ms=$sd (TUs it could not scan: $(scan_deps_errors))"
  echo "project=$name gcc_m_ms=$gm"
  echo "project=$name ratio_clang_scan_deps_over_lexpack_cold=$(ratio "$sd" "$cold")"
  echo "project=$name ratio_clang_scan_deps_over_lexpack_warm=$(ratio "$sd" "$warm")"
  echo "project=$name ratio_clang_scan_deps_over_lexpack_after_edit=$(ratio "$sd" "$edit")"
  echo "project=$name ratio_clang_scan_deps_over_lexpack_known=$(ratio "$sd" "$known")"
  echo "project=$name ratio_gcc_m_over_lexpack_cold=$(ratio "$gm" "$cold")"
  echo "project=$name ratio_gcc_m_over_lexpack_warm=$(ratio "$gm" "$warm")"
  echo "project=$name check_missed_files=$missed check_missed_tus=${missed_tus:-?} check_extra_tus=${extra_tus:-?} check_unrecorded_tus=${unrecorded:-?}"
  against_gcc_m "$name" "$db"
  cacheable_share "$name" "$2"
}

# The share of the project's compiles the launcher would cache (hit or
# miss-and-store, rather than pass through): `lexpack warm` asks each one.
cacheable_share() {  # $1 = name, $2 = build dir
  line=$("$lexpack" warm -C "$2" --no-fetch 2>&1 | tail -n 1)
  total=$(echo "$line" | sed -n 's/.*warm: \([0-9]*\) compiles.*/\1/p')
  unc=$(echo "$line" | sed -n 's/.* \([0-9]*\) uncacheable.*/\1/p')
  echo "project=$1 cacheable=$((total - unc)) of $total compiles ($unc uncacheable)"
}

# TUs exact, files missed and extra of a cold scan against g++ -M, and of
# a scan with the store kept and every source changed.
against_gcc_m() {  # $1 = name, $2 = compile database
  rm -rf "$LEXPACK_DIR"
  "$lexpack" scan --compdb "$2" --format json -o "$work/scan.json" 2>/dev/null
  echo "project=$1 against_gcc_m $(python3 "$here/compare_deps.py" "$2" "$work/scan.json" "$jobs" 2>"$work/missed.txt")"
  edit_sources "$2" known
  "$lexpack" scan --compdb "$2" --format json -o "$work/scan.json" 2>/dev/null
  edit_sources "$2" restore
  echo "project=$1 against_gcc_m_known $(python3 "$here/compare_deps.py" "$2" "$work/scan.json" "$jobs" 2>"$work/missed.txt")"
}

# A project configured and never built: no ninja record, so speed and the
# comparison with g++ -M only.
bench_fresh() {  # $1 = name, $2 = compile database
  name=$1
  db=$2
  n_tus=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$db")
  sleep 2  # files younger than the clock's resolution are not remembered
  cold=""; warm=""; sd=""
  i=0
  while [ "$i" -lt "$runs" ]; do
    i=$((i + 1))
    rm -rf "$LEXPACK_DIR"  # cold: an empty cache (removing it is not timed)
    cold="$cold $(time_ms lexpack_scan "$db")"
    warm="$warm $(time_ms lexpack_scan "$db")"
    sd="$sd $(time_ms scan_deps_run "$db")"
  done
  cold=$(median_ms $cold); warm=$(median_ms $warm); sd=$(median_ms $sd)
  edit=$(after_edit_ms "$db")
  known=$(known_ms "$db")
  stats=$("$lexpack" scan --compdb "$db" -o /dev/null 2>&1 | tail -n 1)
  files=$(echo "$stats" | sed -n 's/.* \([0-9]*\) unique files.*/\1/p')
  echo "project=$name tus=$n_tus unique_files=$files jobs=$jobs runs=$runs (no build history)"
  echo "project=$name lexpack_cold_ms=$cold"
  echo "project=$name lexpack_warm_ms=$warm"
  echo "project=$name lexpack_after_edit_ms=$edit (one source touched)"
  echo "project=$name lexpack_known_ms=$known (store kept, every source changed)"
  echo "project=$name clang_scan_deps_ms=$sd (TUs it could not scan: $(scan_deps_errors))"
  echo "project=$name ratio_clang_scan_deps_over_lexpack_cold=$(ratio "$sd" "$cold")"
  echo "project=$name ratio_clang_scan_deps_over_lexpack_warm=$(ratio "$sd" "$warm")"
  echo "project=$name ratio_clang_scan_deps_over_lexpack_after_edit=$(ratio "$sd" "$edit")"
  echo "project=$name ratio_clang_scan_deps_over_lexpack_known=$(ratio "$sd" "$known")"
  against_gcc_m "$name" "$db"
  cacheable_share "$name" "$(dirname "$db")"
}

wants() { case " $projects " in *" $1 "*) return 0 ;; esac; return 1; }

# What the timer itself costs: a program that does nothing, timed the same
# way (bash's fork, exec and wait). Every time below includes it, the
# small ones (a warm scan) most.
timer_floor=""
for _ in $(seq "$runs"); do timer_floor="$timer_floor $(time_ms /bin/true)"; done
echo "timer_floor_ms=$(median_ms $timer_floor) (/bin/true timed like every figure below; each includes it)"

# --- projects with no build history -------------------------------------
if wants example; then
  cmake -S "$root/examples/project" -B "$work/example-build" -G Ninja \
    -DCMAKE_CXX_COMPILER="$(command -v g++)" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
  bench_fresh example "$work/example-build/compile_commands.json"
fi
if wants boost; then
  [ -d /usr/include/boost ] || { echo "scan bench: libboost-dev is not installed" >&2; exit 1; }
  python3 "$here/gen_boost_project.py" "$work/boost" --tus "$boost_tus"
  cmake -S "$work/boost" -B "$work/boost-build" -G Ninja \
    -DCMAKE_CXX_COMPILER="$(command -v g++)" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
  bench_fresh boost "$work/boost-build/compile_commands.json"
fi

# --- real projects, configured and never built --------------------------
for spec in ${SOURCES:-}; do
  src=${spec%%:*}
  extra=""
  [ "$spec" = "$src" ] || extra=$(echo "${spec#*:}" | tr ',' ' ')
  name=$(basename "$src")
  # shellcheck disable=SC2086
  cmake -S "$src" -B "$work/$name-build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_COMPILER="$(command -v g++)" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON $extra >/dev/null
  bench_fresh "$name" "$work/$name-build/compile_commands.json"
done

# --- a generated project ------------------------------------------------
if wants generated; then
python3 "$root/examples/gen_project.py" "$work/gen" --tus "$tus" >/dev/null
cmake -S "$work/gen" -B "$work/gen-build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER="$(command -v g++)" >/dev/null
ninja -C "$work/gen-build" >/dev/null
bench_project generated "$work/gen-build"
fi

# --- lexpack's own build ------------------------------------------------
wants lexpack || exit 0
self=${SELF_BUILD:-}
if [ -z "$self" ]; then
  self=$work/self-build
  cmake -S "$root" -B "$self" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
  ninja -C "$self" -j "$jobs" >/dev/null
fi
bench_project lexpack "$(realpath "$self")"
