#!/usr/bin/env python3
"""Time commands side by side, interleaved round by round, and print
medians and ratios. Used by bench/box-startup; usable alone:

    startup.py ROUNDS NAME=CMD... [--ratio A/B ...] [--diff A:B ...] [--pause MS]
               [--burst N]

--diff A:B prints median A minus median B in ms (what one more step
costs). --pause MS sleeps that long before each start, so that every start
finds the machine idle, as an agent's occasional tool call does (back to
back, the kernel's RCU and cgroup state stays warm between starts).
--burst N starts N copies of the command at once and times until the last
has ended (wall time, as 200 agents calling at once meet it); {i} in a
command becomes the copy's number, for names that must differ.
Beside the wall time each start's CPU time is printed: user plus system
time of the command and of every process it waited for (wait4's rusage;
in a burst, the burst's total over N). Two CPUs run a burst, so there the
CPU a start takes decides the wall time; work the kernel defers to its own
threads (a namespace's teardown) is not in it.
The order of the commands turns by one every round, so that each follows
each other equally often. Each command is started with posix_spawn and
reaped with waitpid, so the
measuring overhead is the same small constant for every peer. Leading
VAR=value words set that command's environment (no env(1) exec)."""
import os
import shlex
import statistics
import sys
import time


def main():
    rounds = int(sys.argv[1])
    cmds, ratios, diffs, pause, burst = {}, [], [], 0.0, 1
    args = sys.argv[2:]
    i = 0
    while i < len(args):
        if args[i] == "--ratio":
            ratios.append(args[i + 1].split("/"))
            i += 2
            continue
        if args[i] == "--pause":
            pause = float(args[i + 1]) / 1000
            i += 2
            continue
        if args[i] == "--burst":
            burst = int(args[i + 1])
            i += 2
            continue
        if args[i] == "--diff":
            diffs.append(args[i + 1].split(":", 1))
            i += 2
            continue
        name, cmd = args[i].split("=", 1)
        words, env = shlex.split(cmd), dict(os.environ)
        while words and "=" in words[0] and not words[0].startswith(("/", ".")):
            k, v = words.pop(0).split("=", 1)
            env[k] = v
        cmds[name] = (words, env)
        i += 1
    times = {k: [] for k in cmds}
    cpu = {k: [] for k in cmds}
    devnull = os.open(os.devnull, os.O_RDWR)
    names = list(cmds)
    for r in range(rounds + 2):
        # The order turns by one each round: every command follows every
        # other equally often, so none always pays for the teardown of
        # the same predecessor (a box's namespaces are freed after it
        # ends, on the next start's time).
        for name in names[r % len(names):] + names[:r % len(names)]:
            argv, env = cmds[name]
            if pause:
                time.sleep(pause)
            copies = [[w.replace("{i}", str(n)) for w in argv] for n in range(burst)]
            t = time.perf_counter_ns()
            pids = [os.posix_spawnp(a[0], a, env,
                                    file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1)])
                    for a in copies]
            reaped = [os.wait4(pid, 0) for pid in pids]
            dt = (time.perf_counter_ns() - t) / 1e6
            used = sum(ru.ru_utime + ru.ru_stime for _, _, ru in reaped)
            for _, st, _ in reaped:
                if os.waitstatus_to_exitcode(st) != 0:
                    sys.exit(f"{name} failed (status {st}): {' '.join(argv)}")
            if r >= 2:  # two warm-up rounds
                times[name].append(dt)
                cpu[name].append(used * 1000 / burst)
    med = {k: statistics.median(v) for k, v in times.items()}
    med_cpu = {k: statistics.median(v) for k, v in cpu.items()}
    print(f"{'command':12s} {'median ms':>10s} {'p10':>8s} {'p90':>8s} {'cpu ms':>8s}")
    for k, v in times.items():
        q = statistics.quantiles(v, n=10)
        print(f"{k:12s} {med[k]:10.2f} {q[0]:8.2f} {q[-1]:8.2f} {med_cpu[k]:8.3f}")
    for a, b in ratios:
        print(f"ratio {a}/{b} = {med[a] / med[b]:.2f} (cpu {med_cpu[a] / med_cpu[b]:.2f})")
    for a, b in diffs:
        print(f"{a} - {b} = {med[a] - med[b]:+.2f} ms")


if __name__ == "__main__":
    main()
