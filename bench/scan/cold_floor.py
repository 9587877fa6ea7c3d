#!/usr/bin/env python3
"""How far down a cold `lexpack scan` can go, next to the 5x budget.

usage: bench/scan/cold_floor.py COMPILE_COMMANDS.json [path/to/lexpack]
  RUNS=N         timed runs per figure, median printed (default 7)
  SCAN_DEPS=...  clang-scan-deps binary (default clang-scan-deps-14)

A cold scan (an empty cache) cannot finish before the compiler has answered
twice: its default search list (the walk resolves system headers with it)
and the builtin questions the files ask (`__has_builtin` and the like, known
only once the files are read; the evaluation waits for the answers). One
compiler run gives both when the questions go to its stdin as soon as they
are known. The floor is lexpack's own start (an empty compile database, an
empty cache), then the search list, then the answers, with nothing of
lexpack's in between; its budget is a fifth of clang-scan-deps's time on the
same database. Printed beside them: the cold scan, and the same scan with
the compiler's answers kept from an earlier scan and every source touched
(every TU walked and evaluated again, no compiler run), which is lexpack's
own work alone. Sources get their times back at the end.
"""
import json
import os
import select
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def median_ms(samples):
    return statistics.median(samples)


def timed(argv, env=None):
    start = time.monotonic()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    elapsed = (time.monotonic() - start) * 1e3
    if done.returncode != 0:
        sys.exit("cold floor: failed: " + " ".join(argv))
    return elapsed


def compiler_answers(compiler, language):
    """One compiler run: ms to its search list, and ms from the question to the answers."""
    start = time.monotonic()
    p = subprocess.Popen([compiler, "-x", language, "-dM", "-E", "-v", "-"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    err = b""
    while b"End of search list." not in err:
        select.select([p.stderr], [], [])
        chunk = os.read(p.stderr.fileno(), 65536)
        if not chunk:
            sys.exit("cold floor: %s printed no search list" % compiler)
        err += chunk
    listed = time.monotonic()
    p.stdin.write(b"#if __has_builtin(__builtin_expect)\n#define LEXPACK_FLOOR 1\n#endif\n")
    p.stdin.close()
    asked = time.monotonic()
    out = p.stdout.read()
    p.stderr.read()
    if p.wait() != 0 or b"LEXPACK_FLOOR" not in out:
        sys.exit("cold floor: %s did not answer the question" % compiler)
    answered = time.monotonic()
    return (listed - start) * 1e3, (answered - asked) * 1e3


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    db = os.path.abspath(sys.argv[1])
    here = os.path.dirname(os.path.abspath(__file__))
    lexpack = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else
                              os.path.join(here, "..", "..", "build", "bin", "lexpack"))
    runs = int(os.environ.get("RUNS", "7"))
    scan_deps = os.environ.get("SCAN_DEPS", "clang-scan-deps-14")
    for tool in (lexpack, scan_deps):
        if not shutil.which(tool):
            sys.exit("cold floor: %s not found" % tool)
    entries = json.load(open(db))
    if not entries:
        sys.exit("cold floor: %s has no entry" % db)
    first = entries[0]
    argv = first["arguments"] if "arguments" in first else shlex.split(first["command"])
    compiler = argv[0]
    language = "c" if first["file"].endswith(".c") else "c++"
    sources = [os.path.join(e["directory"], e["file"]) for e in entries]
    times = {s: os.stat(s) for s in sources}

    work = tempfile.mkdtemp(prefix="lexpack-cold-floor-")
    env = dict(os.environ, LEXPACK_SERVER="0")
    env.pop("LEXPACK_LOGFILE", None)
    env.pop("LEXPACK_DISABLE", None)
    empty_db = os.path.join(work, "empty.json")
    with open(empty_db, "w") as f:
        f.write("[]\n")

    def scan(database, cache):
        env["LEXPACK_DIR"] = cache
        return timed([lexpack, "scan", "--compdb", database, "-o", os.devnull], env)

    try:
        csd, start, listed, answered, cold, known = [], [], [], [], [], []
        known_cache = os.path.join(work, "known")
        scan(db, known_cache)  # the compiler's answers, kept for `known`
        for i in range(runs):
            csd.append(timed([scan_deps, "-compilation-database=" + db, "-format=make",
                              "-j", str(os.cpu_count())]))
            cache = os.path.join(work, "cold-%d" % i)
            start.append(scan(empty_db, cache + "-start"))
            l, a = compiler_answers(compiler, language)
            listed.append(l)
            answered.append(a)
            cold.append(scan(db, cache))
            now = time.time()
            for s in sources:
                os.utime(s, (now, now))
            known.append(scan(db, known_cache))
    finally:
        for s, st in times.items():
            os.utime(s, ns=(st.st_atime_ns, st.st_mtime_ns))
        shutil.rmtree(work, ignore_errors=True)

    name = os.path.basename(db)
    if name == "compile_commands.json":
        name = os.path.basename(os.path.dirname(db))
    csd_ms = median_ms(csd)
    budget = csd_ms / 5
    floor = median_ms(start) + median_ms(listed) + median_ms(answered)
    print("database=%s tus=%d compiler=%s language=%s runs=%d" % (name, len(entries), compiler,
                                                                  language, runs))
    print("clang_scan_deps_ms=%.1f budget_5x_ms=%.1f" % (csd_ms, budget))
    print("lexpack_start_ms=%.1f (empty database, empty cache)" % median_ms(start))
    print("compiler_search_list_ms=%.1f (from its start)" % median_ms(listed))
    print("compiler_answers_ms=%.1f (from the question on stdin)" % median_ms(answered))
    print("floor_ms=%.1f (start + search list + answers, no work of lexpack's own)" % floor)
    print("lexpack_cold_ms=%.1f" % median_ms(cold))
    print("lexpack_known_compiler_ms=%.1f (every TU walked and evaluated, no compiler run)" %
          median_ms(known))
    print("floor_share_of_budget=%.2f cold_over_budget=%.1f known_compiler_over_budget=%.1f" %
          (floor / budget, median_ms(cold) / budget, median_ms(known) / budget))


if __name__ == "__main__":
    main()
