"""What makes a box this session's box, as one hash (spec 13, 14).

A prewarmed box may serve a call, and a resident box may be reused, only
when it was started exactly as a box for that call would be now. The hash
covers the dry argv of a session box (its random name, env-file path and
command replaced by placeholders; the env-file's lines added), the kern
binary and version, whether limits are enforced, every KERN_* variable but
KERN_BIN (kern's behaviour is a function of them and the argv), and, with
profiles, kern's own --show-config of such a box (kern.toml may change
under a running session).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from typing import TYPE_CHECKING, Dict, Optional

if TYPE_CHECKING:
    from .sandbox import Sandbox

PROBE_NAME = "kern-fingerprint-probe"
PROBE_TIMEOUT_S = 30


def config_key(sbx: "Sandbox", budget_s: float, memo: Optional[Dict[tuple, str]] = None) -> str:
    """sha256 hex of the session's box configuration (see the module text).

    ``memo`` (one dict per Sandbox) skips the work while nothing it depends
    on changed: the environment, the kern binary's file, the bytecode cache
    and .deps. With profiles the probe runs every time (kern.toml is not
    ours to watch)."""
    if memo is None or sbx.config.profiles:
        return _compute(sbx, budget_s)
    try:
        st = os.stat(sbx._kern.path)
        binary = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    except OSError:
        binary = None
    # Keys first: decoding every value of os.environ costs four times more.
    kern_env = tuple(sorted((k, os.environ[k]) for k in os.environ if k.startswith("KERN_")))
    inputs = (budget_s, os.environ.get("PATH"), binary, kern_env, sbx._pyc_dir, sbx._has_deps())
    key = memo.get(inputs)
    if key is None:
        key = _compute(sbx, budget_s)
        memo.clear()
        memo[inputs] = key
    return key


def _compute(sbx: "Sandbox", budget_s: float) -> str:
    req = sbx.box_request(["<cell>"], budget_s, name="<name>", env_file="<env-file>",
                          kern_timeout=0)
    h = hashlib.sha256()
    argv = [sbx._kern.path, "%d.%d.%d" % sbx._kern.version] + sbx.box_argv(req)
    for part in argv + ["--enforce-limits=%d" % sbx.config.enforce_limits,
                        sbx.env_lines(req.pyc_dir is not None)]:
        h.update(part.encode("utf-8", "surrogateescape") + b"\0")
    for name in sorted(os.environ):
        if name.startswith("KERN_") and name != "KERN_BIN" and os.environ[name]:
            h.update(("%s=%s" % (name, os.environ[name])).encode("utf-8", "surrogateescape")
                     + b"\0")
    if sbx.config.profiles:
        h.update(_fingerprint(sbx, budget_s))
    return h.hexdigest()


def _fingerprint(sbx: "Sandbox", budget_s: float) -> bytes:
    req = sbx.box_request(["true"], budget_s, name=PROBE_NAME, extra=("--show-config",))
    try:
        out = subprocess.run([sbx._kern.path] + sbx.box_argv(req), stdin=subprocess.DEVNULL,
                             capture_output=True, timeout=PROBE_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired):
        out = None
    if out is None or out.returncode != 0:
        # No view of kern's configuration: a key no box can match.
        return os.urandom(32)
    return out.stdout
