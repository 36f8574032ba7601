"""The ``kern box`` argv of every box a session starts (spec §9).

One function builds them all, so a run box, the setup box, a kernel box, a
pool box and a resident box differ only in the fields of ``BoxRequest``,
and the flag order of §9 is written down once:

    box NAME --image IMG --ro -v WS:/workspace --workdir /workspace
    [.deps ro bind] [pyc bind] [--cap-drop C]... [--user U] [--no-uid-range]
    --timeout T [--memory Nm] [--cpus C] [--pids-limit N] [--require-limits]
    [--security-profile untrusted] [--apparmor P] [--egress-allow ... | --net]
    [profiles...] [user mounts...] [--tmpfs ...]... [--env-file P] [extra...]
    -- COMMAND
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import List, Optional, Sequence

from ._config import SandboxConfig
from ._imagecache import image_user, user_is_root
from .rules import WORKSPACE, Mount

PYC_DIR = "/kern-pyc"
DEPS = WORKSPACE + "/.deps"
# Network modes of a box: the session's own setting, or forced.
NET_SESSION, NET_HOST, NET_NONE = "session", "host", "none"


def box_name(prefix: str = "pysbx", hex_digits: int = 12) -> str:
    """``pysbx-<12 hex>``: random, so concurrent calls never collide."""
    return "%s-%s" % (prefix, secrets.token_hex(hex_digits // 2))


@dataclass(frozen=True)
class BoxRequest:
    """What differs between the boxes of one session.

    ``kern_timeout`` is kern's own ``--timeout`` (the backstop: the
    package's deadline plus 5 s). ``deps_ro`` binds ``<WS>/.deps``
    read-only over the workspace bind; ``pyc_dir`` is a host bytecode cache
    bound read-only at /kern-pyc. ``default_tmpfs`` False drops the
    session's tmpfs list (setup boxes get none). ``extra`` is placed just
    before ``--`` (a resident box's ``-d --init --label ...``).
    """

    name: str
    command: Sequence[str]
    kern_timeout: int
    read_only: bool = True
    deps_ro: bool = False
    pyc_dir: Optional[str] = None
    network: str = NET_SESSION
    tmpfs: bool = True
    env_file: Optional[str] = None
    extra: Sequence[str] = ()
    user: Optional[str] = None


def box_user(cfg: SandboxConfig, request_user: Optional[str] = None) -> Optional[str]:
    """The account the box runs as: the request's, the session's, else the
    image USER (None when unknown)."""
    if request_user is not None:
        return request_user
    if cfg.user is not None:
        return cfg.user
    return image_user(cfg.image)


def _cpus(c: float) -> str:
    text = repr(float(c))
    return text[:-2] if text.endswith(".0") else text


def box_argv(cfg: SandboxConfig, workspace: str, req: BoxRequest) -> List[str]:
    """The argv after the kern path: ``["box", NAME, ..., "--", *command]``."""
    argv = ["box", req.name, "--image", cfg.image]
    if req.read_only:
        argv.append("--ro")
    argv += Mount(workspace, WORKSPACE, False).argv() + ["--workdir", WORKSPACE]
    if req.deps_ro:
        argv += Mount(workspace + "/.deps", DEPS, True).argv()
    if req.pyc_dir:
        argv += Mount(req.pyc_dir, PYC_DIR, True).argv()
    for cap in cfg.cap_drop:
        argv += ["--cap-drop", cap]
    explicit = req.user if req.user is not None else cfg.user
    if explicit and not user_is_root(explicit):
        argv += ["--user", explicit]
    user = box_user(cfg, req.user)
    # Box root is the caller then: files it writes stay the caller's, and
    # with every capability dropped a range map would buy nothing.
    if "ALL" in cfg.cap_drop and user_is_root(user):
        argv.append("--no-uid-range")
    argv += ["--timeout", str(req.kern_timeout)]
    if cfg.memory_mb is not None:
        argv += ["--memory", "%dm" % cfg.memory_mb]
    if cfg.cpus is not None:
        argv += ["--cpus", _cpus(cfg.cpus)]
    if cfg.pids is not None:
        argv += ["--pids-limit", str(cfg.pids)]
    if cfg.require_limits:
        argv.append("--require-limits")
    if cfg.security_profile:
        argv += ["--security-profile", cfg.security_profile]
    if cfg.apparmor:
        argv += ["--apparmor", cfg.apparmor]
    if req.network == NET_HOST or (req.network == NET_SESSION and cfg.network):
        argv.append("--net")
    elif req.network == NET_SESSION and cfg.egress_allow:
        argv += ["--egress-allow", ",".join(cfg.egress_allow)]
    argv += list(cfg.profiles)
    for m in cfg.mounts:
        argv += m.argv()
    if req.tmpfs:
        for path, size in cfg.tmpfs:
            argv += ["--tmpfs", "%s:%s" % (path, size)]
    if req.env_file:
        argv += ["--env-file", req.env_file]
    argv += list(req.extra)
    argv.append("--")
    argv += list(req.command)
    return argv


def deadline_backstop(timeout_s: float) -> int:
    """kern's --timeout for a call with this deadline: int(t) + 5."""
    return int(timeout_s) + 5
