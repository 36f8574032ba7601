"""Sandbox arguments (spec §3), checked and normalised once, before any box.

``SandboxConfig`` is what every box of a session is built from; it is
frozen, so a running call never sees it change.
"""

from __future__ import annotations

import math
import numbers
import os
import re
from dataclasses import dataclass, field
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple

from . import rules
from .errors import SandboxError

DEFAULT_IMAGE = "python:3.12-slim"
CAP_NAME = re.compile(r"^[A-Za-z_]{1,32}$")
USER_SPEC = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,31}(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,31})?$")


@dataclass(frozen=True)
class SandboxConfig:
    """The checked form of Sandbox's arguments."""

    image: str = DEFAULT_IMAGE
    setup: Optional[str] = None
    workspace: Optional[str] = None
    memory_mb: Optional[int] = 512
    cpus: Optional[float] = None
    pids: Optional[int] = 256
    timeout_s: float = 30
    network: bool = False
    mounts: Tuple[rules.Mount, ...] = ()
    tmpfs: Tuple[Tuple[str, str], ...] = ()
    profiles: Tuple[str, ...] = ()
    max_output_bytes: int = 64 << 20
    deps_readonly: bool = True
    security_profile: Optional[str] = None
    apparmor: Optional[str] = None
    require_limits: bool = False
    cap_drop: Tuple[str, ...] = ("ALL",)
    enforce_limits: bool = True
    egress_allow: Tuple[str, ...] = ()
    prewarm: int = 0
    env: Dict[str, str] = field(default_factory=dict)
    user: Optional[str] = None
    persist: bool = False
    pyc_cache: bool = True
    track_files: bool = True


def check_timeout(value: object, what: str = "timeout_s") -> float:
    """A finite number of seconds > 0 (bools are not numbers here)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) \
            or not math.isfinite(float(value)) or float(value) <= 0:
        raise SandboxError("%s must be a finite number of seconds > 0, not %r" % (what, value))
    if float(value) > 86400:
        raise SandboxError("%s must be at most 86400 (one day), not %r" % (what, value))
    return float(value)


def _int(value: object, what: str, low: int, allow_none: bool) -> Optional[int]:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or int(value) < low:
        raise SandboxError("%s must be an integer >= %d%s, not %r"
                           % (what, low, " or None" if allow_none else "", value))
    return int(value)


def _bool(value: object, what: str) -> bool:
    if not isinstance(value, bool):
        raise SandboxError("%s must be True or False, not %r" % (what, value))
    return value


def _cpus(value: object) -> Optional[float]:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real) \
            or not math.isfinite(float(value)) or float(value) <= 0:
        raise SandboxError("cpus must be a number of cores > 0 or None, not %r" % (value,))
    return float(value)


def _image(value: object) -> str:
    if not isinstance(value, str) or not value or len(value) > 255 or \
            any(c.isspace() or ord(c) < 32 or ord(c) > 126 for c in value) or \
            value.startswith(("-", "/")):
        raise SandboxError("image must be an image reference like 'python:3.12-slim' or "
                           "'host', not %r" % (value,))
    return value


def _cap_drop(value: object) -> Tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise SandboxError("cap_drop must be a tuple of capability names, e.g. ('ALL',)")
    for cap in value:
        if not isinstance(cap, str) or not CAP_NAME.match(cap):
            raise SandboxError("cap_drop entry %r is not a capability name" % (cap,))
    return tuple(c.upper() for c in value)


def _user(value: object) -> Optional[str]:
    if value is None:
        return None
    if not isinstance(value, str) or not USER_SPEC.match(value):
        raise SandboxError("user must be 'name', 'uid', 'name:group' or 'uid:gid', not %r"
                           % (value,))
    return value


def _setup(value: object) -> Optional[str]:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or "\0" in value:
        raise SandboxError("setup must be a non-empty shell command string")
    return value


def _workspace(value: object) -> Optional[str]:
    if value is None:
        return None
    if not isinstance(value, str):
        try:
            value = os.fspath(value)  # type: ignore[arg-type]
        except TypeError:
            raise SandboxError("workspace must be a path or None") from None
    if not value or "\0" in value or "\n" in value:  # type: ignore[operator]
        raise SandboxError("workspace must be a path without NUL or newline")
    return rules.check_source(value, "workspace")  # type: ignore[arg-type]


def make_config(args: Mapping[str, Any]) -> SandboxConfig:
    """Check Sandbox's keyword arguments (absent ones take their defaults);
    raise SandboxError (MountRefused for mounts and tmpfs) on the first bad
    one."""
    unknown = sorted(set(args) - set(_DEFAULTS))
    if unknown:
        raise TypeError("Sandbox() got unexpected keyword arguments: %s" % ", ".join(unknown))
    a = {**_DEFAULTS, **args}
    network = a["network"]
    memory = _int(a["memory_mb"], "memory_mb", 1, True)
    mount_list = rules.check_mounts(a["mounts"])
    return SandboxConfig(
        image=_image(a["image"]),
        setup=_setup(a["setup"]),
        workspace=_workspace(a["workspace"]),
        memory_mb=memory,
        cpus=_cpus(a["cpus"]),
        pids=_int(a["pids"], "pids", 2, True),
        timeout_s=check_timeout(a["timeout_s"]),
        network=_bool(network, "network"),
        mounts=tuple(mount_list),
        tmpfs=tuple(rules.check_tmpfs(a["tmpfs"], memory, mount_list)),
        profiles=tuple(rules.check_profiles(a["profiles"])),
        max_output_bytes=_int(a["max_output_bytes"], "max_output_bytes", 1, False) or 1,
        deps_readonly=_bool(a["deps_readonly"], "deps_readonly"),
        security_profile=rules.check_security_profile(a["security_profile"]),
        apparmor=rules.check_apparmor(a["apparmor"]),
        require_limits=_bool(a["require_limits"], "require_limits"),
        cap_drop=_cap_drop(a["cap_drop"]),
        enforce_limits=_bool(a["enforce_limits"], "enforce_limits"),
        egress_allow=tuple(rules.check_network(network, a["egress_allow"])),
        prewarm=_int(a["prewarm"], "prewarm", 0, False) or 0,
        env=rules.check_env(a["env"]),
        user=_user(a["user"]),
        persist=_bool(a["persist"], "persist"),
        pyc_cache=_bool(a["pyc_cache"], "pyc_cache"),
        track_files=_bool(a["track_files"], "track_files"),
    )


# Sandbox's defaults as the caller passes them (mounts, tmpfs, ... as None).
_DEFAULTS: Dict[str, Any] = {
    "image": DEFAULT_IMAGE, "setup": None, "workspace": None, "memory_mb": 512, "cpus": None,
    "pids": 256, "timeout_s": 30, "network": False, "mounts": None, "tmpfs": None,
    "profiles": None, "max_output_bytes": 64 << 20, "deps_readonly": True,
    "security_profile": None, "apparmor": None, "require_limits": False, "cap_drop": ("ALL",),
    "enforce_limits": True, "egress_allow": None, "prewarm": 0, "env": None, "user": None,
    "persist": False, "pyc_cache": True, "track_files": True,
}
