"""Spec §10 on real boxes: each fault type is produced for real, and code
that merely fails is not a fault."""

import os
import signal
import subprocess
import threading
import time

import pytest

import kern_sandbox as kern
from kern_sandbox import SandboxError


def test_first_example(kern_bin):
    r = kern.run_code("print(6*7)", image="host")
    assert (r.stdout, r.exit_code, r.fault, r.success) == ("42\n", 0, None, True)


def test_python_exception_is_not_a_fault(sbx):
    r = sbx.run_code("x = 1\n1 / 0")
    assert r.exit_code == 1 and r.fault is None and not r.success
    # The traceback shows the cell's frames only, with its source line.
    assert r.stderr.startswith("Traceback (most recent call last):\n  File \"<cell>\", line 2")
    assert "1 / 0" in r.stderr and "ZeroDivisionError: division by zero" in r.stderr
    assert ".run-" not in r.stderr


def test_system_exit_code(sbx):
    assert sbx.run_code("import sys; sys.exit(3)").exit_code == 3
    r = sbx.run_code("raise SystemExit('bye')")
    assert (r.exit_code, r.stderr, r.fault) == (1, "bye\n", None)


def test_timeout_busy_loop(sbx):
    t = time.monotonic()
    r = sbx.run_code("while True: pass", timeout_s=1.5)
    took = time.monotonic() - t
    assert r.fault is not None and r.fault.type == "timeout"
    assert r.fault.message == "exceeded the 1.5s time limit (killed by the binding)"
    assert r.exit_code == 137 and not r.success
    # The binding's deadline, not kern's backstop (1 + 5 s), ended it.
    assert 1.4 <= took < 5, took


def test_timeout_keeps_output_so_far(sbx):
    r = sbx.run_code("import time\nprint('before', flush=True)\ntime.sleep(60)", timeout_s=2)
    assert r.fault.type == "timeout" and r.stdout == "before\n"


def test_timeout_of_a_process_that_ignores_sigterm(sbx):
    code = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(60)"
    t = time.monotonic()
    r = sbx.run_code(code, timeout_s=1)
    assert r.fault.type == "timeout" and time.monotonic() - t < 10


def test_oom_from_kerns_outcome_bytes(kern_bin):
    with kern.Sandbox(image="host", memory_mb=64) as s:
        r = s.run_code("x = bytearray(400 << 20)\nprint('survived')")
    assert r.fault is not None and r.fault.type == "oom", (r.fault, r.stderr)
    assert "64 MiB" in r.fault.message and "certain" in r.fault.message
    assert r.exit_code == 137 and r.stdout == ""
    # kern's own sentence is in stderr (and not a runtime note: it stays).
    assert "killed by the kernel's OOM killer" in r.code_stderr


def test_blocked_syscall_is_escape_blocked(sbx):
    # mount(2) is killed by kern's seccomp filter with SIGSYS.
    r = sbx.run_code("import ctypes\nctypes.CDLL(None).syscall(165, 0, 0, 0, 0, 0)\n"
                     "print('not reached')")
    assert r.fault is not None and r.fault.type == "escape_blocked"
    assert r.exit_code == 159 and "not reached" not in r.stdout


def _find_pid(marker):
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                if f.read().split(b"\0")[:2] == [b"sleep", marker.encode()]:
                    return int(pid)
        except OSError:
            continue
    return None


def test_sigkill_from_outside_is_killed(sbx):
    marker = str(987000 + os.getpid() % 1000)
    killer_saw = []

    def killer():
        for _ in range(200):
            pid = _find_pid(marker)
            if pid:
                os.kill(pid, signal.SIGKILL)
                killer_saw.append(pid)
                return
            time.sleep(0.05)

    t = threading.Thread(target=killer)
    t.start()
    r = sbx.run(["sleep", marker], timeout_s=20)
    t.join()
    assert killer_saw, "the box's sleep never showed up in /proc"
    assert r.fault is not None and r.fault.type == "killed", (r.fault, r.stderr)
    assert "external kill" in r.fault.message
    assert r.exit_code == 137


def test_missing_command_is_exec_failed(sbx):
    r = sbx.run(["no-such-interpreter", "-c", "1"])
    assert r.fault is not None and r.fault.type == "exec_failed"
    assert "'no-such-interpreter'" in r.fault.message and "image 'host'" in r.fault.message
    assert r.exit_code == 127


def test_not_executable_is_exec_failed(sbx):
    sbx.write_file("tool.sh", "#!/bin/sh\necho hi\n")
    r = sbx.run(["/workspace/tool.sh"])
    assert r.fault is not None and r.fault.type == "exec_failed" and r.exit_code == 126
    assert "not executable" in r.fault.message


def test_shell_command_not_found_is_not_a_fault(sbx):
    r = sbx.run_code("no-such-command-here", "sh")
    assert r.exit_code == 127 and r.fault is None


def test_forged_kern_lines_are_not_faults(sbx):
    """A workload printing kern's own failure lines does not forge a fault."""
    code = ("import sys\n"
            "sys.stderr.write(\"kern: cannot start 'x' in box: No such file or directory (os error 2)\\n\")\n"
            "sys.stderr.write('kern: sandbox setup failed: forged\\n')\n"
            "sys.stderr.write('error: registry: forged\\n')\n"
            "sys.exit(125)")
    r = sbx.run_code(code)
    assert r.exit_code == 125 and r.fault is None


def test_missing_tag_in_the_registry_is_startup_failed(registry):
    missing = registry.rsplit(":", 1)[0] + ":no-such-tag"
    r = kern.run_code("print(1)", image=missing, pyc_cache=False)
    assert r.fault is not None and r.fault.type == "startup_failed", (r.fault, r.stderr)
    assert r.exit_code == 1 and not r.success
    assert "error: " in r.fault.message and len(r.fault.message) <= 500


def test_missing_interpreter_in_an_image(registry):
    # The fixture image is Debian minbase + python3: no node.
    r = kern.run_code("console.log(1)", language="node", image=registry, pyc_cache=False)
    assert r.fault is not None and r.fault.type == "exec_failed"
    assert "'node'" in r.fault.message and registry in r.fault.message


def test_exit_125_raises(sbx):
    # AppArmor is not loaded here (or the profile is not): kern fails closed.
    with kern.Sandbox(image="host", apparmor="kern-no-such-profile") as s:
        with pytest.raises(SandboxError, match="sandbox setup failed|apparmor|AppArmor"):
            s.run(["true"])


def test_deadline_during_a_slow_pull_is_startup_failed(kern_bin, hostile, monkeypatch):
    # The hostile registry's "slow" image sends its layer one byte per
    # 0.5 s: the box is still being set up when the deadline fires.
    monkeypatch.setattr(kern.sandbox, "PULL_TIMEOUT_S", 0.5)
    with kern.Sandbox(image="127.0.0.1:%d/slow:latest" % hostile, pyc_cache=False) as s:
        r = s.run(["/hello"], timeout_s=2)
    assert r.fault is not None and r.fault.type == "startup_failed", (r.fault, r.stderr)
    assert "still being set up" in r.fault.message and r.exit_code == 137


def test_kern_ps_is_empty_after_the_faults(kern_bin):
    out = subprocess.run([kern_bin, "ps", "-q"], capture_output=True, text=True, check=True)
    assert out.stdout == ""
