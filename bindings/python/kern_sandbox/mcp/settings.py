"""The operator's ``KERN_MCP_*`` settings, read once at start-up.

An empty variable counts as unset (kern's own rule). A bad value stops the
server before it speaks, with one line naming the variable.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Mapping, Optional, Tuple

from ..errors import SandboxError
from ..rules import check_domain

DEFAULT_IMAGE = "python:3.12-slim"
DEFAULT_MEMORY_MB = 1024
DEFAULT_TIMEOUT_S = 60.0
# A box deadline of a day is already far past any MCP client's patience.
MAX_TIMEOUT_S = 86400.0

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


class SettingsError(ValueError):
    """A ``KERN_MCP_*`` value the server cannot use."""


@dataclass(frozen=True)
class Settings:
    image: str = DEFAULT_IMAGE
    setup: Optional[str] = None
    # None: no --memory (kern's default or a vcpu: profile's memory= applies).
    memory_mb: Optional[int] = DEFAULT_MEMORY_MB
    timeout_s: float = DEFAULT_TIMEOUT_S
    workspace: Optional[str] = None
    profiles: Tuple[str, ...] = ()
    kernel: bool = False
    quiet: bool = True
    # None: the binding's default /tmp; 0: no /tmp tmpfs; N: N MiB.
    tmpfs_mb: Optional[int] = None
    # Domains install_packages may reach; empty: the tool does not exist.
    install_allow: Tuple[str, ...] = ()
    track_files: bool = False

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> "Settings":
        def get(name: str) -> Optional[str]:
            value = env.get(name, "")
            return value if value != "" else None

        image = get("KERN_MCP_IMAGE") or DEFAULT_IMAGE
        if "\0" in image or "\n" in image:
            raise SettingsError("KERN_MCP_IMAGE holds a NUL or newline")
        memory = _whole("KERN_MCP_MEMORY_MB", get("KERN_MCP_MEMORY_MB"), DEFAULT_MEMORY_MB)
        tmpfs = get("KERN_MCP_TMPFS_MB")
        return cls(
            image=image,
            setup=get("KERN_MCP_SETUP"),
            memory_mb=memory if memory > 0 else None,
            timeout_s=_seconds("KERN_MCP_TIMEOUT", get("KERN_MCP_TIMEOUT")),
            workspace=get("KERN_MCP_WORKSPACE"),
            profiles=_list(get("KERN_MCP_PROFILES")),
            kernel=_flag("KERN_MCP_KERNEL", get("KERN_MCP_KERNEL"), False),
            quiet=_flag("KERN_MCP_QUIET", get("KERN_MCP_QUIET"), True),
            tmpfs_mb=None if tmpfs is None else _whole("KERN_MCP_TMPFS_MB", tmpfs, 0),
            install_allow=_domains(get("KERN_MCP_INSTALL_ALLOW")),
            track_files=_flag("KERN_MCP_TRACK_FILES", get("KERN_MCP_TRACK_FILES"), False),
        )


def _whole(name: str, value: Optional[str], default: int) -> int:
    if value is None:
        return default
    if not re.fullmatch(r"[0-9]{1,9}", value.strip()):
        raise SettingsError(f"{name}={value!r} is not a whole number of MiB")
    return int(value)


def _seconds(name: str, value: Optional[str]) -> float:
    if value is None:
        return DEFAULT_TIMEOUT_S
    try:
        n = float(value)
    except ValueError:
        n = math.nan
    if not (math.isfinite(n) and 0 < n <= MAX_TIMEOUT_S):
        raise SettingsError(f"{name}={value!r} is not a number of seconds in (0, {MAX_TIMEOUT_S:.0f}]")
    return n


def _flag(name: str, value: Optional[str], default: bool) -> bool:
    if value is None:
        return default
    v = value.strip().lower()
    if v in _TRUE:
        return True
    if v in _FALSE:
        return False
    raise SettingsError(f"{name}={value!r} is not one of 1/0, true/false, yes/no, on/off")


def _list(value: Optional[str]) -> Tuple[str, ...]:
    if value is None:
        return ()
    return tuple(p.strip() for p in value.split(",") if p.strip())


def _domains(value: Optional[str]) -> Tuple[str, ...]:
    try:
        return tuple(check_domain(d) for d in _list(value))
    except SandboxError as e:
        raise SettingsError(f"KERN_MCP_INSTALL_ALLOW: {e}") from None
