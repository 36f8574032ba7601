"""LangChain integration: a code tool and a shell execution policy.

``kern_code_tool`` returns a LangChain ``StructuredTool`` that runs the
model's code in a kern box, one box per call on one session workspace, and
answers with text written for the model (``_model_text``: faults labelled,
box output treated as untrusted, sizes capped).

``kern_execution_policy`` returns an execution policy for LangChain's shell
middleware (``ShellToolMiddleware``): one long-lived ``/bin/bash`` in a kern
box, driven over plain pipes.

``langchain-core`` (for the tool) and ``langchain`` (for the policy) are
imported only inside these factories: the rest of kern_sandbox never needs
them. Install with ``pip install 'kern-sandbox[langchain]'``.
"""

from __future__ import annotations

import atexit
import os
import re
import resource
import secrets
import shutil
import subprocess
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

from . import _model_text as mt

TOOL_NAMES: Dict[str, str] = {"python": "run_python", "bash": "run_bash", "node": "run_javascript"}
_LANGUAGE_NAMES = {"python": "Python", "bash": "bash", "node": "JavaScript (Node.js)"}
INSTALL_HINT = "pip install 'kern-sandbox[langchain]'"
SHELL_TEMP_PREFIX = "langchain-shell-"
NOFILE_SOFT, NOFILE_HARD = 1024, 524288
_ENV_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _describe(config: Any, language: str) -> str:
    lang = _LANGUAGE_NAMES[language]
    memory = f"{config.memory_mb} MiB of memory" if config.memory_mb else "a memory cap"
    if config.network:
        net = "The network is on."
    elif config.egress_allow:
        net = "Network access only to: " + ", ".join(config.egress_allow) + " (HTTP(S))."
    else:
        net = "There is no network access."
    return (f"Runs {lang} code in a fresh sandbox for each call and returns what it printed. "
            f"Limits: {memory}, {config.timeout_s:g} s per call. {net} Files written under "
            "/workspace (the working directory) persist between calls; variables and "
            "processes do not. Print what you want to see. Send plain code with no markdown "
            "fences.")


def make_runner(sandbox: Any, language: str, max_chars: int,
                max_code_bytes: int) -> Callable[[str], str]:
    """The function behind the tool: code in, text for the model out.
    Problems at run time come back as text, never as exceptions."""
    from .errors import SandboxError

    def run(code: str) -> str:
        if not isinstance(code, str):
            return "The code must be a string."
        code = mt.strip_fence(code)
        size = len(code.encode("utf-8", "surrogatepass"))
        if size > max_code_bytes:
            return mt.code_too_large(size, max_code_bytes)
        try:
            result = sandbox.run_code(code, language=language)
        except SandboxError as e:
            return mt.cut_to_fit(f"The sandbox could not run the code: {mt.one_line(str(e), 2000)}",
                                 max_chars)
        return mt.render_execution(result, max_chars)

    return run


def kern_code_tool(sandbox: Optional[Any] = None, *, language: str = "python",
                   name: Optional[str] = None, description: Optional[str] = None,
                   max_chars: int = 8000, max_code_bytes: int = 1 << 20,
                   **sandbox_kwargs: Any) -> Any:
    """A LangChain ``StructuredTool`` that runs code in kern.

    One session per tool: a file written by one call is there for the next,
    and each call runs in a fresh box. Without ``sandbox``, the tool opens a
    ``Sandbox(**sandbox_kwargs)`` now (so a missing kern or a failing
    ``setup=`` raises here) and removes its temporary workspace when the
    process exits. ``language`` is ``"python"``, ``"bash"`` or ``"node"``
    (tool names ``run_python``, ``run_bash``, ``run_javascript``). Replies
    are cut to ``max_chars``; code over ``max_code_bytes`` is not run.
    """
    if sandbox is not None and sandbox_kwargs:
        raise TypeError("pass either sandbox= or Sandbox arguments, not both: "
                        + ", ".join(sorted(sandbox_kwargs)))
    if language not in TOOL_NAMES:
        raise ValueError(f"language must be one of {', '.join(TOOL_NAMES)}, not {language!r}")
    if max_chars < 200 or max_code_bytes < 1:
        raise ValueError("max_chars must be at least 200 and max_code_bytes at least 1")
    try:
        from langchain_core.tools import StructuredTool
    except ImportError as e:
        raise ImportError(f"kern_code_tool needs langchain-core: {INSTALL_HINT}") from e
    if sandbox is None:
        from .sandbox import Sandbox

        sandbox = Sandbox(**sandbox_kwargs)
        sandbox.__enter__()
        atexit.register(sandbox.__exit__, None, None, None)
    run = make_runner(sandbox, language, max_chars, max_code_bytes)

    def run_code(code: str) -> str:
        return run(code)

    return StructuredTool.from_function(
        func=run_code,
        name=name or TOOL_NAMES[language],
        description=description or _describe(sandbox.config, language),
    )


# -- the shell execution policy -----------------------------------------


def find_kern() -> str:
    """``$KERN_BIN`` or ``kern`` on PATH (no identity check: the policy
    runs a plain ``kern box``)."""
    kern = os.environ.get("KERN_BIN", "") or shutil.which("kern")
    if not kern:
        raise RuntimeError("kern_execution_policy needs the kern binary on PATH or in $KERN_BIN")
    return kern


def env_file_text(env: Mapping[str, Any]) -> str:
    """``KEY=VALUE`` lines for kern's --env-file; refuses what the format
    cannot carry (a newline or NUL in a value, a malformed key)."""
    lines = []
    for key, value in env.items():
        value = str(value)
        if not _ENV_KEY.fullmatch(str(key)):
            raise ValueError(f"environment name {key!r} is not a valid variable name")
        if "\n" in value or "\0" in value:
            raise ValueError(f"environment value of {key} holds a newline or NUL")
        lines.append(f"{key}={value}\n")
    return "".join(lines)


def shell_argv(kern: str, *, name: str, image: str, network: bool, memory_bytes: int,
               cap_add: Sequence[str], user: Optional[str], env_fd: int,
               workspace: Optional[Path], tmpfs_mb: int, command: Sequence[str]) -> List[str]:
    """The ``kern box`` command line of a shell session (spec section 17)."""
    argv = [kern, "box", name, "-q", "--image", image, "--net", "host" if network else "none",
            "-m", str(memory_bytes), "--init", "--read-only", "--cap-drop", "ALL"]
    for cap in cap_add:
        argv += ["--cap-add", cap]
    if user is not None:
        argv += ["-u", user]
    # Docker's usual descriptor limits, never above the hard limit this
    # process has (a box cannot raise it: kern would refuse to start).
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    hard = NOFILE_HARD if hard == resource.RLIM_INFINITY else min(hard, NOFILE_HARD)
    argv += ["--ulimit", f"nofile={min(NOFILE_SOFT, hard)}:{hard}",
             "--env-file", f"/proc/self/fd/{env_fd}"]
    # kern mounts tmpfs after binds: a /tmp tmpfs would hide a workspace
    # bound below /tmp, so that one box goes without.
    if tmpfs_mb and not (workspace is not None and (str(workspace) + "/").startswith("/tmp/")):
        argv += ["--tmpfs", f"/tmp:{tmpfs_mb}m"]
    if workspace is not None:
        argv += ["-v", f"{workspace}:{workspace}", "-w", str(workspace)]
    else:
        argv += ["-w", "/"]
    return argv + ["--"] + list(command)


def spawn_shell(*, workspace: Path, env: Mapping[str, Any], command: Sequence[str],
                image: str, network: bool, memory_bytes: int, cap_add: Sequence[str],
                user: Optional[str], tmpfs_mb: int) -> "subprocess.Popen[str]":
    """Start the shell box with pipes on all three streams.

    The workspace is bound at its own path unless it is the middleware's
    throw-away directory (``langchain-shell-*``), which the box does not
    need. A bound workspace passes the binding's mount rules first
    (``MountRefused`` for ``$HOME``, credential directories, ...)."""
    from . import rules

    bound: Optional[Path] = None
    if not workspace.name.startswith(SHELL_TEMP_PREFIX):
        bound = Path(rules.check_source(str(workspace), "workspace"))
    name = "lc-shell-" + secrets.token_hex(6)
    fd = os.memfd_create("kern-shell-env", os.MFD_CLOEXEC)
    try:
        os.write(fd, env_file_text(env).encode("utf-8"))
        argv = shell_argv(find_kern(), name=name, image=image, network=network,
                          memory_bytes=memory_bytes, cap_add=cap_add, user=user, env_fd=fd,
                          workspace=bound, tmpfs_mb=tmpfs_mb, command=command)
        return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, cwd=str(workspace), text=True,
                                encoding="utf-8", errors="replace", bufsize=1,
                                start_new_session=True, pass_fds=(fd,))
    finally:
        os.close(fd)


def kern_execution_policy(*, image: str = "python:3.12-slim", network: bool = False,
                          memory_bytes: int = 512 << 20, cap_add: Sequence[str] = (),
                          user: Optional[str] = None, tmpfs_mb: int = 64,
                          **policy_kwargs: Any) -> Any:
    """An execution policy for LangChain's ``ShellToolMiddleware`` that
    runs its persistent shell in a kern box: network off unless
    ``network=True``, ``memory_bytes`` cap, read-only root with a
    ``tmpfs_mb`` /tmp, all capabilities dropped (``cap_add`` keeps some),
    the workspace bound read-write at its own path. ``policy_kwargs`` go
    to the base policy (``command_timeout``, ``max_output_lines``, ...)."""
    try:
        # The base class sits beside the concrete policies langchain exports.
        from langchain.agents.middleware._execution import BaseExecutionPolicy
    except ImportError as e:
        raise ImportError(f"kern_execution_policy needs langchain >= 1.0: {INSTALL_HINT}") from e
    if memory_bytes < 1 << 20:
        raise ValueError("memory_bytes must be at least 1 MiB")
    caps = tuple(cap_add)

    class KernExecutionPolicy(BaseExecutionPolicy):  # type: ignore[misc, valid-type]
        """The shell runs in a kern box (see kern_execution_policy)."""

        def spawn(self, *, workspace: Path, env: Mapping[str, str],
                  command: Sequence[str]) -> "subprocess.Popen[str]":
            return spawn_shell(workspace=Path(workspace), env=env, command=command,
                               image=image, network=network, memory_bytes=memory_bytes,
                               cap_add=caps, user=user, tmpfs_mb=tmpfs_mb)

    return KernExecutionPolicy(**policy_kwargs)
