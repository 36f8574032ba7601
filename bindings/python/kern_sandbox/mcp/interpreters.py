"""Which of run_code's interpreters the configured image provides.

``tools/list`` offers only those, so the model is not left to guess. The
answer comes from the image's flattened root in kern's cache (or the host's
own directories for the ``host`` image), read on the host without following
a single symlink out of that root: the image's files are untrusted data.
"""

from __future__ import annotations

import os
import stat
import subprocess
from typing import List, Optional, Tuple

from .._imagecache import HOST_IMAGE, cache_key, cache_root

# language -> the command run_code runs it with
BINARIES: Tuple[Tuple[str, str], ...] = (
    ("python", "python3"), ("bash", "bash"), ("sh", "sh"), ("node", "node"))
STANDARD_PATH = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")
# Waiting this long for a pull keeps tools/list inside a client's patience.
PULL_WAIT_S = 20.0
_SIDECAR_MAX = 1 << 20


def _real_dir(root: str, path: str) -> Optional[str]:
    """``root/path`` when every component below root is a real directory."""
    current = root
    for part in path.strip("/").split("/"):
        if part in ("", ".", ".."):
            return None
        current = os.path.join(current, part)
        try:
            if not stat.S_ISDIR(os.lstat(current).st_mode):
                return None
        except OSError:
            return None
    return current


def _sidecar_path(root_key: str) -> List[str]:
    """The PATH entries of the image config (``env PATH=...`` line)."""
    try:
        fd = os.open(root_key + ".image", os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return []
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return []
        data = os.read(fd, _SIDECAR_MAX).decode("utf-8", "replace")
    finally:
        os.close(fd)
    for line in data.split("\n"):
        key, _, value = line.partition("\t")
        if key == "env" and value.startswith("PATH="):
            return [p for p in value[5:].split(":") if p.startswith("/")]
    return []


def in_root(root: str, dirs: List[str]) -> Tuple[str, ...]:
    """The languages whose binary is present in one of ``dirs`` of ``root``
    (a symlink counts as present: ``python3 -> python3.12``)."""
    found = []
    real_dirs = [d for d in (_real_dir(root, p) for p in dirs) if d is not None]
    for language, binary in BINARIES:
        for d in real_dirs:
            if os.path.lexists(os.path.join(d, binary)):
                found.append(language)
                break
    return tuple(found)


def probe(image: str, kern: Optional[str]) -> Tuple[Tuple[str, ...], bool]:
    """(languages, verified). Unverified means the image is not cached and
    could not be pulled in time: all four are offered, and a missing one
    surfaces as an exec_failed fault naming the binary and the image."""
    if image == HOST_IMAGE:
        return in_root("/", list(STANDARD_PATH)), True
    key = os.path.join(cache_root(), cache_key(image))
    if not os.path.exists(key + ".ok") and kern:
        _pull(kern, image)
    if not os.path.exists(key + ".ok"):
        return tuple(language for language, _ in BINARIES), False
    dirs = _sidecar_path(key) + [d for d in STANDARD_PATH]
    found = in_root(key, dirs)
    if not found:
        # Nothing recognisable (a distroless image?): offer all, unverified.
        return tuple(language for language, _ in BINARIES), False
    return found, True


def _pull(kern: str, image: str) -> None:
    try:
        subprocess.run([kern, "pull", image], stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=PULL_WAIT_S, start_new_session=True)
    except (OSError, subprocess.TimeoutExpired):
        pass
