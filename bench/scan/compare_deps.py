#!/usr/bin/env python3
# Compares `lexpack scan --format json` with what `g++ -M` reports for every TU
# of a compile database: TUs exact, files missed (the compiler reads them, the
# scan does not list them) and files extra (listed, never read).
# usage: compare_deps.py compile_commands.json scan.json [jobs]
import json
import os
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor


def words_of(entry):
    return shlex.split(entry["command"]) if "command" in entry else entry["arguments"]


def output_of(entry):
    # The entry's own output, else its command's -o: a source built in several
    # targets (other -D, other flags) is one TU per output.
    if entry.get("output"):
        return entry["output"]
    words = words_of(entry)
    for i, w in enumerate(words):
        if w == "-o" and i + 1 < len(words):
            return words[i + 1]
        if w.startswith("-o") and len(w) > 2:
            return w[2:]
    return ""


def gcc_deps(entry):
    words = words_of(entry)
    args, skip = [], False
    for w in words:
        if skip:
            skip = False
        elif w in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
        elif w not in ("-c", "-MD", "-MMD"):
            args.append(w)
    run = subprocess.run(args + ["-M"], cwd=entry["directory"], capture_output=True, text=True)
    if run.returncode != 0:
        return None
    out = run.stdout
    words = out.replace("\\\n", " ").split(":", 1)[1].split()
    return {os.path.normpath(os.path.join(entry["directory"], w)) for w in words}


def main():
    db = json.load(open(sys.argv[1]))
    scan = {(t["directory"], t["source"], t["output"]): t
            for t in json.load(open(sys.argv[2]))["tus"]}
    jobs = int(sys.argv[3]) if len(sys.argv) > 3 else os.cpu_count()
    with ThreadPoolExecutor(jobs) as pool:
        expected = list(pool.map(gcc_deps, db))
    tus = exact = from_compiler = missed = extra = missed_tus = compiler_failed = 0
    for entry, want in zip(db, expected):
        tu = scan.get((entry["directory"], entry["file"], output_of(entry)))
        if want is None:
            compiler_failed += 1
            print("g++ -M failed: %s (scanned: %s)" % (entry["file"], tu is not None),
                  file=sys.stderr)
            continue
        if tu is None:
            print("not scanned: %s" % entry["file"], file=sys.stderr)
            missed += len(want)
            continue
        tus += 1
        exact += bool(tu.get("exact"))
        from_compiler += bool(tu.get("from_compiler"))
        got = set(tu["deps"])
        m = want - got
        missed += len(m)
        missed_tus += bool(m)
        extra += len(got - want)
        for f in sorted(m):
            print("missed %s (%s): %s" % (entry["file"], output_of(entry), f), file=sys.stderr)
    print("tus=%d tus_exact=%d tus_from_compiler=%d files_missed=%d tus_missing_files=%d "
          "files_extra=%d tus_gcc_failed=%d"
          % (tus, exact, from_compiler, missed, missed_tus, extra, compiler_failed))


if __name__ == "__main__":
    main()
