#!/usr/bin/env python3
# Side-by-side timing of a few commands run in turn, round after round, so
# that a machine whose load drifts during the run weighs on each the same
# (hyperfine times each command in one block). Prints, per command, the median
# CPU (user+sys of the process and its children) and wall time, and each
# command's ratio to the first one.
#
# usage: bench/launcher/interleaved.py ROUNDS "cmd1 args" "cmd2 args" ...
import os
import shlex
import statistics
import sys
import time


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: interleaved.py ROUNDS COMMAND...")
    rounds = int(sys.argv[1])
    commands = [shlex.split(c) for c in sys.argv[2:]]
    warmup = 3
    cpu = [[] for _ in commands]
    wall = [[] for _ in commands]
    devnull = os.open(os.devnull, os.O_WRONLY)
    for r in range(rounds + warmup):
        for i, argv in enumerate(commands):
            start = time.perf_counter()
            pid = os.posix_spawnp(argv[0], argv, os.environ,
                                  file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1),
                                                (os.POSIX_SPAWN_DUP2, devnull, 2)])
            _, status, usage = os.wait4(pid, 0)
            end = time.perf_counter()
            if os.waitstatus_to_exitcode(status) != 0:
                sys.exit("interleaved: %s failed" % " ".join(argv))
            if r >= warmup:
                cpu[i].append((usage.ru_utime + usage.ru_stime) * 1000)
                wall[i].append((end - start) * 1000)
    print("%d interleaved rounds, medians:" % rounds)
    base_cpu, base_wall = statistics.median(cpu[0]), statistics.median(wall[0])
    for i, argv in enumerate(commands):
        c, w = statistics.median(cpu[i]), statistics.median(wall[i])
        print("  %-60s cpu %7.2f ms  wall %7.2f ms  (first/this: cpu %.2fx, wall %.2fx)"
              % (" ".join(argv)[:60], c, w, base_cpu / c, base_wall / w))


if __name__ == "__main__":
    main()
