"""Sandbox.kernel() on real boxes (spec 12): state across cells, faults that
tear the kernel down, the dead kernel, and nothing left behind.

The host image (`image="host"`) needs no registry: its python3 is the
host's. Every test runs as root and, under `make check`, again as the
unprivileged test user.
"""

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


def test_state_persists_across_cells(sbx):
    with sbx.kernel() as k:
        r = k.run_code("x = 40\nprint('set')")
        assert (r.stdout, r.exit_code, r.fault, r.success) == ("set\n", 0, None, True)
        assert k.run_code("x + 2").results[0].text == "42"
        k.run_code("import json\ndef double(n):\n    return 2 * n\n")
        assert k.run_code("double(x)").results[0].text == "80"
        # A cell's exception is the cell's: the kernel goes on.
        r = k.run_code("undefined_name")
        assert r.exit_code == 1 and r.fault is None and "NameError" in r.stderr
        assert r.code_stderr == r.stderr and r.runtime_notes == []
        assert k.run_code("json.dumps([x])").results[0].text == "'[40]'"
        assert k.alive


def test_one_process_one_box_tmp_accumulates_workspace_is_shared(sbx):
    with sbx.kernel() as k:
        pid = k.run_code("import os; os.getpid()").results[0].text
        k.run_code("open('/tmp/scratch', 'w').write('kept')")
        k.run_code("open('out.txt', 'w').write('from the kernel')")
        assert k.run_code("os.getpid()").results[0].text == pid
        assert k.run_code("open('/tmp/scratch').read()").results[0].text == "'kept'"
        assert k.run_code("os.getcwd()").results[0].text == "'/workspace'"
    assert sbx.read_file("out.txt") == b"from the kernel"
    # A one-shot call is a fresh box: the kernel's /tmp is not there.
    r = sbx.run_code("import os; print(os.path.exists('/tmp/scratch'))")
    assert r.stdout == "False\n"


def test_files_created_and_modified_by_a_cell(sbx):
    sbx.write_file("a.txt", "old")
    with sbx.kernel() as k:
        r = k.run_code("open('a.txt', 'w').write('newer'); open('b.txt', 'w').write('b')")
        assert sorted((f.path, f.change) for f in r.files) == [("a.txt", "modified"),
                                                               ("b.txt", "created")]
        assert k.run_code("1").files == []
    # The driver's script never shows as the user's file.
    assert [f.path for f in sbx.list_files()] == ["a.txt", "b.txt"]


def test_rich_results_and_output_kinds(sbx):
    with sbx.kernel() as k:
        r = k.run_code("import subprocess, os\n"
                       "class H:\n    def _repr_html_(self): return '<i>h</i>'\n"
                       "display(H())\n"
                       "os.write(1, b'raw\\n')\n"
                       "subprocess.run(['echo', 'child'])\n"
                       "{'k': 1}")
        assert r.stdout == "raw\nchild\n"
        assert r.results[0].html == "<i>h</i>" and r.results[1].text == "{'k': 1}"


def test_streaming_callbacks(sbx):
    seen = []
    with sbx.kernel() as k:
        r = k.run_code("import sys, time\nprint('one', flush=True)\ntime.sleep(0.2)\n"
                       "print('two', file=sys.stderr)", on_stdout=lambda t: seen.append(("o", t)),
                       on_stderr=lambda t: seen.append(("e", t)))
    assert r.stdout == "one\n" and r.stderr == "two\n"
    assert seen == [("o", "one\n"), ("e", "two\n")]


def test_output_cap(kern_bin):
    with kern.Sandbox(image="host", max_output_bytes=1000) as s, s.kernel() as k:
        r = k.run_code("print('x' * 5000)")
        assert r.truncated and r.stdout == "x" * 1000
        r = k.run_code("print('y')")
        assert not r.truncated and r.stdout == "y\n"


def dead(k):
    with pytest.raises(kern.SandboxError, match="kernel is dead"):
        k.run_code("1")
    assert not k.alive


def test_timeout_tears_the_kernel_down(sbx, kern_bin):
    with sbx.kernel() as k:
        k.run_code("x = 1")
        t = time.monotonic()
        r = k.run_code("print('before', flush=True)\nwhile True: pass", timeout_s=1)
        assert time.monotonic() - t < 15
        assert r.fault.type == "timeout" and "1s time limit" in r.fault.message
        assert r.exit_code == 137 and not r.success
        assert r.stdout == "before\n"
        dead(k)
    assert not [n for n in kern_ps(kern_bin) if n.startswith("pysbx-")]


def test_oom_is_reported_from_kerns_counters(kern_bin):
    with kern.Sandbox(image="host", memory_mb=64) as s, s.kernel() as k:
        k.run_code("keep = 1")
        if "NOT enforced" in k._box.kern_stderr():
            pytest.skip("this user has no cgroup to cap memory with (make check delegates one): "
                        + k._box.kern_stderr()[:200])
        r = k.run_code("b = bytearray(400 << 20)")
        assert r.fault is not None and r.fault.type == "oom", r
        assert r.exit_code == 137 and "certain" in r.fault.message
        assert any("OOM killer" in line for line in r.stderr.splitlines())
        dead(k)


def test_blocked_syscall_is_escape_blocked(sbx):
    with sbx.kernel() as k:
        # ptrace (101 on x86_64, 117 on aarch64) is in kern's kill set.
        r = k.run_code("import ctypes, platform\n"
                       "nr = 101 if platform.machine() == 'x86_64' else 117\n"
                       "ctypes.CDLL(None).syscall(nr, 0, 0, 0, 0)")
        assert r.fault is not None and r.fault.type == "escape_blocked"
        assert r.exit_code == 159
        dead(k)


def test_crash_of_python3_is_no_fault_but_ends_the_kernel(sbx):
    with sbx.kernel() as k:
        r = k.run_code("import os; os.abort()")
        assert r.fault is None and r.exit_code == 134 and not r.success
        assert "crashed with SIGABRT" in r.stderr
        dead(k)


def test_exit_of_python3_is_killed(sbx):
    with sbx.kernel() as k:
        r = k.run_code("import os; os._exit(3)")
        assert r.fault.type == "killed" and "exited (status 3)" in r.fault.message
        assert r.exit_code == 3
        dead(k)


def test_sys_exit_in_a_cell_does_not_end_the_kernel(sbx):
    with sbx.kernel() as k:
        assert k.run_code("import sys; sys.exit(4)").exit_code == 4
        assert k.run_code("'alive'").results[0].text == "'alive'"


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
