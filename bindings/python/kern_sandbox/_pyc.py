"""The shared bytecode cache (spec §6).

Images such as python:3.12-slim ship without compiled bytecode, and run
boxes have a read-only root, so every call would compile the modules it
imports again. Once per image, a ``kern-pyc-<8 hex>`` box compiles the
image's ``sys.path`` with PYTHONPYCACHEPREFIX pointing at a host
directory; later boxes get that directory read-only at /kern-pyc. It is
used only if it is non-empty and holds nothing but ``.pyc`` files, and
only for the image it was built from: its identity includes kern's cache
sidecars (``.ok`` mtime and size, the first 4096 bytes of ``.image``), so
a re-pulled image gets a fresh cache.

The host image is left out: its Python is the host's, whose distribution
ships the bytecode already.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import stat
import sys
import threading
from typing import Dict, Optional

from ._argv import PYC_DIR
from ._imagecache import HOST_IMAGE, canonical, ok_stamp, sidecar_head
from ._locate import Kern
from ._spawn import BoxProcess, collect
from .workspace import remove_tree

BUILD_TIMEOUT_S = 600
# How long stop() waits for the stopped build to be reaped and cleaned up.
STOP_WAIT_S = 30
# One build per image at a time in this process; sessions opened meanwhile
# wait for it instead of compiling the same image again.
_building: Dict[str, threading.Lock] = {}
_building_lock = threading.Lock()
# Compiles every directory of the image's sys.path into the prefix.
COMPILE = (
    "import compileall, os, sys\n"
    "for p in sys.path:\n"
    "    if p.startswith('/') and os.path.isdir(p):\n"
    "        compileall.compile_dir(p, quiet=2, workers=1)\n"
)


def cache_home() -> str:
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = xdg or os.path.join(os.environ.get("HOME", "") or "/tmp", ".cache")
    return os.path.join(base, "kern-sandbox", "pyc")


def identity(image: str) -> str:
    """What the cache of ``image`` must have been built from."""
    h = hashlib.sha256()
    h.update(canonical(image).encode() + b"\0" + ok_stamp(image).encode() + b"\0")
    h.update(sidecar_head(image))
    return h.hexdigest()


def _paths(image: str):
    key = hashlib.sha256(canonical(image).encode()).hexdigest()
    root = cache_home()
    return os.path.join(root, key), os.path.join(root, key + ".id")


def valid_tree(path: str) -> bool:
    """Non-empty, only directories and ``.pyc`` regular files, no links."""
    found = False
    for top, dirs, files in os.walk(path, followlinks=False):
        for d in dirs:
            if os.path.islink(os.path.join(top, d)):
                return False
        for f in files:
            st = os.lstat(os.path.join(top, f))
            if not f.endswith(".pyc") or not stat.S_ISREG(st.st_mode):
                return False
            found = True
    return found


def usable(image: str) -> Optional[str]:
    """The cache directory to bind for ``image``, if one is built and current."""
    if image == HOST_IMAGE:
        return None
    tree, id_file = _paths(image)
    try:
        with open(id_file, encoding="ascii") as f:
            if f.read().strip() != identity(image):
                return None
    except (OSError, UnicodeDecodeError):
        return None
    return tree if os.path.isdir(tree) else None


class Build:
    """One session's background build of its image's cache.

    The ``kern-pyc`` box belongs to the session that started it: ``stop()``
    (from ``Sandbox.close()``, or at interpreter exit when a session was
    never closed) stops the box, waits for the build thread to reap kern
    and remove the half-built directory, so nothing outlives the process.
    ``result`` is the cache directory once the build has succeeded."""

    def __init__(self, kern: Kern, image: str, enforce_limits: bool) -> None:
        self.result: Optional[str] = None
        self._lock = threading.Lock()
        self._box: Optional[BoxProcess] = None
        self._stopped = False
        self._thread = threading.Thread(target=self._run, args=(kern, image, enforce_limits),
                                        name="kern-pyc", daemon=True)
        self._thread.start()

    def _run(self, kern: Kern, image: str, enforce_limits: bool) -> None:
        self.result = build(kern, image, enforce_limits, self)

    @property
    def stopped(self) -> bool:
        return self._stopped

    def adopt(self, box: BoxProcess) -> bool:
        """Record the running build box; False if stop() came first."""
        with self._lock:
            if not self._stopped:
                self._box = box
                return True
        return False

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            box = self._box
        if box is not None:
            box.stop()
        if self._thread is not threading.current_thread():
            self._thread.join(STOP_WAIT_S)


def build(kern: Kern, image: str, enforce_limits: bool = True,
          job: Optional[Build] = None) -> Optional[str]:
    """Build the cache of ``image`` and return its directory, or None (with
    a ``kern-sandbox:`` warning on stderr) when it cannot be built. A
    stopped ``job`` ends the build early and quietly."""
    if image == HOST_IMAGE:
        return None
    with _building_lock:
        lock = _building.setdefault(canonical(image), threading.Lock())
    with lock:
        current = usable(image)
        if current and valid_tree(current):
            return current
        if job is not None and job.stopped:
            return None
        return _build(kern, image, enforce_limits, job)


def _build(kern: Kern, image: str, enforce_limits: bool, job: Optional[Build]) -> Optional[str]:
    tree, id_file = _paths(image)
    os.makedirs(os.path.dirname(tree), mode=0o700, exist_ok=True)
    want = identity(image)
    work = "%s.tmp-%s" % (tree, secrets.token_hex(4))
    os.mkdir(work, 0o700)
    name = "kern-pyc-" + secrets.token_hex(4)
    argv = ["box", name, "--image", image, "--ro", "--cap-drop", "ALL", "--user", "0",
            "--no-uid-range", "--memory", "512m", "--pids-limit", "256",
            "--timeout", str(BUILD_TIMEOUT_S + 5), "-v", "%s:%s" % (work, PYC_DIR),
            "--env", "PYTHONPYCACHEPREFIX=" + PYC_DIR, "--", "python3", "-c", COMPILE]
    box = None
    try:
        box = BoxProcess(kern, argv, name, alive=False, no_scope=not enforce_limits)
        if job is not None and not job.adopt(box):
            box.stop()
        done = collect(box, timeout_s=BUILD_TIMEOUT_S, max_output_bytes=64 << 10)
        if job is not None and job.stopped:
            return None
        if done.exit_code != 0 or not valid_tree(work):
            _warn("the bytecode cache for %s could not be built (exit %d); boxes run without it"
                  % (image, done.exit_code))
            return None
        if os.path.isdir(tree):
            remove_tree(tree)
        try:
            os.rename(work, tree)
        except OSError:  # another session finished first
            return usable(image)
        staged = "%s.tmp-%s" % (id_file, secrets.token_hex(4))
        with open(staged, "w", encoding="ascii") as f:
            f.write(want + "\n")
        os.replace(staged, id_file)
        return tree
    except OSError as e:
        if job is None or not job.stopped:
            _warn("the bytecode cache for %s could not be built (%s)" % (image, e))
        return None
    finally:
        if os.path.isdir(work):
            remove_tree(work)


def _warn(text: str) -> None:
    try:
        sys.stderr.write("kern-sandbox: warning: %s\n" % text)
    except (OSError, ValueError):
        pass
