"""prewarm=N on real boxes (spec 13): served, refilled, one call per box,
key and budget mismatches going cold, and nothing left behind. Pooled
results, faults through a pooled box and calls that go cold are cases of
the shared table (test_shared_cases.py), which the Node package runs too."""

import glob
import os
import signal
import subprocess
import sys
import time

import pytest

import kern_sandbox as kern
from kern_sandbox import pool as pool_mod
from conftest import kern_ps


def wait_ready(sbx, n, timeout=60):
    deadline = time.monotonic() + timeout
    while sbx._pool.ready_count() < n:
        assert time.monotonic() < deadline, "the pool did not fill to %d" % n
        time.sleep(0.05)


def skip_if_uncapped(r):
    if any("NOT enforced" in n for n in r.runtime_notes):
        pytest.skip("this user has no cgroup to cap memory with (make check delegates one): "
                    + r.runtime_notes[0][:200])


def box_names(kern_bin):
    return [n for n in kern_ps(kern_bin) if n.startswith("pysbx-")]


def served_by_pool(sbx, code, **kw):
    before = sbx._pool.served
    r = sbx.run_code(code, **kw)
    return r, sbx._pool.served == before + 1


def test_a_prewarmed_box_serves_one_call_and_the_pool_refills(kern_bin):
    with kern.Sandbox(image="host", prewarm=2) as sbx:
        wait_ready(sbx, 2)
        assert len(box_names(kern_bin)) == 2
        r, pooled = served_by_pool(sbx, "import socket\nx = 1\nprint('hi')\nsocket.gethostname()")
        assert pooled and r.success and r.stdout == "hi\n" and r.fault is None
        first = r.results[0].text.strip("'")
        # The next call gets another box: nothing of the first is there.
        r, pooled = served_by_pool(sbx, "import socket\nprint(socket.gethostname())\nx")
        assert pooled and r.exit_code == 1 and "NameError" in r.stderr
        assert r.stdout.strip() != first
        # The used boxes are gone from kern's registry (SIGKILL only: kern
        # dropped them by itself), and the pool is full again.
        deadline = time.monotonic() + 10
        while first in box_names(kern_bin):
            assert time.monotonic() < deadline, "kern kept the record of a killed pool box"
            time.sleep(0.1)
        wait_ready(sbx, 2)


def test_nothing_of_a_pooled_call_runs_on_after_its_reply(kern_bin, tmp_path, monkeypatch):
    # The worker would kill the used box once calls pause: keep it from
    # doing so here, so only the box's own freeze can stop the ticks.
    monkeypatch.setattr(pool_mod, "REFILL_QUIET_S", 60)
    monkeypatch.setattr(pool_mod, "REFILL_LATE_S", 60)
    with kern.Sandbox(image="host", prewarm=1, workspace=str(tmp_path)) as sbx:
        wait_ready(sbx, 1)
        code = ("import subprocess, threading, time\n"
                "subprocess.Popen(['sh', '-c', 'while :; do echo p >> ticks; sleep 0.02; done'])\n"
                "def loop():\n"
                "    while True:\n"
                "        open('ticks', 'a').write('t\\n'); time.sleep(0.02)\n"
                "threading.Thread(target=loop, daemon=True).start()\n"
                "time.sleep(0.2)\n")
        r, pooled = served_by_pool(sbx, code)
        assert pooled and r.success, r
        time.sleep(0.3)
        ticks = (tmp_path / "ticks").read_text()
        assert "p" in ticks and "t" in ticks
        # Neither the process nor the thread the cell started runs on.
        time.sleep(1)
        assert (tmp_path / "ticks").read_text() == ticks


def test_a_changed_kern_environment_is_a_key_mismatch(kern_bin, monkeypatch):
    with kern.Sandbox(image="host", prewarm=1) as sbx:
        wait_ready(sbx, 1)
        old = box_names(kern_bin)
        monkeypatch.setenv("KERN_SECCOMP", "denylist")
        r, pooled = served_by_pool(sbx, "print(1)")
        assert r.stdout == "1\n" and not pooled
        # The stale box was dropped; the refill is built with the new key.
        wait_ready(sbx, 1)
        assert not set(old) & set(box_names(kern_bin))
        r, pooled = served_by_pool(sbx, "print(2)")
        assert r.stdout == "2\n" and pooled


def test_boxes_past_their_age_are_not_used(kern_bin, monkeypatch):
    monkeypatch.setattr(pool_mod, "MAX_AGE_S", 2)
    with kern.Sandbox(image="host", prewarm=1) as sbx:
        wait_ready(sbx, 1)
        first = box_names(kern_bin)
        time.sleep(2.5)
        # Expired: replaced by the worker, or refused at take.
        wait_ready(sbx, 1)
        assert not set(first) & set(box_names(kern_bin))


def test_pool_leaves_nothing_behind(kern_bin):
    runtime = os.path.join(os.environ["XDG_RUNTIME_DIR"], "kern")
    names = []
    with kern.Sandbox(image="host", prewarm=3) as sbx:
        wait_ready(sbx, 3)
        for _ in range(5):
            r = sbx.run_code("import socket; print(socket.gethostname())")
            assert r.success
            names.append(r.stdout.strip())
        # Five calls, five boxes.
        assert len(set(names)) == 5
        names += box_names(kern_bin)
    names = sorted(set(names))
    assert not box_names(kern_bin)
    # No record, no scratch and no cgroup of any of these boxes.
    left = []
    for name in names:
        left += glob.glob(os.path.join(runtime, "instances", name + "*"))
        left += glob.glob(os.path.join(runtime, "scratch", name + "-*"))
        left += glob.glob("/sys/fs/cgroup/*/kern/**/kern-box-%s-*" % name, recursive=True)
        left += glob.glob("/sys/fs/cgroup/unified/**/kern-box-%s-*" % name, recursive=True)
    assert left == []
    mounts = open("/proc/self/mountinfo").read()
    assert not [n for n in names if n in mounts]
    for name in names:
        assert not subprocess.run(["pgrep", "-f", "box %s " % name], capture_output=True).stdout


def test_the_pool_starts_nothing_without_prewarm(kern_bin):
    with kern.Sandbox(image="host") as sbx:
        assert sbx._pool is None
        assert sbx.run_code("print(1)").stdout == "1\n"
        assert not box_names(kern_bin)


@pytest.mark.parametrize("bad", [-1, 1.5, True, "2"])
def test_prewarm_is_checked(bad):
    with pytest.raises(kern.SandboxError):
        kern.Sandbox(image="host", prewarm=bad)


def test_on_start_stop_ends_a_pooled_call(kern_bin):
    import threading
    stops = []
    with kern.Sandbox(image="host", prewarm=1) as sbx:
        wait_ready(sbx, 1)
        timer = threading.Timer(0.5, lambda: stops[0]())
        timer.start()
        t = time.monotonic()
        r, pooled = served_by_pool(sbx, "import time; time.sleep(20)", on_start=stops.append)
        timer.join()
        assert pooled and time.monotonic() - t < 10
        assert r.fault is not None and r.fault.type == "killed"


def test_the_prewarm_burst_example(kern_bin):
    from conftest import PACKAGE_ROOT, TOP
    out = subprocess.run([sys.executable, str(TOP / "examples" / "prewarm_burst.py")],
                         capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, PYTHONPATH=str(PACKAGE_ROOT)))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "8 calls, all ok: True, each in its own box: True"
    assert lines[1].startswith("timing: burst p50 ")


def test_a_changed_profile_is_a_key_mismatch(kern_bin, tmp_path):
    # kern resolves vcpu: tokens from kern.toml, which may change under a
    # session: the probe's --show-config is part of the key.
    conf = tmp_path / "kern.toml"
    conf.write_text('[[vcpu]]\nname = "small"\npids = 100\n')
    env = dict(os.environ)
    os.environ["KERN_CONFIG"] = str(conf)
    try:
        with kern.Sandbox(image="host", prewarm=1, memory_mb=None, pids=None,
                          profiles=["vcpu:small"]) as sbx:
            wait_ready(sbx, 1)
            r, pooled = served_by_pool(sbx, "print(1)")
            assert r.stdout == "1\n" and pooled
            wait_ready(sbx, 1)
            conf.write_text('[[vcpu]]\nname = "small"\npids = 120\n')
            r, pooled = served_by_pool(sbx, "print(2)")
            assert r.stdout == "2\n" and not pooled
            wait_ready(sbx, 1)
            r, pooled = served_by_pool(sbx, "print(3)")
            assert r.stdout == "3\n" and pooled
    finally:
        os.environ.clear()
        os.environ.update(env)


def test_a_pool_on_the_registry_image(registry, kern_bin):
    with kern.Sandbox(image=registry, prewarm=1) as sbx:
        wait_ready(sbx, 1)
        r, pooled = served_by_pool(sbx, "import sys\nprint(sys.executable)\n6 * 7")
        assert pooled and r.success, r
        assert r.results[0].text == "42"


def test_pool_boxes_killed_by_killpg_are_dropped(kern_bin):
    """CL-11: pool boxes killed by killpg are gone from kern ps -q within 10 s, and never serve a call."""
    with kern.Sandbox(image="host", prewarm=2) as sbx:
        wait_ready(sbx, 2)
        names = box_names(kern_bin)
        assert len(names) == 2
        # Each pooled box's kern leads a process group of its own: kill
        # the groups from outside, as a supervisor cleaning up would.
        for b in list(sbx._pool._ready):
            os.killpg(os.getpgid(b.box.box.pid), signal.SIGKILL)
        deadline = time.monotonic() + 10
        while set(names) & set(kern_ps(kern_bin)):
            assert time.monotonic() < deadline, "killed pool boxes still listed after 10 s"
            time.sleep(0.05)
        # The dead boxes are dropped: the call runs in a cold box (its code
        # ran, no fault), not in a dead one.
        r, pooled = served_by_pool(sbx, "print(6 * 7)")
        assert (r.stdout, r.fault, pooled) == ("42\n", None, False), r
        wait_ready(sbx, 2)
        assert not set(names) & set(box_names(kern_bin))
        r, pooled = served_by_pool(sbx, "print(7)")
        assert (r.stdout, pooled) == ("7\n", True), r
    assert not box_names(kern_bin)
