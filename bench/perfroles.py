"""Parsers of `perf script` output for bench/box-roles: which process of a
box start a sample belongs to, what it was doing, and when each phase of
a start began and ended. Plain functions over text, so that
tests/bats/bench.bats can check them on a fixed recording."""
import collections
import re

SAMPLE_US = 50

HEAD = re.compile(r"\s*(\S+)\s+(\d+)(?:/\d+)?\s+\[\d+\]\s+([\d.]+):")


def category(frames):
    """What a sample was doing: the system call, a page fault, user code."""
    names = [f.split()[1].split("+")[0] if len(f.split()) > 1 else "?" for f in frames]
    if "do_syscall_64" in names:
        i = names.index("do_syscall_64")
        j = i - 1
        if j > 0 and names[j] == "x64_sys_call":
            j -= 1
        return "sys " + (names[j] if j >= 0 else "?")
    if "asm_exc_page_fault" in names:
        return "page fault"
    if frames and not frames[0].split()[0].startswith("ffffffff"):
        return "user"
    return "kernel " + (names[-1] if names else "?")


def roles(text, driver_pid, n, sample_us=SAMPLE_US):
    """ms per start (of N in all) by role and category, from perf script --show-task-events."""
    parent = {}
    by = collections.defaultdict(collections.Counter)
    blocks = text.split("\n\n")
    for blk in blocks:
        for line in blk.splitlines():
            m = re.search(r"PERF_RECORD_FORK\((\d+):\d+\):\((\d+):\d+\)", line)
            if m:
                parent[int(m.group(1))] = int(m.group(2))
    for blk in blocks:
        lines = blk.strip("\n").splitlines()
        if not lines or "PERF_RECORD" in lines[0]:
            continue
        m = HEAD.match(lines[0])
        if not m:
            continue
        comm, pid = m.group(1), int(m.group(2))
        depth, p = 0, pid
        while p in parent and p != driver_pid and depth < 8:
            p, depth = parent[p], depth + 1
        if p != driver_pid:
            # The kernel's threads (what a start leaves to them); not the idle task.
            if pid == 0 or not comm.startswith(("kworker", "ksoftirqd", "rcu")):
                continue
            role = "kernel threads"
        elif depth == 0:
            continue  # the driver itself
        else:
            role = {1: "1 command (kern's supervisor, the floor's main)", 2: "2 PID 1"}.get(depth, "3 workload")
        by[role][category(lines[1:])] += sample_us / 1000 / n
    return by


def driver_of(text):
    for line in text.splitlines():
        m = re.search(r"PERF_RECORD_COMM exec: (\S+):(\d+)/", line)
        if m and m.group(1).startswith("python"):
            return int(m.group(2))
    return -1


def phases(text, exe):
    """Each phase of every start (seconds), from sched tracepoints."""
    ev = []
    for line in text.splitlines():
        m = re.match(r"\s*(\S+)\s+(\d+)\s+([\d.]+): sched:(\w+): (.*)", line)
        if m:
            ev.append((int(m.group(2)), float(m.group(3)), m.group(4), m.group(5)))
    out = collections.defaultdict(list)
    for i, (pid, t, e, a) in enumerate(ev):
        if e != "sched_process_exec" or f"filename={exe}" not in a:
            continue
        d, pid1, wl = {}, None, None
        for pid2, t2, e2, a2 in ev[i + 1:i + 60]:
            child = re.search(r"child_pid=(\d+)", a2)
            if e2 == "sched_process_fork" and pid2 == pid and pid1 is None:
                d["clone"], pid1 = t2, int(child.group(1))
            elif e2 == "sched_process_fork" and pid2 == pid1 and wl is None:
                d["spawn"], wl = t2, int(child.group(1))
            elif e2 == "sched_process_exit" and pid2 == wl:
                d["workload end"] = t2
            elif e2 == "sched_process_exit" and pid2 == pid1:
                d["PID 1 end"] = t2
            elif e2 == "sched_process_exit" and pid2 == pid:
                d["end"] = t2
                break
        if len(d) == 5:
            out["exec to PID 1's clone"].append(d["clone"] - t)
            out["PID 1's setup, to the workload's spawn"].append(d["spawn"] - d["clone"])
            out["the workload"].append(d["workload end"] - d["spawn"])
            out["PID 1's exit"].append(d["PID 1 end"] - d["workload end"])
            out["after PID 1, to the command's end"].append(d["end"] - d["PID 1 end"])
            out["total"].append(d["end"] - t)
    return out
