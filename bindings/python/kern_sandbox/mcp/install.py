"""install_packages: pip into the workspace's .deps, then seal it.

Only when the operator sets ``KERN_MCP_INSTALL_ALLOW``. The install runs in
a box of its own whose only way out is kern's egress proxy to the allowed
domains (``--egress-allow``); its workspace is the connection's, with
``.deps`` writable. Every ``run_code`` box stays network-off and gets
``.deps`` read-only, so code the model runs cannot change what later calls
import. pip finds its index through the usual variables, passed from
kern-mcp's own environment: ``PIP_INDEX_URL``, ``PIP_EXTRA_INDEX_URL``,
``PIP_TRUSTED_HOST`` (default: PyPI, which needs ``pypi.org`` and
``files.pythonhosted.org`` in the allow list).
"""

from __future__ import annotations

import os
import threading
from typing import Any, Dict, Sequence

from .. import _model_text as mt
from ..sandbox import Sandbox
from . import reply
from .server import Call
from .settings import Settings

PIP_ENV = ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_TRUSTED_HOST")
# pip resolves, downloads and may build: more than a cell usually needs.
MIN_INSTALL_TIMEOUT_S = 300.0
TAIL_CHARS = 6000


def pip_command(packages: Sequence[str]) -> list:
    return ["python3", "-m", "pip", "install", "--target", "/workspace/.deps", "--upgrade",
            "--no-cache-dir", "--disable-pip-version-check", "--no-input", "--progress-bar",
            "off", "--"] + list(packages)


class Installer:
    """The install box's Sandbox: same image, caps and workspace as the
    connection's, egress to the allowed domains, ``.deps`` writable."""

    def __init__(self, main: Sandbox, settings: Settings) -> None:
        cfg = main.config
        env = dict(cfg.env)
        env.update({k: os.environ[k] for k in PIP_ENV if os.environ.get(k)})
        self._lock = threading.Lock()
        self._sandbox = Sandbox(
            image=cfg.image, workspace=main.workspace, memory_mb=cfg.memory_mb,
            timeout_s=max(cfg.timeout_s, MIN_INSTALL_TIMEOUT_S),
            profiles=list(cfg.profiles) or None, egress_allow=list(settings.install_allow),
            deps_readonly=False, env=env, track_files=False, pyc_cache=False)

    def install(self, packages: Sequence[str], call: Call) -> Dict[str, Any]:
        # One install at a time: two pips writing one .deps would mix files.
        with self._lock:
            result = self._sandbox.run(pip_command(packages), on_start=call.on_cancel)
        lines = []
        out = mt.untrusted(result.stdout).strip()
        err = mt.untrusted(result.code_stderr).strip()
        if out:
            lines.append(out[-TAIL_CHARS:])
        if err:
            lines += ["[stderr]", err[-TAIL_CHARS:]]
        lines.append(reply.exit_line(result.exit_code, result.fault))
        if result.success:
            lines.append("Installed into /workspace/.deps; later python calls can import it.")
        return {"content": [reply.text("\n".join(lines))], "isError": not result.success}

    def close(self) -> None:
        self._sandbox.close()
