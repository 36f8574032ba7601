"""kernel(): one warm python3 in a long-lived box (spec 12).

Cells share one interpreter, so in-memory state persists between them and
a cell costs a fraction of a millisecond instead of a CPython start. That
is the trade: cells share one process and one box. A fault (the deadline,
the memory cap, a blocked system call) tears the whole kernel down; the
result of that cell says so and every later call raises SandboxError.
Workspace files survive, as do files in /tmp until the kernel ends.
"""

from __future__ import annotations

import os
import secrets
import threading
from typing import TYPE_CHECKING, List, Optional

from . import _frames, _inbox
from ._config import check_timeout
from ._driverbox import RESULTS_CAP, Cell, Death, DriverBox, classify_death
from ._spawn import Callback
from .errors import SandboxError
from .faults import exec_failure, split_stderr
from .results import ExecutionResult, FileInfo, Result, SandboxFault
from .rules import WORKSPACE

if TYPE_CHECKING:
    from .sandbox import OnStart, Sandbox

# kern's --timeout of a kernel box: a day, plus the usual 5 s backstop.
KERNEL_KERN_TIMEOUT = 86405
# How long a kernel may take to start (a cached image: well under a second).
HELLO_TIMEOUT_S = 120
# close(): how long the driver gets to exit after its stdin closes.
CLOSE_GRACE_S = 3


class Kernel:
    """One warm python3 in a long-lived box; get one from ``Sandbox.kernel()``.

        with kern.Sandbox() as sbx, sbx.kernel() as k:
            k.run_code("import numpy as np; a = np.arange(10)")
            k.run_code("a.sum()").results[0].text        # '45'

    Cells run one at a time in the same interpreter, in the box's
    /workspace, with the Sandbox's limits (memory, pids, network off, ...).
    ``run_code`` returns an ExecutionResult like ``Sandbox.run_code``: the
    cell's stdout and stderr (also what subprocesses and ``os.write(1, ...)``
    print), its exit status (1 for an uncaught exception, SystemExit's
    code), rich ``results``, ``files``. A fault tears the kernel down and is
    reported on that cell; after it, and after ``close()``, calls raise
    SandboxError. A kernel holds its box until ``close()`` (or the end of
    the ``with`` block, or of its Sandbox).
    """

    def __init__(self, sandbox: "Sandbox") -> None:
        self._sandbox = sandbox
        self._lock = threading.Lock()
        self._dead: Optional[str] = None
        self._closed = False
        cfg = sandbox.config
        ws = sandbox._workspace()
        script = ".kernel-%s.py" % secrets.token_hex(4)
        env_file = sandbox.env_file_path()
        ws.create_scratch(script, _inbox.driver_source(cfg.max_output_bytes, RESULTS_CAP, True)
                          .encode("utf-8"))
        try:
            req = sandbox.box_request(["python3", "%s/%s" % (WORKSPACE, script)], cfg.timeout_s,
                                      env_file=env_file, kern_timeout=KERNEL_KERN_TIMEOUT)
            sandbox.write_env_file(req)
            self._box = DriverBox(sandbox._kern, sandbox.box_argv(req), req.name,
                                  out_cap=cfg.max_output_bytes,
                                  reply_limit=_frames.reply_cap(cfg.max_output_bytes, RESULTS_CAP),
                                  no_scope=not cfg.enforce_limits, memory_mb=cfg.memory_mb)
            failure = self._box.wait_hello(HELLO_TIMEOUT_S)
        finally:
            # Both were read when python3 started (or will never be).
            _unlink(env_file)
            ws.remove_scratch(script)
        if failure is not None:
            self._closed = True
            raise SandboxError("kernel() could not start: " + self._start_failure(failure))

    def _start_failure(self, failure: str) -> str:
        if failure == "timeout":
            self._box.stop()
            self._box.reap_killed()
            return "the box did not start within %d s" % HELLO_TIMEOUT_S
        if failure == "malformed":
            self._box.stop()
        obs = self._box.observe()
        found = exec_failure(obs.stderr)
        if found is not None:
            return "'%s' could not be started in image '%s' (%s)" % (
                found[0], self._sandbox.config.image, found[1])
        death = classify_death(obs, one_call=False)
        text = split_stderr(obs.stderr)[0].strip()
        if death.fault is not None and death.fault.type == "startup_failed":
            return death.fault.message
        why = death.fault.message if death.fault else death.note
        return "%s (kern exit %d)%s" % (why, obs.exit_code, (": " + text[-500:]) if text else "")

    def __enter__(self) -> "Kernel":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def alive(self) -> bool:
        """True until a fault tore the kernel down or it was closed."""
        return not self._closed and self._dead is None

    def run_code(self, code: str, timeout_s: Optional[float] = None, *,
                 on_stdout: Optional[Callback] = None,
                 on_stderr: Optional[Callback] = None,
                 on_start: Optional[OnStart] = None) -> ExecutionResult:
        """Run ``code`` as the next cell of this interpreter.

        ``timeout_s`` overrides the Sandbox's limit for this cell; past it
        the kernel is killed (fault ``timeout``). ``on_stdout``/``on_stderr``
        receive output as it arrives (best-effort, as for Sandbox.run_code).
        ``on_start`` is called with a ``stop()`` function before the cell
        is sent: calling it from another thread kills the kernel, and the
        cell returns with a ``killed`` fault. Raises SandboxError once the
        kernel is dead or closed.
        """
        if not isinstance(code, str):
            raise SandboxError("code must be a str, not %s" % type(code).__name__)
        limit = self._sandbox.config.timeout_s if timeout_s is None else check_timeout(timeout_s)
        with self._lock:
            if self._closed:
                raise SandboxError("this kernel is closed; open a new one with Sandbox.kernel()")
            if self._dead is not None:
                raise SandboxError("kernel is dead (%s); only workspace files survive: open a "
                                   "new one with Sandbox.kernel()" % self._dead)
            ws = self._sandbox._workspace()
            track = self._sandbox.config.track_files
            before = ws.stamps() if track else {}
            if on_start is not None:
                on_start(self._box.stop)
            cell = self._box.call(code, limit, on_stdout, on_stderr)
            if cell.reply is not None:
                result = _from_reply(cell)
            else:
                result = self._fault(cell, limit)
            if track:
                result.files = ws.changes(before, ws.stamps())
            return result

    def _fault(self, cell: Cell, limit: float) -> ExecutionResult:
        """The cell got no reply: the kernel is torn down, and why is the
        cell's result (or, for a box that never started, SandboxError)."""
        if cell.failure == "eof":
            death = classify_death(self._box.observe(), one_call=False)
        else:
            self._box.stop()
            self._box.reap_killed()
            if cell.failure == "timeout":
                death = Death(SandboxFault("timeout", "exceeded the %gs time limit (killed by the "
                                           "binding)" % limit), False, 137)
            else:
                death = Death(SandboxFault("killed", "the kernel sent a reply the binding refuses "
                                           "(%s); it was killed" % cell.detail), False, 137)
        self._dead = death.fault.type if death.fault is not None else "its python3 crashed"
        if death.raises:
            assert death.fault is not None
            raise SandboxError("kernel is dead: " + death.fault.message)
        return _from_death(cell, death, self._box.kern_stderr())

    def close(self) -> None:
        """End the kernel: its stdin closes, it gets 3 s to exit, then
        ``kern stop`` and SIGKILL. A cell running on another thread is
        stopped first (it returns a ``killed`` fault). Idempotent."""
        if not self._lock.acquire(blocking=False):
            if not self._closed and self._dead is None:
                self._box.stop()
            self._lock.acquire()
        try:
            if self._closed:
                return
            self._closed = True
            if self._dead is None:
                self._box.end(CLOSE_GRACE_S)
        finally:
            self._lock.release()


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def _from_reply(cell: Cell) -> ExecutionResult:
    reply = cell.reply
    assert reply is not None
    code_stderr, notes = split_stderr(reply.stderr)
    return ExecutionResult(
        stdout=reply.stdout, stderr=reply.stderr, exit_code=reply.rc, duration_ms=cell.duration_ms,
        results=[Result(dict(b)) for b in reply.results], truncated=reply.trunc,
        code_stderr=code_stderr, runtime_notes=notes)


def _from_death(cell: Cell, death: Death, kern_stderr: str) -> ExecutionResult:
    """What the cell printed before the end, then kern's lines and a note."""
    stderr = _text(bytes(cell.stderr))
    for extra in (kern_stderr, death.note):
        if extra:
            if stderr and not stderr.endswith("\n"):
                stderr += "\n"
            stderr += extra if extra.endswith("\n") else extra + "\n"
    code_stderr, notes = split_stderr(stderr)
    files: List[FileInfo] = []
    return ExecutionResult(
        stdout=_text(bytes(cell.stdout)), stderr=stderr, exit_code=death.exit_code,
        duration_ms=cell.duration_ms, fault=death.fault, files=files,
        truncated=cell.streamed_cut, code_stderr=code_stderr, runtime_notes=notes)


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
