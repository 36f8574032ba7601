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


def build(kern: Kern, image: str, enforce_limits: bool = True) -> Optional[str]:
    """Build the cache of ``image`` and return its directory, or None (with
    a ``kern-sandbox:`` warning on stderr) when it cannot be built."""
    if image == HOST_IMAGE:
        return None
    with _building_lock:
        lock = _building.setdefault(canonical(image), threading.Lock())
    with lock:
        current = usable(image)
        if current and valid_tree(current):
            return current
        return _build(kern, image, enforce_limits)


def _build(kern: Kern, image: str, enforce_limits: bool) -> Optional[str]:
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
    try:
        box = BoxProcess(kern, argv, name, alive=False, no_scope=not enforce_limits)
        done = collect(box, timeout_s=BUILD_TIMEOUT_S, max_output_bytes=64 << 10)
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
