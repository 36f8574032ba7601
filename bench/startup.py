#!/usr/bin/env python3
"""Time commands side by side, interleaved round by round, and print
medians and ratios. Used by bench/box-startup; usable alone:

    startup.py ROUNDS NAME=CMD... [--ratio A/B ...] [--diff A:B ...] [--pause MS]
               [--burst N] [--settle]

--diff A:B prints median A minus median B in ms (what one more step
costs). --pause MS sleeps that long before each start, so that every start
finds the machine idle, as an agent's occasional tool call does (back to
back, the kernel's RCU and cgroup state stays warm between starts).
--burst N starts N copies of the command at once and times until the last
has ended (wall time, as 200 agents calling at once meet it); {i} in a
command becomes the copy's number, for names that must differ.
Beside the wall time each start's CPU time is printed: user plus system
time of the command and of every process it waited for (wait4's rusage;
in a burst, the burst's total over N).
--settle waits, before each start, until the machine is quiet (under a
tenth of its CPUs busy for 100 ms, at most 10 s or $STARTUP_SETTLE_MAX
seconds), and after it until it is quiet again, and prints a third
figure, the machine's busy CPU time over that whole window (from
/proc/stat, per copy): with it, the work the kernel defers to its own
threads (a network namespace's teardown, an unmounted tree's) counts for
the command that left it, and no command starts into the teardown of the
one before. Without it, a burst of 200
meets the previous burst's leftovers and is charged for them.
The order of the commands turns by one every round, so that each follows
each other equally often. Each command is started with posix_spawn and
reaped with wait4, so the measuring overhead is the same small constant
for every peer. Leading VAR=value words set that command's environment
(no env(1) exec)."""
import os
import shlex
import statistics
import sys
import time

TICK_MS = 1000 / os.sysconf("SC_CLK_TCK")
NCPU = os.cpu_count() or 1


def busy_ms():
    """CPU time the machine spent busy since boot, all CPUs, in ms."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal: all but idle, iowait
    return (sum(v[:8]) - v[3] - v[4]) * TICK_MS


def wait_quiet():
    """Until the machine's CPUs were under 10% busy for 100 ms (at most 10 s
    or $STARTUP_SETTLE_MAX seconds)."""
    end = time.monotonic() + float(os.environ.get("STARTUP_SETTLE_MAX", "10"))
    while time.monotonic() < end:
        b = busy_ms()
        time.sleep(0.1)
        if busy_ms() - b < 0.1 * 100 * NCPU:
            return


def ratio(a, b):
    """a/b to two places; /proc/stat's ticks can read 0 for a short command."""
    return f"{a / b:.2f}" if b else "n/a"


def parse(args):
    cmds, ratios, diffs, pause, burst, settle = {}, [], [], 0.0, 1, False
    i = 0
    while i < len(args):
        if args[i] == "--ratio":
            ratios.append(args[i + 1].split("/"))
        elif args[i] == "--pause":
            pause = float(args[i + 1]) / 1000
        elif args[i] == "--burst":
            burst = int(args[i + 1])
        elif args[i] == "--diff":
            diffs.append(args[i + 1].split(":", 1))
        elif args[i] == "--settle":
            settle = True
            i += 1
            continue
        else:
            name, cmd = args[i].split("=", 1)
            words, env = shlex.split(cmd), dict(os.environ)
            while words and "=" in words[0] and not words[0].startswith(("/", ".")):
                k, v = words.pop(0).split("=", 1)
                env[k] = v
            cmds[name] = (words, env)
            i += 1
            continue
        i += 2
    return cmds, ratios, diffs, pause, burst, settle


def main():
    rounds = int(sys.argv[1])
    cmds, ratios, diffs, pause, burst, settle = parse(sys.argv[2:])
    times = {k: [] for k in cmds}
    cpu = {k: [] for k in cmds}
    machine = {k: [] for k in cmds}
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
            if settle:
                wait_quiet()
                busy_before = busy_ms()
            copies = [[w.replace("{i}", str(n)) for w in argv] for n in range(burst)]
            t = time.perf_counter_ns()
            pids = [os.posix_spawnp(a[0], a, env,
                                    file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1)])
                    for a in copies]
            reaped = [os.wait4(pid, 0) for pid in pids]
            dt = (time.perf_counter_ns() - t) / 1e6
            if settle:
                wait_quiet()
                busy = busy_ms() - busy_before
            used = sum(ru.ru_utime + ru.ru_stime for _, _, ru in reaped)
            for _, st, _ in reaped:
                if os.waitstatus_to_exitcode(st) != 0:
                    sys.exit(f"{name} failed (status {st}): {' '.join(argv)}")
            if r >= 2:  # two warm-up rounds
                times[name].append(dt)
                cpu[name].append(used * 1000 / burst)
                if settle:
                    machine[name].append(busy / burst)
    med = {k: statistics.median(v) for k, v in times.items()}
    med_cpu = {k: statistics.median(v) for k, v in cpu.items()}
    med_m = {k: statistics.median(v) for k, v in machine.items() if v}
    extra = f" {'machine ms':>10s}" if settle else ""
    print(f"{'command':12s} {'median ms':>10s} {'p10':>8s} {'p90':>8s} {'cpu ms':>8s}{extra}")
    for k, v in times.items():
        q = statistics.quantiles(v, n=10) if len(v) > 1 else v
        extra = f" {med_m[k]:10.3f}" if settle else ""
        print(f"{k:12s} {med[k]:10.2f} {q[0]:8.2f} {q[-1]:8.2f} {med_cpu[k]:8.3f}{extra}")
    for a, b in ratios:
        extra = f", machine {ratio(med_m[a], med_m[b])}" if settle else ""
        print(f"ratio {a}/{b} = {ratio(med[a], med[b])} (cpu {ratio(med_cpu[a], med_cpu[b])}{extra})")
    for a, b in diffs:
        print(f"{a} - {b} = {med[a] - med[b]:+.2f} ms")


if __name__ == "__main__":
    main()
