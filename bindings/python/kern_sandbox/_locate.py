"""Finding the kern binary and checking that it is kern (spec §1).

``$KERN_BIN`` when non-empty (an executable regular file), else ``kern``
on ``PATH``. Identity: ``<kern> --version`` exits 0 and its first stdout
line starts ``kern ``; the answer is remembered per (realpath, device,
inode, size, mtime), so replacing the file is noticed and an unchanged one
costs one stat.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
import threading
from dataclasses import dataclass
from typing import Dict, Tuple

from .errors import SandboxError

# From this version on `kern exec` writes outcome bytes (box-cli.md §1).
EXEC_REPORTS_START = (0, 30, 2)
VERSION_TIMEOUT_S = 10

INSTALL_HINT = ("install it (./install.sh from a kern checkout, or "
                "curl -fsSL https://raw.githubusercontent.com/getkern/kern/main/install.sh | sh) "
                "or set KERN_BIN to its path")


@dataclass(frozen=True)
class Kern:
    """An identified kern binary."""

    path: str
    version: Tuple[int, int, int]

    @property
    def exec_reports_start(self) -> bool:
        """``kern exec`` writes outcome bytes (kern >= 0.30.2)."""
        return self.version >= EXEC_REPORTS_START


_lock = threading.Lock()
_known: Dict[Tuple[str, int, int, int, int], Kern] = {}


def check_platform() -> None:
    """kern is Linux-only; say so instead of failing obscurely."""
    if not sys.platform.startswith("linux"):
        raise SandboxError(
            "kern is Linux-only (it is built on namespaces, cgroups and seccomp, which %s "
            "does not have); run this inside a Linux VM (colima, Lima, OrbStack, UTM, or "
            "WSL2 on Windows)" % sys.platform)


def find() -> str:
    """The path of the kern binary to use, not yet identified."""
    env = os.environ.get("KERN_BIN", "")
    if env:
        try:
            st = os.stat(env)
        except OSError:
            st = None
        if st is None or not stat.S_ISREG(st.st_mode) or not os.access(env, os.X_OK):
            raise SandboxError("$KERN_BIN=%r is not an executable file" % env)
        return env
    found = shutil.which("kern")
    if not found:
        raise SandboxError("kern was not found on PATH; " + INSTALL_HINT)
    return found


def parse_version(line: str) -> Tuple[int, int, int]:
    m = re.search(r"(\d+)\.(\d+)\.(\d+)", line)
    if not m:
        raise ValueError("no X.Y.Z version in %r" % line)
    return int(m.group(1)), int(m.group(2)), int(m.group(3))


def identify(path: str) -> Kern:
    """Check that ``path`` is kern, running ``--version`` only when the file
    changed since the last check."""
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except OSError as e:
        raise SandboxError("'%s' is not kern: %s" % (path, e.strerror)) from None
    key = (real, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    with _lock:
        known = _known.get(key)
    if known is not None:
        return known
    try:
        out = subprocess.run([real, "--version"], stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             timeout=VERSION_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        raise SandboxError("'%s' is not kern: --version did not answer in %d s"
                           % (path, VERSION_TIMEOUT_S)) from None
    except OSError as e:
        raise SandboxError("'%s' is not kern: %s" % (path, e.strerror)) from None
    first = out.stdout.decode("utf-8", "replace").split("\n", 1)[0]
    if out.returncode != 0 or not first.startswith("kern "):
        raise SandboxError("'%s' is not kern: `--version` exited %d and printed %r"
                           % (path, out.returncode, first[:80]))
    try:
        version = parse_version(first)
    except ValueError as e:
        raise SandboxError("'%s' is not kern: %s" % (path, e)) from None
    kern = Kern(real, version)
    with _lock:
        _known[key] = kern
    return kern


def locate() -> Kern:
    """Platform check, find, identify: what every box start calls."""
    check_platform()
    return identify(find())
