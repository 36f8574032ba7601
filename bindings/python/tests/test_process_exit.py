"""A short-lived Python process that used the package leaves nothing
behind: the bytecode-cache build its session started (a ``kern-pyc-*``
box, python-binding.md §6, setup) is stopped and reaped when the session
closes, and also at interpreter exit when the session was never closed.
Checked from outside after the process is gone: ``kern ps``, processes,
kern's runtime records and scratch, cgroups, mounts, the half-built
cache directory, the session's private directory and temporary
workspace."""

import os
import subprocess
import sys
import textwrap

import pytest

from conftest import PACKAGE_ROOT, kern_ps
from test_concurrency import _cgroup_dirs_naming

# Opens a session on the image (a fresh cache: the session starts a build),
# runs a call, waits until the build box runs, prints its name and ends
# either through `with` (close) or by just exiting with the session open.
CHILD = textwrap.dedent("""\
    import subprocess, sys, time
    sys.path.insert(0, sys.argv[4])
    import kern_sandbox as kern

    image, mode, kern_bin = sys.argv[1:4]

    def build_box():
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            out = subprocess.run([kern_bin, "ps", "-q"], capture_output=True, text=True).stdout
            names = [n for n in out.split() if n.startswith("kern-pyc-")]
            if names:
                return names[0]
            time.sleep(0.2)
        return None

    s = kern.Sandbox(image=image, timeout_s=60)
    s.open()
    r = s.run_code("print(6 * 7)")
    print("result", r.stdout.strip(), flush=True)
    print("building", build_box(), flush=True)
    if mode == "close":
        s.close()
    # mode "exit": the session is still open when the interpreter exits.
""")


@pytest.mark.parametrize("mode", ["close", "exit"])
def test_a_short_process_leaves_no_build_box(registry, kern_bin, tmp_path, mode):
    cache = tmp_path / "cache"
    tmp = tmp_path / "tmp"
    cache.mkdir()
    tmp.mkdir()
    env = dict(os.environ, XDG_CACHE_HOME=str(cache), TMPDIR=str(tmp))
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    done = subprocess.run([sys.executable, str(script), registry, mode, kern_bin,
                           str(PACKAGE_ROOT)], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.split("\n")
    assert "result 42" in lines, done.stdout + done.stderr[-1000:]
    name = [line.split()[1] for line in lines if line.startswith("building ")][0]
    assert name.startswith("kern-pyc-"), "the build box never ran: " + done.stdout
    # A stopped build is quiet: it is not a failed one.
    assert "could not be built" not in done.stderr, done.stderr

    assert [n for n in kern_ps(kern_bin) if n.startswith("kern-pyc-")] == []
    procs = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                if name.encode() in f.read():
                    procs.append(pid)
        except OSError:
            pass
    assert procs == [], "processes of %s still run" % name
    runtime = os.path.join(os.environ["XDG_RUNTIME_DIR"], "kern")
    for sub in ("instances", "scratch"):
        path = os.path.join(runtime, sub)
        left = [n for n in (os.listdir(path) if os.path.isdir(path) else [])
                if n.startswith(name)]
        assert left == [], "%s left in %s" % (left, path)
    assert _cgroup_dirs_naming([name]) == []
    with open("/proc/self/mountinfo") as f:
        assert name not in f.read()
    pyc_root = cache / "kern-sandbox" / "pyc"
    assert (sorted(os.listdir(pyc_root)) if pyc_root.is_dir() else []) == []
    # The session's private directory and temporary workspace are gone.
    assert os.listdir(tmp) == []
