"""The wheel builds offline with Debian's setuptools, installs with
Debian's `installer` (bindings/python/install-wheel, what ./install.sh
runs), imports from there with the kern-mcp entry point, and uninstalls
without leaving a file of its own behind."""

import importlib.util
import os
import shutil
import subprocess
import sys

import pytest

from conftest import PACKAGE_ROOT

# The same for every user: the unprivileged run of tests/run leaves it out.
pytestmark = pytest.mark.any_user

DEBIAN_PYTHON = "/usr/bin/python3"


def _debian_has(module):
    if not os.path.exists(DEBIAN_PYTHON):
        return False
    return subprocess.run([DEBIAN_PYTHON, "-c", "import " + module],
                          capture_output=True).returncode == 0


@pytest.mark.skipif(not (_debian_has("build") and _debian_has("installer")),
                    reason="Debian's python3-build and python3-installer are not installed")
def test_wheel_install_and_uninstall(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(PACKAGE_ROOT, src, ignore=shutil.ignore_patterns(
        "build", "dist", "*.egg-info", "__pycache__"))
    out = subprocess.run([DEBIAN_PYTHON, "-m", "build", "--wheel", "--no-isolation",
                          "--outdir", str(tmp_path / "dist"), str(src)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    wheels = os.listdir(tmp_path / "dist")
    from kern_sandbox import __version__
    assert wheels == ["kern_sandbox-%s-py3-none-any.whl" % __version__]
    target = tmp_path / "site"
    tool = str(PACKAGE_ROOT / "install-wheel")
    subprocess.run([DEBIAN_PYTHON, tool, "install", str(tmp_path / "dist" / wheels[0]),
                    "--target", str(target)], check=True, capture_output=True)
    assert (target / "kern_sandbox" / "_cell.py").exists()
    assert (target / "kern_sandbox" / "py.typed").exists()
    env = dict(os.environ, PYTHONPATH=str(target))
    probe = subprocess.run([DEBIAN_PYTHON, "-c", "import kern_sandbox; print(kern_sandbox.__file__)"],
                           capture_output=True, text=True, env=env, cwd=str(tmp_path))
    assert probe.stdout.strip() == str(target / "kern_sandbox" / "__init__.py"), probe.stderr
    script = target / "bin" / "kern-mcp"
    assert script.exists() and os.access(script, os.X_OK)
    assert script.read_text().startswith("#!" + DEBIAN_PYTHON)
    # Reinstalling over an install works (the old files go first).
    subprocess.run([DEBIAN_PYTHON, tool, "install", str(tmp_path / "dist" / wheels[0]),
                    "--target", str(target)], check=True, capture_output=True)
    subprocess.run([DEBIAN_PYTHON, "-c", "import kern_sandbox"], env=env, check=True,
                   cwd=str(tmp_path))  # leaves bytecode behind, which uninstall removes too
    subprocess.run([DEBIAN_PYTHON, tool, "uninstall", "--target", str(target)], check=True,
                   capture_output=True)
    left = [os.path.join(d, f) for d, _, files in os.walk(target) for f in files]
    assert left == [] and not (target / "kern_sandbox").exists()
