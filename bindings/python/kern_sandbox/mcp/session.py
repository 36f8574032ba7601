"""The Sandbox behind one MCP connection.

Opened lazily: the first tool call that needs the workspace creates it,
pulls the image and runs ``KERN_MCP_SETUP``. Every ``run_code`` is then a
fresh network-off box on that workspace (or, with ``KERN_MCP_KERNEL=1``,
a cell of one warm Python kernel, started again after a fault). Errors of
the sandbox come back as tool results (``kern error: ...``), never as
protocol errors, so the model sees them.
"""

from __future__ import annotations

import threading
from typing import Any, Dict, Optional

from .._config import make_config
from .._locate import find
from ..errors import SandboxError
from ..sandbox import Sandbox
from . import interpreters, reply
from .install import Installer
from .server import Call
from .settings import Settings, SettingsError
from .tools import RunCodeArgs, ToolContext
from .versions import Features

BOX_ENV = {"MPLCONFIGDIR": "/tmp"}


def sandbox_kwargs(s: Settings) -> Dict[str, Any]:
    """Sandbox arguments from the operator's settings."""
    kw: Dict[str, Any] = dict(image=s.image, setup=s.setup, memory_mb=s.memory_mb,
                              timeout_s=s.timeout_s, workspace=s.workspace,
                              profiles=list(s.profiles) or None, env=dict(BOX_ENV),
                              track_files=s.track_files)
    if s.tmpfs_mb is not None:
        kw["tmpfs"] = {} if s.tmpfs_mb == 0 else {"/tmp": f"{s.tmpfs_mb}m"}
    return kw


def check_settings(s: Settings) -> None:
    """Refuse settings the Sandbox would refuse, before the server speaks."""
    try:
        make_config(sandbox_kwargs(s))
    except SandboxError as e:
        raise SettingsError(str(e)) from None


class Session:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._kwargs = sandbox_kwargs(settings)
        self._open_lock = threading.Lock()
        self._sandbox: Optional[Sandbox] = None
        self._closed = False
        self._ctx_lock = threading.Lock()
        self._ctx: Optional[ToolContext] = None
        self._pulled = False
        self._kernel_lock = threading.Lock()
        self._kernel: Any = None
        self._installer: Optional[Installer] = None

    # -- the sandbox -------------------------------------------------------

    def sandbox(self) -> Sandbox:
        """The connection's Sandbox, opened on first use (a failed open,
        e.g. a failing setup command, is tried again on the next call)."""
        with self._open_lock:
            if self._closed:
                raise SandboxError("the connection is closing")
            if self._sandbox is None:
                sbx = Sandbox(**self._kwargs)
                sbx.open()
                self._sandbox = sbx
            return self._sandbox

    def close(self) -> None:
        with self._open_lock:
            self._closed = True
            sbx, self._sandbox = self._sandbox, None
            installer, self._installer = self._installer, None
        with self._kernel_lock:
            kernel, self._kernel = self._kernel, None
        if kernel is not None:
            kernel.close()
        if installer is not None:
            installer.close()
        if sbx is not None:
            sbx.close()

    # -- what tools/list shows ---------------------------------------------

    def tool_context(self) -> ToolContext:
        with self._ctx_lock:
            if self._ctx is None or not self._ctx.interpreters_checked:
                kern: Optional[str] = None
                if not self._pulled:
                    # One pull attempt per connection; later lists only look.
                    self._pulled = True
                    try:
                        kern = find()
                    except SandboxError:
                        kern = None
                langs, checked = interpreters.probe(self.settings.image, kern)
                # run_code reaches the world only with a network or an egress
                # allow list, which no KERN_MCP_* setting gives its boxes.
                open_world = bool(self._kwargs.get("network") or self._kwargs.get("egress_allow"))
                self._ctx = ToolContext(self.settings, langs, checked, open_world)
            return self._ctx

    # -- tools -------------------------------------------------------------

    def call(self, tool: str, args: Any, call: Call, features: Features) -> Dict[str, Any]:
        try:
            if tool == "run_code":
                return self._run_code(args, call, features)
            if tool == "write_file":
                path, content = args
                data = content.encode("utf-8", "surrogatepass")
                self.sandbox().write_file(path, data)
                return reply.write_file(path, len(data))
            if tool == "read_file":
                return reply.read_file(args, self.sandbox().read_file(args, reply.READ_CAP_BYTES))
            if tool == "list_files":
                return reply.list_files(self.sandbox().list_files())
            if tool == "install_packages":
                return self._install(args, call)
        except FileNotFoundError:
            return reply.tool_error(f"no such file in the workspace: {args}")
        except (SandboxError, OSError, UnicodeError) as e:
            return reply.kern_error(e)
        raise ValueError(f"no tool {tool}")

    def _run_code(self, args: RunCodeArgs, call: Call, features: Features) -> Dict[str, Any]:
        sbx = self.sandbox()
        if self.settings.kernel and args.language == "python":
            result = self._kernel_cell(sbx, args, call)
        else:
            result = sbx.run_code(args.code, args.language, timeout_s=args.timeout_s,
                                  on_start=call.on_cancel)
        return reply.run_code(result, features.structured)

    def _kernel_cell(self, sbx: Sandbox, args: RunCodeArgs, call: Call) -> Any:
        """One cell of the warm kernel; a fault (or a cancellation) ends
        that kernel and the next cell starts a fresh one."""
        with self._kernel_lock:
            if call.cancelled:
                raise SandboxError("cancelled")
            kernel = self._kernel
            if kernel is None or not kernel.alive:
                kernel = self._kernel = sbx.kernel()
            try:
                result = kernel.run_code(args.code, timeout_s=args.timeout_s,
                                         on_start=call.on_cancel)
            except SandboxError:
                self._kernel = None
                kernel.close()
                raise
            if not kernel.alive or result.fault is not None:
                self._kernel = None
                kernel.close()
            return result

    def _install(self, packages: Any, call: Call) -> Dict[str, Any]:
        sbx = self.sandbox()
        with self._open_lock:
            if self._installer is None:
                self._installer = Installer(sbx, self.settings)
            installer = self._installer
        return installer.install(packages, call)

