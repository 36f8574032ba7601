"""Shared fixtures of the kern_sandbox tests.

The tests drive real boxes: the kern binary is $KERN_BIN when set (tests/run
sets it to the binary built from this checkout), else this checkout's
build/kern-static or build/kern, else kern on PATH. Every test session gets
private XDG directories, so `kern ps` and the image cache see only the boxes
and images of this run, whoever else uses the machine.
"""

import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import pytest

HERE = pathlib.Path(__file__).resolve().parent
PACKAGE_ROOT = HERE.parent
TOP = PACKAGE_ROOT.parent.parent
sys.path.insert(0, str(PACKAGE_ROOT))


def _kern_bin():
    if os.environ.get("KERN_BIN"):
        return os.environ["KERN_BIN"]
    for name in ("build/kern-static", "build/kern"):
        if (TOP / name).is_file() and os.access(TOP / name, os.X_OK):
            return str(TOP / name)
    return shutil.which("kern")


_PRIVATE = tempfile.mkdtemp(prefix="kern-pytest-")
os.chmod(_PRIVATE, 0o755)
for var, sub in (("XDG_RUNTIME_DIR", "run"), ("XDG_CACHE_HOME", "cache"),
                 ("XDG_CONFIG_HOME", "config"), ("XDG_DATA_HOME", "data")):
    os.makedirs(os.path.join(_PRIVATE, sub), mode=0o700)
    os.environ[var] = os.path.join(_PRIVATE, sub)
if _kern_bin():
    os.environ["KERN_BIN"] = _kern_bin()
os.environ.pop("KERN_QUIET", None)


def pytest_report_header(config):
    return ["kern: %s" % os.environ.get("KERN_BIN", "(none)"),
            "python: %s %s" % (sys.executable, sys.version.split()[0]),
            "uid: %d, private XDG dirs: %s" % (os.getuid(), _PRIVATE)]


def pytest_sessionfinish(session, exitstatus):
    kern = os.environ.get("KERN_BIN")
    if kern:
        subprocess.run([kern, "recover"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=False)
    subprocess.run(["rm", "-rf", "--one-file-system", _PRIVATE], check=False)


@pytest.fixture(scope="session")
def kern_bin():
    if not os.environ.get("KERN_BIN"):
        pytest.skip("no kern binary: build it (make) or install it")
    return os.environ["KERN_BIN"]


def kern_ps(kern):
    out = subprocess.run([kern, "ps", "-q"], capture_output=True, text=True, check=True)
    return out.stdout.split()


@pytest.fixture(scope="session")
def registry():
    """The loopback registry of the bats suites (tests/helpers/fixtures.bash)
    holding the Python fixture image (Debian minbase + python3) as
    127.0.0.1:PORT/kern-test/python:3. Yields the image reference."""
    reg_dir = tempfile.mkdtemp(prefix="kern-pytest-reg-")
    script = (
        'set -e; . "$1/tests/helpers/fixtures.bash"\n'
        'd=$(fixture_python) || { echo "no-python-fixture"; exit 0; }\n'
        'registry_start "$2" >&2\n'
        'registry_push "$d/python:latest" kern-test/python:3 v2s2\n'
        'echo "$REG_PORT $REG_PID"\n')
    out = subprocess.run(["bash", "-c", script, "fixtures", str(TOP), reg_dir],
                         capture_output=True, text=True, timeout=900)
    words = out.stdout.split()
    if out.returncode != 0 or len(words) != 2:
        shutil.rmtree(reg_dir, ignore_errors=True)
        why = "the python fixture image needs root to build once (debootstrap)" \
            if "no-python-fixture" in out.stdout else out.stderr[-600:]
        pytest.skip("no loopback registry with the python fixture: %s" % why)
    port, pid = words
    try:
        yield "127.0.0.1:%s/kern-test/python:3" % port
    finally:
        try:
            os.kill(int(pid), 15)
        except OSError:
            pass
        shutil.rmtree(reg_dir, ignore_errors=True)
