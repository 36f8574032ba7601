"""What a call returns: ExecutionResult and the records it carries."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional

# The fault types, in the order one-shot classification tries them.
FAULT_TYPES = ("timeout", "oom", "escape_blocked", "killed", "startup_failed", "exec_failed")


@dataclass(frozen=True)
class SandboxFault:
    """The sandbox acted on the call.

    ``type`` is one of ``timeout`` (the deadline ended it), ``oom`` (the
    kernel's OOM killer, at the box's own memory cap: kern reads this from
    the box cgroup's counter, so it is a certainty, not a guess),
    ``escape_blocked`` (the seccomp filter killed a blocked system call),
    ``killed`` (SIGKILL that is not a confirmed OOM), ``startup_failed``
    (kern could not start the box) and ``exec_failed`` (the box started but
    the command could not be executed in it). ``message`` says what happened
    in one or two sentences.
    """

    type: str
    message: str


@dataclass(frozen=True)
class FileInfo:
    """A regular file of the workspace.

    ``path`` is relative to the workspace. In ``ExecutionResult.files``,
    ``change`` is ``"created"`` or ``"modified"`` by that call; from
    ``Sandbox.list_files()`` it is None.
    """

    path: str
    size: int
    change: Optional[str] = None


@dataclass(frozen=True)
class Result:
    """One rich value a Python call produced, as a mime bundle.

    ``data`` maps mime types to strings (images base64-encoded):
    ``text/plain`` always (the value's repr), and any of ``text/html``,
    ``text/markdown``, ``image/svg+xml``, ``text/latex``,
    ``application/json``, ``image/png``, ``image/jpeg`` the value offers.
    A trailing bare expression, each ``display(obj)`` and every open
    matplotlib figure produce one Result each, in that order of appearance
    (figures last).
    """

    data: Dict[str, str] = field(default_factory=dict)

    def _get(self, mime: str) -> Optional[str]:
        return self.data.get(mime)

    @property
    def text(self) -> Optional[str]:
        """``text/plain``: the repr of the value."""
        return self._get("text/plain")

    @property
    def html(self) -> Optional[str]:
        """``text/html`` (a pandas DataFrame's table, for one)."""
        return self._get("text/html")

    @property
    def markdown(self) -> Optional[str]:
        """``text/markdown``."""
        return self._get("text/markdown")

    @property
    def svg(self) -> Optional[str]:
        """``image/svg+xml``, as text."""
        return self._get("image/svg+xml")

    @property
    def latex(self) -> Optional[str]:
        """``text/latex``."""
        return self._get("text/latex")

    @property
    def json(self) -> Optional[str]:
        """``application/json``, as JSON text."""
        return self._get("application/json")

    @property
    def png(self) -> Optional[str]:
        """``image/png``, base64 (a matplotlib figure, for one)."""
        return self._get("image/png")

    @property
    def jpeg(self) -> Optional[str]:
        """``image/jpeg``, base64."""
        return self._get("image/jpeg")


@dataclass
class ExecutionResult:
    """The outcome of one call.

    ``fault`` is set ONLY when the sandbox acted (see SandboxFault); an
    exception in the code is ``exit_code != 0`` with its traceback in
    ``stderr`` and ``fault`` None. Branch on ``fault``, not on
    ``exit_code``: a box that never ran exits 1 like a failing script.

    ``stderr`` holds kern's own lines and the program's, in order;
    ``code_stderr`` is the same text without kern's ``note:``,
    ``warning:`` and security-profile lines (what a model should see) and
    ``runtime_notes`` exactly the lines removed. ``exit_code`` is the
    process status, 128+N for signal N. ``files`` lists workspace files the
    call created or modified (``.deps`` and the package's scratch files
    excluded). ``results`` holds rich values (Python only). ``truncated``
    says stdout or stderr went over ``max_output_bytes`` and the rest was
    discarded. ``success`` is ``exit_code == 0 and fault is None``.
    """

    stdout: str
    stderr: str
    exit_code: int
    duration_ms: int
    fault: Optional[SandboxFault] = None
    files: List[FileInfo] = field(default_factory=list)
    results: List[Result] = field(default_factory=list)
    truncated: bool = False
    code_stderr: str = ""
    runtime_notes: List[str] = field(default_factory=list)
    success: bool = field(init=False)

    def __post_init__(self) -> None:
        self.success = self.exit_code == 0 and self.fault is None
