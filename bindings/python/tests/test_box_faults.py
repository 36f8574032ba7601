"""python-binding.md §10 (faults) on real boxes, beyond the shared table
(test_shared_cases.py, which the Node package runs too and which holds
the timeout, oom, escape_blocked, exec_failed and exit-125 cases): a
kill from outside, the registry's startup failures, and nothing left
behind."""

import os
import signal
import subprocess
import threading
import time

import kern_sandbox as kern


def test_first_example(kern_bin):
    r = kern.run_code("print(6*7)", image="host")
    assert (r.stdout, r.exit_code, r.fault, r.success) == ("42\n", 0, None, True)


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


def test_deadline_during_a_slow_pull_is_startup_failed(kern_bin, hostile, monkeypatch):
    """CL-12: a short timeout_s during a first pull is startup_failed, not timeout."""
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
