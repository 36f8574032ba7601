"""Sandbox.kernel() on real boxes (spec 12), beyond the shared table
(test_shared_cases.py, which the Node package runs too and which holds
state across cells, files, rich results, streaming, the output cap and
the faults that tear a kernel down): external stops, close, threads,
speed, the registry image, and nothing left behind.

The host image (`image="host"`) needs no registry: its python3 is the
host's. Every test runs as root and, under `make check`, again as the
unprivileged test user.
"""

import json
import os
import statistics
import subprocess
import sys
import threading
import time

import pytest

import kern_sandbox as kern
from conftest import kern_ps


@pytest.fixture
def sbx(kern_bin, tmp_path):
    with kern.Sandbox(image="host", memory_mb=256, timeout_s=30) as s:
        yield s
    assert not [n for n in kern_ps(kern_bin) if n.startswith("pysbx-")]


def dead(k):
    with pytest.raises(kern.SandboxError, match="kernel is dead"):
        k.run_code("1")
    assert not k.alive


def test_external_stop_is_killed(sbx, kern_bin):
    with sbx.kernel() as k:
        k.run_code("1")
        names = [n for n in kern_ps(kern_bin) if n.startswith("pysbx-")]
        assert len(names) == 1
        stopper = threading.Timer(0.5, lambda: subprocess.run([kern_bin, "stop", names[0]],
                                                              capture_output=True))
        stopper.start()
        r = k.run_code("import time; time.sleep(20)")
        stopper.join()
        assert r.fault is not None and r.fault.type == "killed", r
        dead(k)


def test_close_and_sandbox_exit_leave_nothing(kern_bin):
    with kern.Sandbox(image="host") as s:
        k1 = s.kernel()
        k2 = s.kernel()
        assert len([n for n in kern_ps(kern_bin) if n.startswith("pysbx-")]) == 2
        k1.run_code("x = 1")
        k1.close()
        k1.close()
        with pytest.raises(kern.SandboxError, match="closed"):
            k1.run_code("x")
        assert k2.run_code("2").results[0].text == "2"
    # The Sandbox closed k2 on exit.
    assert not k2.alive
    assert not [n for n in kern_ps(kern_bin) if n.startswith("pysbx-")]


def test_a_kernel_that_cannot_start_raises(kern_bin):
    # Nothing listens on port 1: kern's pull fails before any box exists.
    with kern.Sandbox(image="127.0.0.1:1/nothing/here:1") as s:
        with pytest.raises(kern.SandboxError, match="kernel.. could not start"):
            s.kernel()
    assert not [n for n in kern_ps(kern_bin) if n.startswith("pysbx-")]


def test_warm_cell_is_far_faster_than_a_cold_run(sbx):
    # The spec's floor is 10x (bench/python-kernel measures the 30x target);
    # a warm cell is a few hundred microseconds and a cold box tens of
    # milliseconds, so 10x holds with a wide margin even on a loaded host.
    with sbx.kernel() as k:
        warm = []
        for _ in range(50):
            t = time.perf_counter()
            k.run_code("pass")
            warm.append(time.perf_counter() - t)
    cold = []
    for _ in range(5):
        t = time.perf_counter()
        sbx.run_code("pass")
        cold.append(time.perf_counter() - t)
    assert statistics.median(cold) >= 10 * statistics.median(warm), (warm, cold)


def test_kernel_runs_on_the_registry_image(registry, kern_bin):
    with kern.Sandbox(image=registry) as s, s.kernel() as k:
        k.run_code("import sys; v = sys.version_info[:2]")
        r = k.run_code("v >= (3, 8)")
        assert r.results[0].text == "True", r
    assert os.environ.get("KERN_BIN") == kern_bin


def test_on_start_stop_kills_the_kernel(sbx):
    stops = []
    with sbx.kernel() as k:
        timer = threading.Timer(0.5, lambda: stops[0]())
        timer.start()
        t = time.monotonic()
        r = k.run_code("import time; time.sleep(20)", on_start=stops.append)
        timer.join()
        assert time.monotonic() - t < 10
        assert r.fault is not None and r.fault.type == "killed"
        dead(k)


def test_the_kernel_session_example(kern_bin):
    from conftest import PACKAGE_ROOT, TOP
    out = subprocess.run([sys.executable, str(TOP / "examples" / "kernel_session.py")],
                         capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, PYTHONPATH=str(PACKAGE_ROOT)))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "summary: {'n': 11, 'max': 9, 'mean': 4}"
    assert lines[1] == "files: ['readings.txt']"
    assert lines[2] == "host reads: ['3', '1', '4', '1', '5', '9', '2', '6', '5', '3', '5']"
    assert lines[3].startswith("timing: warm cell ")
    assert lines[4].startswith("runaway cell: timeout - exceeded the 1s time limit")
    assert lines[5] == "next call: kernel is dead (timeout)"
    assert lines[6] == "workspace kept: ['readings.txt']"


def test_a_kernel_that_stopped_reading_cannot_hang_the_host(sbx):
    with sbx.kernel() as k:
        # The driver stops itself a moment after this cell: it reads nothing more.
        k.run_code("import os, signal, threading\n"
                   "threading.Timer(0.2, lambda: os.kill(os.getpid(), signal.SIGSTOP)).start()")
        time.sleep(0.5)
        t = time.monotonic()
        r = k.run_code("x = '" + "y" * (1 << 20) + "'", timeout_s=1)
        assert time.monotonic() - t < 15
        assert r.fault is not None and r.fault.type == "timeout", r
        dead(k)


def test_close_from_another_thread_stops_a_running_cell(sbx):
    k = sbx.kernel()
    results = []
    runner = threading.Thread(target=lambda: results.append(k.run_code("import time; time.sleep(30)")))
    runner.start()
    time.sleep(0.5)
    t = time.monotonic()
    k.close()
    runner.join(15)
    assert time.monotonic() - t < 15 and not runner.is_alive()
    assert results[0].fault is not None and results[0].fault.type == "killed"
    with pytest.raises(kern.SandboxError, match="closed"):
        k.run_code("1")


def test_cell_output_never_reaches_the_frame_channel(sbx, monkeypatch):
    """IO-4: raw os.write(1) and subprocess output in a cell are captured in the reply frame, no stray bytes on stdout."""
    from kern_sandbox import _frames
    with sbx.kernel() as k:
        fd = k._box.reader.fd
        wire = bytearray()
        real_read = os.read

        def spy(f, n):
            data = real_read(f, n)
            if f == fd:
                wire.extend(data)
            return data

        # Every byte the host reads from the box's stdout, from now on.
        monkeypatch.setattr(_frames.os, "read", spy)
        r = k.run_code(
            "import os, subprocess, sys\n"
            "print('p1')\n"
            "os.write(1, b'raw\\n')\n"
            "subprocess.run(['echo', 'child'])\n"
            "os.system('echo system')\n"
            "open('/dev/stdout', 'w').write('devout\\n')\n"
            "sys.__stdout__.write('dunder\\n')\n"
            "os.write(2, b'rawerr\\n')\n"
            "subprocess.Popen(['sh', '-c', 'sleep 0.3; echo late; : > late-done'])\n")
        assert r.success, r
        assert r.stdout == "p1\nraw\nchild\nsystem\ndevout\ndunder\n", r.stdout
        assert r.stderr == "rawerr\n"
        # A process the cell left behind writes between cells.
        deadline = time.monotonic() + 10
        while not os.path.exists(os.path.join(sbx.workspace, "late-done")):
            assert time.monotonic() < deadline, "the background writer never ran"
            time.sleep(0.05)
        r2 = k.run_code("print('next')")
        assert r2.success and r2.stdout.endswith("next\n"), r2
        monkeypatch.setattr(_frames.os, "read", real_read)
        # The wire is frames end to end: length, newline, a JSON body.
        frames, rest = [], bytes(wire)
        while rest:
            head, nl, rest = rest.partition(b"\n")
            assert nl and head.isdigit(), "stray bytes on the box's stdout: %r" % (head + nl + rest)[:200]
            body, rest = rest[:int(head)], rest[int(head):]
            frames.append(json.loads(body))
        replies = [f for f in frames if "rc" in f]
        assert len(replies) == 2 and replies[0]["stdout"] == r.stdout
        # The late output is in a frame too (the next cell's), not loose.
        assert any("late" in f.get("o", "") + f.get("stdout", "") for f in frames)
