"""The tools kern-mcp offers: their schemas, annotations and argument checks.

What ``tools/list`` shows depends on the negotiated revision (annotations
from 2025-03-26, ``title`` and ``outputSchema`` from 2025-06-18) and on the
operator's settings (the image and its interpreters, warm kernel mode,
whether ``install_packages`` exists). ``check_arguments`` applies the same
schemas to a call before any work starts.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .settings import Settings
from .versions import Features

LANGUAGES: Tuple[str, ...] = ("python", "bash", "sh", "node")
# pip requirement specifiers only: a name, extras, version clauses. No
# options (a leading "-"), URLs or paths, so the model cannot point pip at
# another index or a local directory.
_REQUIREMENT = re.compile(
    r"^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,98}[A-Za-z0-9])?"
    r"(?:\[[A-Za-z0-9._-]+(?:,[A-Za-z0-9._-]+)*\])?"
    r"(?:\s*(?:===|==|!=|~=|<=|>=|<|>)\s*[A-Za-z0-9.*+!_-]{1,64}"
    r"(?:\s*,\s*(?:===|==|!=|~=|<=|>=|<|>)\s*[A-Za-z0-9.*+!_-]{1,64})*)?$"
)
MAX_PACKAGES = 64
MAX_PATH_CHARS = 4096


class BadArguments(ValueError):
    """The call's arguments do not fit the tool's input schema."""


@dataclass(frozen=True)
class ToolContext:
    """What the tool list depends on besides the protocol revision."""

    settings: Settings
    interpreters: Tuple[str, ...]
    # False when the interpreter list is a guess (image not cached yet).
    interpreters_checked: bool
    open_world: bool


RUN_CODE_OUTPUT: Dict[str, Any] = {
    "type": "object",
    "properties": {
        "stdout": {"type": "string", "description": "What the code printed (cut to fit)."},
        "code_stderr": {"type": "string",
                        "description": "The code's stderr without kern's own notes (cut to fit)."},
        "exit_code": {"type": "integer", "description": "Exit status; 128+N for signal N."},
        "fault": {
            "description": "Set only when the sandbox stopped the code.",
            "type": ["object", "null"],
            "properties": {"type": {"type": "string"}, "message": {"type": "string"}},
            "required": ["type", "message"],
        },
        "files": {
            "type": "array",
            "description": "Workspace files this call created or modified "
                           "(empty unless the server tracks files).",
            "items": {
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "size": {"type": "integer"},
                    "change": {"type": "string", "enum": ["created", "modified"]},
                },
                "required": ["path", "size", "change"],
            },
        },
    },
    "required": ["stdout", "code_stderr", "exit_code", "fault", "files"],
}


def default_language(ctx: ToolContext) -> str:
    return "python" if "python" in ctx.interpreters else ctx.interpreters[0]


def _limits(s: Settings) -> str:
    mem = f"{s.memory_mb} MiB of memory" if s.memory_mb else "the profile's memory cap"
    return f"{mem}, {s.timeout_s:g} s per call"


def _run_code(ctx: ToolContext) -> Dict[str, Any]:
    s = ctx.settings
    langs = ", ".join(ctx.interpreters)
    checked = "" if ctx.interpreters_checked else " (not yet verified: the image is not cached)"
    net = ("Network: off." if not ctx.open_world
           else "Network: on (the operator enabled it).")
    if s.kernel:
        state = ("Python runs in one warm interpreter: variables, imports and other in-memory "
                 "state persist between python calls (until a sandbox fault restarts it); other "
                 "languages run in a fresh box each call.")
    else:
        state = ("Each call is a fresh box: in-memory state does not persist between calls, "
                 "but files in /workspace (the working directory) do.")
    desc = (f"Run code in a kern sandbox on the image {s.image}. Interpreters in this image: "
            f"{langs}{checked}. {state} {net} Limits: {_limits(s)}. Matplotlib figures and "
            "images of the last expression come back as images. Send plain code, no markdown "
            "fences.")
    return {
        "name": "run_code",
        "title": "Run code in a sandbox",
        "description": desc,
        "inputSchema": {
            "type": "object",
            "properties": {
                "code": {"type": "string", "description": "The source code to run."},
                "language": {"type": "string", "enum": list(ctx.interpreters),
                             "default": default_language(ctx),
                             "description": "The interpreter."},
                "timeout_s": {"type": "number", "exclusiveMinimum": 0,
                              "maximum": s.timeout_s,
                              "description": f"Wall-clock limit in seconds (at most "
                                             f"{s.timeout_s:g}, the default)."},
            },
            "required": ["code"],
            "additionalProperties": False,
        },
        "outputSchema": RUN_CODE_OUTPUT,
        "annotations": {"title": "Run code in a sandbox", "readOnlyHint": False,
                        "destructiveHint": True, "idempotentHint": False,
                        "openWorldHint": ctx.open_world},
    }


def _path_tool(name: str, title: str, desc: str, extra: Dict[str, Any],
               read_only: bool) -> Dict[str, Any]:
    props: Dict[str, Any] = {"path": {"type": "string",
                                      "description": "Path relative to /workspace."}}
    props.update(extra)
    annotations: Dict[str, Any] = {"title": title, "readOnlyHint": read_only,
                                   "openWorldHint": False}
    if not read_only:
        annotations.update(destructiveHint=True, idempotentHint=True)
    return {
        "name": name,
        "title": title,
        "description": desc,
        "inputSchema": {"type": "object", "properties": props,
                        "required": sorted(props), "additionalProperties": False},
        "annotations": annotations,
    }


def _install(ctx: ToolContext) -> Dict[str, Any]:
    domains = ", ".join(ctx.settings.install_allow)
    return {
        "name": "install_packages",
        "title": "Install Python packages",
        "description": ("pip install packages into /workspace/.deps, which every later "
                        "python call imports from. The install box reaches only these "
                        f"domains: {domains}; run_code itself stays network-off."),
        "inputSchema": {
            "type": "object",
            "properties": {"packages": {
                "type": "array", "minItems": 1, "maxItems": MAX_PACKAGES,
                "items": {"type": "string"},
                "description": "Requirement specifiers, e.g. \"pandas\" or \"numpy>=1.26\".",
            }},
            "required": ["packages"],
            "additionalProperties": False,
        },
        "annotations": {"title": "Install Python packages", "readOnlyHint": False,
                        "destructiveHint": False, "idempotentHint": True,
                        "openWorldHint": True},
    }


def definitions(ctx: ToolContext) -> List[Dict[str, Any]]:
    """Every tool, in the richest form (``shape`` trims it per revision)."""
    tools = [
        _run_code(ctx),
        _path_tool("write_file", "Write a workspace file",
                   "Write text to a file under /workspace (parent directories are created; "
                   "an existing file is replaced).",
                   {"content": {"type": "string", "description": "The text to write (UTF-8)."}},
                   read_only=False),
        _path_tool("read_file", "Read a workspace file",
                   "Read a file under /workspace: text comes back as text (cut to fit), "
                   "PNG, JPEG, GIF and WebP files as images.", {}, read_only=True),
        {
            "name": "list_files",
            "title": "List workspace files",
            "description": "List the regular files under /workspace with their sizes.",
            "inputSchema": {"type": "object", "properties": {}, "additionalProperties": False},
            "annotations": {"title": "List workspace files", "readOnlyHint": True,
                            "openWorldHint": False},
        },
    ]
    if ctx.settings.install_allow:
        tools.append(_install(ctx))
    return tools


def shape(tools: Sequence[Dict[str, Any]], features: Features) -> List[Dict[str, Any]]:
    """Drop the fields the negotiated revision does not define."""
    out = []
    for t in tools:
        t = dict(t)
        if not features.structured:
            t.pop("title", None)
            t.pop("outputSchema", None)
        if not features.annotations:
            t.pop("annotations", None)
        out.append(t)
    return out


def names(ctx: ToolContext) -> Tuple[str, ...]:
    base = ("run_code", "write_file", "read_file", "list_files")
    return base + (("install_packages",) if ctx.settings.install_allow else ())


@dataclass(frozen=True)
class RunCodeArgs:
    code: str
    language: str
    timeout_s: float


def check_arguments(tool: str, args: Any, ctx: ToolContext) -> Any:
    """The call's arguments as a typed value, or ``BadArguments``."""
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise BadArguments('"arguments" must be an object')
    allowed = {
        "run_code": ("code", "language", "timeout_s"),
        "write_file": ("path", "content"),
        "read_file": ("path",),
        "list_files": (),
        "install_packages": ("packages",),
    }[tool]
    extra = sorted(k for k in args if k not in allowed)
    if extra:
        raise BadArguments(f"{tool} takes no argument {extra[0]!r} "
                           f"(it takes: {', '.join(allowed) or 'none'})")
    if tool == "run_code":
        return _run_code_args(args, ctx)
    if tool in ("write_file", "read_file"):
        path = _string(args, "path")
        if not path or len(path) > MAX_PATH_CHARS or "\0" in path:
            raise BadArguments("path must be a non-empty relative path without NUL "
                               f"(at most {MAX_PATH_CHARS} characters)")
        if tool == "read_file":
            return path
        return path, _string(args, "content")
    if tool == "install_packages":
        return _packages(args)
    return None


def _string(args: Dict[str, Any], key: str) -> str:
    if key not in args:
        raise BadArguments(f"missing required argument {key!r}")
    value = args[key]
    if not isinstance(value, str):
        raise BadArguments(f"{key!r} must be a string")
    return value


def _run_code_args(args: Dict[str, Any], ctx: ToolContext) -> RunCodeArgs:
    code = _string(args, "code")
    if "\0" in code:
        raise BadArguments("code must not contain NUL characters")
    language = args.get("language", default_language(ctx))
    if language not in ctx.interpreters:
        raise BadArguments(f"language must be one of {', '.join(ctx.interpreters)} "
                           f"(the interpreters of {ctx.settings.image})")
    limit = ctx.settings.timeout_s
    timeout: Optional[Any] = args.get("timeout_s")
    if timeout is None:
        timeout = limit
    if (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
            or not math.isfinite(timeout) or not 0 < timeout <= limit):
        raise BadArguments(f"timeout_s must be a number of seconds in (0, {limit:g}]")
    return RunCodeArgs(code, language, float(timeout))


def _packages(args: Dict[str, Any]) -> Tuple[str, ...]:
    pkgs = args.get("packages")
    if not isinstance(pkgs, list) or not pkgs or len(pkgs) > MAX_PACKAGES:
        raise BadArguments(f"packages must be a list of 1 to {MAX_PACKAGES} requirement strings")
    for p in pkgs:
        if not isinstance(p, str) or not _REQUIREMENT.match(p.strip()):
            raise BadArguments(f"{p!r} is not a requirement specifier such as "
                               "'pandas' or 'numpy>=1.26' (no options, URLs or paths)")
    return tuple(p.strip() for p in pkgs)
