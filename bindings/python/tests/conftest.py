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


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "any_user: the test's outcome does not depend on the user running it (no "
        "box, or only the protocol or packaging around one): tests/run's unprivileged run "
        "leaves it out with -m 'not any_user'")


def pytest_report_header(config):
    return ["kern: %s" % os.environ.get("KERN_BIN", "(none)"),
            "python: %s %s" % (sys.executable, sys.version.split()[0]),
            "uid: %d, private XDG dirs: %s" % (os.getuid(), _PRIVATE)]


def pytest_sessionfinish(session, exitstatus):
    kern = os.environ.get("KERN_BIN")
    if kern:
        # A box still running here (a resident box a failed test left, for
        # one) would outlive its runtime dir, out of kern's reach.
        for name in kern_ps(kern):
            subprocess.run([kern, "stop", name], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, check=False, timeout=30)
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
    127.0.0.1:PORT/kern-test/python:3. Yields that reference; the same
    image is also tagged pull-test and pyc-test, for the tests that need
    an image nothing has pulled or compiled yet."""
    reg_dir = tempfile.mkdtemp(prefix="kern-pytest-reg-")
    script = (
        'set -e; . "$1/tests/helpers/fixtures.bash"\n'
        'd=$(fixture_python) || { echo "no-python-fixture"; exit 0; }\n'
        'registry_start "$2" >&2\n'
        'for tag in 3 pull-test pyc-test; do\n'
        '    registry_push "$d/python:latest" kern-test/python:$tag v2s2\n'
        'done\n'
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


@pytest.fixture(scope="session")
def hostile(tmp_path_factory):
    """tests/helpers/hostile-registry.py on a free loopback port; yields the port."""
    d = tmp_path_factory.mktemp("hostile")
    script = ('. "$1/tests/helpers/fixtures.bash"; hostile_start "$2" >&2 && '
              'echo "$HOSTILE_PORT $HOSTILE_PID"')
    out = subprocess.run(["bash", "-c", script, "fixtures", str(TOP), str(d)],
                         capture_output=True, text=True, timeout=60)
    words = out.stdout.split()
    if len(words) != 2:
        pytest.skip("hostile registry did not start: %s" % out.stderr[-400:])
    try:
        yield int(words[0])
    finally:
        try:
            os.kill(int(words[1]), 15)
        except OSError:
            pass


@pytest.fixture
def sbx(kern_bin):
    """A Sandbox on the built-in host image, closed after the test."""
    import kern_sandbox
    with kern_sandbox.Sandbox(image="host", timeout_s=20) as s:
        yield s


class KernSpy:
    """A KERN_BIN wrapper that records each kern invocation (argv, a few
    environment variables, stdin, the env-file's mode and content) and then
    runs the real kern."""

    def __init__(self, real, d):
        self.log = d / "spy.log"
        self.path = d / "kern"
        self.path.write_text(
            "#!/bin/sh\n"
            "{ printf 'argv'; for a in \"$@\"; do printf ' [%%s]' \"$a\"; done; echo\n"
            "  echo \"env KERN_NO_SCOPE=${KERN_NO_SCOPE-unset} KERN_STARTED_FD=${KERN_STARTED_FD-unset}"
            " KERN_ALIVE_FD=${KERN_ALIVE_FD-unset}\"\n"
            "  echo \"stdin $(readlink /proc/$$/fd/0)\"\n"
            "  prev=; for a in \"$@\"; do if [ \"$prev\" = --env-file ]; then\n"
            "    echo \"envfile $(stat -c %%a \"$a\") $(stat -c %%a \"$(dirname \"$a\")\")\"\n"
            "    sed 's/^/envline /' \"$a\"; fi; prev=$a; done\n"
            "} >> %s\n"
            "exec %s \"$@\"\n" % (self.log, real))
        self.path.chmod(0o755)

    def lines(self):
        return self.log.read_text().splitlines() if self.log.exists() else []

    def box_argvs(self):
        out = []
        for line in self.lines():
            if line.startswith("argv [box]"):
                out.append(line[len("argv "):][1:-1].split("] ["))
        return out


@pytest.fixture
def spy(kern_bin, tmp_path, monkeypatch):
    s = KernSpy(os.path.realpath(kern_bin), tmp_path)
    monkeypatch.setenv("KERN_BIN", str(s.path))
    return s
