"""Reading kern's image cache (box-cli.md §9-§10): whether an image is
cached, its image USER, and the identity the bytecode cache keys on.

The package only reads these files; kern writes them.
"""

from __future__ import annotations

import os
import re
from typing import Optional

HOST_IMAGE = "host"
SIDECAR_HEAD = 4096
# A sidecar is a few lines; anything bigger is not read past this.
SIDECAR_MAX = 1 << 20


def cache_root() -> str:
    """``$XDG_CACHE_HOME/kern/images``, else ``~/.cache/kern/images``, else
    ``/tmp/kern-cache-<uid>/images``, as kern resolves it."""
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if xdg:
        return os.path.join(xdg, "kern", "images")
    home = os.environ.get("HOME", "")
    if home:
        return os.path.join(home, ".cache", "kern", "images")
    return "/tmp/kern-cache-%d/images" % os.getuid()


def _has_tag_or_digest(ref: str) -> bool:
    colon = ref.rfind(":")
    return colon >= 0 and "/" not in ref[colon:]


def cache_key(ref: str) -> str:
    """The cache key of a reference as given (box-cli.md §10): the
    sanitised reference and FNV-1a 64 of it."""
    if not _has_tag_or_digest(ref):
        ref += ":latest"
    h = 0xCBF29CE484222325
    for b in ref.encode("utf-8"):
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return re.sub(r"[^A-Za-z0-9_-]", "_", ref) + "-%016x" % h


def canonical(ref: str) -> str:
    """The canonical form of a reference (box-cli.md §9.1):
    ``registry/repository:tag`` or ``registry/repository@sha256:...``."""
    if ref == HOST_IMAGE:
        return HOST_IMAGE
    name, digest = (ref.split("@", 1) + [""])[:2]
    tag = ""
    colon = name.rfind(":")
    if colon >= 0 and "/" not in name[colon:]:
        name, tag = name[:colon], name[colon + 1:]
    first, _, rest = name.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        registry, repo = first, rest
    else:
        registry, repo = "registry-1.docker.io", name
    if registry in ("docker.io", "index.docker.io"):
        registry = "registry-1.docker.io"
    if registry == "registry-1.docker.io" and "/" not in repo:
        repo = "library/" + repo
    if digest:
        return "%s/%s@%s" % (registry, repo, digest)
    return "%s/%s:%s" % (registry, repo, tag or "latest")


def is_cached(ref: str) -> bool:
    """``<key>.ok`` exists: kern has the image (clients skip ``kern pull``)."""
    return ref == HOST_IMAGE or os.path.exists(os.path.join(cache_root(), cache_key(ref) + ".ok"))


def sidecar_head(ref: str) -> bytes:
    """The first 4096 bytes of ``<key>.image`` (empty when absent)."""
    try:
        with open(os.path.join(cache_root(), cache_key(ref) + ".image"), "rb") as f:
            return f.read(SIDECAR_HEAD)
    except OSError:
        return b""


def ok_stamp(ref: str) -> str:
    """``<key>.ok`` mtime and size, or empty when absent."""
    try:
        st = os.stat(os.path.join(cache_root(), cache_key(ref) + ".ok"))
    except OSError:
        return ""
    return "%d:%d" % (st.st_mtime_ns, st.st_size)


def _unescape(value: str) -> str:
    """Sidecar values escape backslash, TAB and newline as \\\\, \\t, \\n."""
    out, i = [], 0
    while i < len(value):
        c = value[i]
        if c == "\\" and i + 1 < len(value):
            out.append({"t": "\t", "n": "\n"}.get(value[i + 1], value[i + 1]))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def image_user(ref: str) -> Optional[str]:
    """The image USER from the sidecar's ``user`` line: None when the
    sidecar is absent or unreadable, "" when the image sets none.
    The built-in host image runs as root."""
    if ref == HOST_IMAGE:
        return ""
    try:
        with open(os.path.join(cache_root(), cache_key(ref) + ".image"), "rb") as f:
            text = f.read(SIDECAR_MAX).decode("utf-8", "replace")
    except OSError:
        return None
    if not text.startswith("fmt\t"):
        return None
    for line in text.split("\n"):
        key, _, value = line.partition("\t")
        if key == "user":
            return _unescape(value)
    return None


def user_is_root(spec: Optional[str]) -> bool:
    """A --user SPEC (or image USER) that means root: empty, 0, root,
    with any group."""
    if not spec:
        return True
    return spec.split(":", 1)[0] in ("0", "root")
