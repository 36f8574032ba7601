"""Deciding whether the sandbox acted on a call (spec §10) and splitting
kern's own stderr lines from the program's (§11).

Everything here is a pure function of what kern left behind: the exit
status, the outcome bytes of KERN_STARTED_FD, the alive pipe, stdout and
stderr. The exit status and the outcome bytes come first, because stderr
is shared with the workload, which can print anything; a line on stderr
only decides a verdict where nothing the workload controls could have
produced the same bytes (see clear_forged below).

bindings/shared/fault-cases.json holds the cases both bindings must agree
on; tests/test_faults.py runs it against this module.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List, Optional, Tuple

from .results import SandboxFault

# Lines kern writes about itself that are not the program's: they move
# from code_stderr to runtime_notes.
DIAGNOSTIC_PREFIXES = ("kern: note:", "kern: warning:", "kern: security-profile=")
# box-cli.md §6.2: clients match this substring of the OOM sentence.
OOM_SENTENCE = "killed by the kernel's OOM killer"
EXEC_FAILURE = re.compile(r"^kern: cannot start '([^']+)' in box: ([^\n]*)", re.M)
SETUP_FAILURE = "sandbox setup failed"
# Where one-shot startup_failed messages are cut.
MESSAGE_LIMIT = 500
# Signals that name a crash of the program rather than an act of the sandbox.
SIGKILL, SIGTERM, SIGSYS = 9, 15, 31


def split_stderr(stderr: str) -> Tuple[str, List[str]]:
    """Split stderr on ``\\n`` into (code_stderr, runtime_notes).

    A line whose left-stripped text starts ``kern: note:``, ``kern:
    warning:`` or ``kern: security-profile=`` is a runtime note; the other
    lines, rejoined with ``\\n``, are code_stderr (``hint:`` lines stay).
    """
    code: List[str] = []
    notes: List[str] = []
    for line in stderr.split("\n"):
        (notes if line.lstrip().startswith(DIAGNOSTIC_PREFIXES) else code).append(line)
    return "\n".join(code), notes


def is_diagnostic(line: str) -> bool:
    """True for a note, warning or security-profile banner line."""
    return line.lstrip().startswith(DIAGNOSTIC_PREFIXES)


def kern_is_speaking(stderr: str) -> bool:
    """True when stderr carries a line only kern writes on a failure.

    That is a column-0 line starting ``error: `` or ``kern:`` that is
    neither a diagnostic nor the OOM sentence, or any line containing
    ``sandbox setup failed``.
    """
    for line in stderr.split("\n"):
        if SETUP_FAILURE in line:
            return True
        if line.startswith(("error: ", "kern:")) and not is_diagnostic(line) \
                and OOM_SENTENCE not in line:
            return True
    return False


def exec_failure(stderr: str) -> Optional[Tuple[str, str]]:
    """(command, reason) of kern's ``cannot start`` line, if stderr has one."""
    m = EXEC_FAILURE.search(stderr)
    return (m.group(1), m.group(2)) if m else None


@dataclass(frozen=True)
class Observation:
    """What one kern process left behind.

    ``started`` holds the 0 to 4 outcome bytes read from KERN_STARTED_FD
    after kern exited (empty: the box never started, or kern died first).
    ``alive`` holds the bytes read from KERN_ALIVE_FD (None when the call
    did not pass one) and ``alive_open`` whether its writer was still open
    when it was read: at the binding's deadline, ``b"A"`` with the writer
    open means kern was still setting the box up. ``resident_exec`` marks a
    ``kern exec`` into a resident box; ``exec_reports_start`` whether that
    kern writes outcome bytes for exec (version >= 0.30.2).
    """

    exit_code: int
    started: bytes = b""
    stdout: str = ""
    stderr: str = ""
    deadline_fired: bool = False
    alive: Optional[bytes] = None
    alive_open: bool = False
    resident_exec: bool = False
    exec_reports_start: bool = True
    memory_mb: Optional[int] = None
    timeout_s: float = 0.0
    image: str = ""


@dataclass(frozen=True)
class Verdict:
    """The classification: the fault (or None), whether the call must raise
    SandboxError instead of returning, and the exit code to report."""

    fault: Optional[SandboxFault]
    raises: bool
    exit_code: int


def _byte(started: bytes, i: int) -> Optional[int]:
    return started[i] if len(started) > i else None


def _fmt_seconds(t: float) -> str:
    return ("%g" % t) if t else "?"


def still_in_setup(alive: Optional[bytes], alive_open: bool) -> bool:
    """box-cli.md §5: only ``A`` with the writer still open = still in setup."""
    return alive == b"A" and alive_open


def is_oom(obs: Observation) -> bool:
    """137 with the signal byte absent or 9, and kern's OOM byte set; or,
    from a kern too old for byte 2, kern wrote something and printed the OOM
    sentence. kern reads the box cgroup's own OOM counter for byte 2, so
    this is a certainty, not an inference from SIGKILL."""
    if obs.exit_code != 137 or _byte(obs.started, 3) not in (None, SIGKILL):
        return False
    oom_byte = _byte(obs.started, 2)
    if oom_byte is not None:
        return oom_byte == 1
    return len(obs.started) >= 1 and OOM_SENTENCE in obs.stderr


def oom_fault(obs: Observation) -> SandboxFault:
    cap = "%d MiB " % obs.memory_mb if obs.memory_mb else ""
    return SandboxFault("oom", "the kernel's OOM killer killed the box at its %smemory cap "
                        "(kern read the box cgroup's own OOM counter: this is certain, not a "
                        "guess); raise memory_mb if the code needs more" % cap)


def killed_fault(obs: Observation) -> SandboxFault:
    """The wording of a SIGKILL that is not a confirmed OOM."""
    enforcement, oom_byte = _byte(obs.started, 1), _byte(obs.started, 2)
    if not obs.started:
        why = "kern itself was killed before it reported an outcome (an external kill)"
    elif enforcement == 2:
        why = ("the memory cap was requested but is NOT enforced on this host, so this may "
               "be the host's OOM killer or an external kill")
    elif oom_byte is None and obs.memory_mb:
        why = "likely OOM at the memory cap, unconfirmed (this kern does not report OOM kills)"
    elif enforcement == 0 or not obs.memory_mb:
        why = ("the box had no memory cap of its own, so this was an external kill or the "
               "host's OOM killer")
    else:
        why = "not by the OOM killer (the box cgroup counted none): an external kill"
    return SandboxFault("killed", "the box was killed by SIGKILL: " + why)


def _one_shot(obs: Observation) -> Optional[SandboxFault]:
    """Steps 2-6 of the one-shot order: exit code before stderr."""
    signal = _byte(obs.started, 3)
    code = obs.exit_code
    if code == 159 and signal in (None, SIGSYS):
        return SandboxFault("escape_blocked", "a system call the sandbox forbids was blocked: "
                            "the seccomp filter killed the process with SIGSYS")
    if code == 137 and signal in (None, SIGKILL):
        return oom_fault(obs) if is_oom(obs) else killed_fault(obs)
    if code == 143 and signal in (None, SIGTERM):
        return SandboxFault("timeout", "kern's own --timeout, the backstop behind the "
                            "binding's deadline, ended the box with SIGTERM")
    if code != 0 and kern_is_speaking(obs.stderr):
        return startup_fault(obs.stderr)
    return None


def startup_fault(stderr: str) -> SandboxFault:
    """startup_failed whose message is stderr minus diagnostics, cut at 500."""
    text = split_stderr(stderr)[0].strip()
    return SandboxFault("startup_failed", text[:MESSAGE_LIMIT] or "kern could not start the box")


def _exec_failed(obs: Observation) -> Optional[SandboxFault]:
    """kern's ``cannot start`` line with a non-zero exit, unless the alive
    pipe proves the workload ran (kern writes ``x`` there on the failure;
    a workload printing the same line leaves EOF after ``A``)."""
    found = exec_failure(obs.stderr)
    if obs.exit_code == 0 or found is None:
        return None
    if obs.alive is not None and b"x" not in obs.alive:
        return None
    cmd, reason = found
    where = "image '%s'" % obs.image if obs.image else "the box"
    if "No such file or directory" in reason:
        text = "'%s' was not found in %s (%s)" % (cmd, where, reason)
    elif "Permission denied" in reason:
        text = "'%s' is not executable in %s (%s)" % (cmd, where, reason)
    else:
        text = "'%s' could not be started in %s (%s)" % (cmd, where, reason)
    return SandboxFault("exec_failed", text)


def classify(obs: Observation) -> Verdict:
    """Classify one one-shot (``kern box``) or resident (``kern exec``) call."""
    if obs.deadline_fired:
        if still_in_setup(obs.alive, obs.alive_open):
            return Verdict(SandboxFault("startup_failed", "the box was still being set up "
                                        "(e.g. pulling its image) when the %ss time limit ran "
                                        "out" % _fmt_seconds(obs.timeout_s)), False, 137)
        return Verdict(SandboxFault("timeout", "exceeded the %ss time limit (killed by the "
                                    "binding)" % _fmt_seconds(obs.timeout_s)), False, 137)

    fault = _one_shot(obs)
    never_started = not obs.started and (not obs.resident_exec or obs.exec_reports_start)
    if obs.exit_code == 0 and never_started and not obs.stdout and not obs.stderr:
        fault = SandboxFault("startup_failed", "kern exited 0 but never signalled that a box "
                             "started")
    failed_exec = _exec_failed(obs)
    if failed_exec is not None:
        fault = failed_exec
    # A box that started (byte 0 = 1) or printed on stdout was not refused
    # by kern: its "error:" or "kern:" lines were the workload's own.
    if fault is not None and fault.type == "startup_failed" and \
            (_byte(obs.started, 0) == 1 or obs.stdout):
        fault = None
    if obs.resident_exec and obs.exec_reports_start and not obs.started and obs.exit_code != 0:
        fault = startup_fault(obs.stderr) if obs.stderr.strip() else \
            SandboxFault("startup_failed", "kern exec did not enter the box")
    raises = fault is not None and fault.type == "startup_failed" and obs.exit_code == 125
    return Verdict(fault, raises, obs.exit_code)
