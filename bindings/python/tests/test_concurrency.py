"""100 concurrent run_code calls from threads on one Sandbox: all succeed,
and nothing is left behind (no kern ps entry, registry record, scratch
directory, cgroup, mount, env-file or workspace scratch file)."""

import os
import subprocess
import threading
from concurrent.futures import ThreadPoolExecutor

import kern_sandbox as kern
import kern_sandbox.sandbox as sandbox_module


def _cgroup_dirs_naming(names):
    found = []
    for top, dirs, _ in os.walk("/sys/fs/cgroup"):
        for d in dirs:
            if any(("-%s-" % n) in d or d.endswith(n) for n in names):
                found.append(os.path.join(top, d))
    return found


def test_100_concurrent_run_code(kern_bin, monkeypatch):
    names = []
    lock = threading.Lock()
    real_box_name = sandbox_module.box_name

    def recording_box_name(*args, **kwargs):
        name = real_box_name(*args, **kwargs)
        with lock:
            names.append(name)
        return name

    monkeypatch.setattr(sandbox_module, "box_name", recording_box_name)
    with kern.Sandbox(image="host", timeout_s=120) as s:
        private = s._private
        with ThreadPoolExecutor(100) as pool:
            results = list(pool.map(lambda i: s.run_code("print(%d * 2)" % i), range(100)))
        leftovers = [n for n in os.listdir(s.workspace)]
    ok = [r for r in results if r.success]
    assert len(ok) == 100, [(r.exit_code, r.fault, r.stderr[-200:]) for r in results
                            if not r.success][:3]
    assert [r.stdout for r in results] == ["%d\n" % (i * 2) for i in range(100)]
    assert len(set(names)) == 100
    assert leftovers == []
    assert not os.path.exists(private)

    out = subprocess.run([kern_bin, "ps", "-q"], capture_output=True, text=True, check=True)
    assert out.stdout == ""
    runtime = os.path.join(os.environ["XDG_RUNTIME_DIR"], "kern")
    for sub in ("instances", "scratch"):
        path = os.path.join(runtime, sub)
        left = [n for n in (os.listdir(path) if os.path.isdir(path) else [])
                if any(n.startswith(name) for name in names)]
        assert left == [], "%s left in %s" % (left, path)
    assert _cgroup_dirs_naming(names) == []
    with open("/proc/self/mountinfo") as f:
        mounts = f.read()
    assert not [n for n in names if n in mounts]
