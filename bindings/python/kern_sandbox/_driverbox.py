"""A box whose workload is the kernel driver, seen from the host.

kernel() keeps one for many cells; the prewarm pool starts several and
gives each exactly one call. Both talk to it the same way: cell frames on
the box's stdin, JSON frames back on its stdout (spec 15.2), kern's own
lines on its stderr, the outcome bytes on KERN_STARTED_FD once kern exits.
When the driver stops answering, `death()` says why, from kern's exit
status and outcome bytes first (spec 12).
"""

from __future__ import annotations

import os
import select
import time
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

from . import _frames
from ._locate import Kern
from ._spawn import BoxProcess, _Streamer
from .faults import (Observation, SIGKILL, SIGSYS, is_oom, kern_is_speaking, killed_fault,
                     oom_fault, startup_fault)
from .results import SandboxFault

# Rich results kept per cell, as JSON: the one-shot runner's result file
# limit (spec 15.1).
RESULTS_CAP = 64 << 20
# kern's own stderr kept per box: its notes, a setup failure, the OOM
# sentence, the driver's last words. Anything past this is read and dropped.
KERN_STDERR_CAP = 64 << 10
# After the channel breaks: how long kern gets to exit, and to hand over
# its outcome bytes (spec 12: a 2 s select).
EXIT_WAIT_S = 5
OUTCOME_WAIT_S = 2
# Signals of a crash of python3 itself (SIGILL, SIGABRT, SIGBUS, SIGFPE,
# SIGSEGV): the interpreter died, the sandbox did not act.
CRASH_SIGNALS = {4: "SIGILL", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE", 11: "SIGSEGV"}

Callback = Callable[[str], None]


@dataclass
class Cell:
    """What one call on a driver box came to.

    ``reply`` is set when the driver answered. Otherwise ``failure`` says
    how the channel ended: "timeout" (the deadline passed), "eof" (the
    driver is gone), "oversize" or "malformed" (a reply the host refuses),
    with ``detail`` in words. ``stdout``/``stderr`` hold what was streamed
    before that, within the output cap.
    """

    reply: Optional[_frames.Reply] = None
    failure: Optional[str] = None
    detail: str = ""
    stdout: bytearray = field(default_factory=bytearray)
    stderr: bytearray = field(default_factory=bytearray)
    streamed_cut: bool = False
    duration_ms: int = 0


@dataclass(frozen=True)
class Death:
    """Why a driver box stopped answering (spec 12)."""

    fault: Optional[SandboxFault]
    raises: bool
    exit_code: int
    note: str = ""


class DriverBox:
    """One `kern box ... -- python3 <driver>` process and its channel."""

    def __init__(self, kern: Kern, argv: Sequence[str], name: str, *, out_cap: int,
                 reply_limit: int, no_scope: bool, memory_mb: Optional[int]) -> None:
        self.name = name
        self.out_cap = out_cap
        self.memory_mb = memory_mb
        self.box = BoxProcess(kern, argv, name, stdin_pipe=True, alive=False, no_scope=no_scope)
        proc = self.box.proc
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        self.stdin_fd = proc.stdin.fileno()
        # Writes wait in poll(), within the call's deadline: a driver that
        # stopped reading (a cell's thread holding the GIL in C code) must
        # not hang the host on a large cell.
        os.set_blocking(self.stdin_fd, False)
        self.out_poll = select.poll()
        self.out_poll.register(self.stdin_fd, select.POLLOUT)
        # kern's stderr is read whenever the host waits for a frame (and to
        # its end once kern exits): no thread per box, which would wake,
        # and take the GIL, when a used pool box is killed.
        self.err_fd = proc.stderr.fileno()
        os.set_blocking(self.err_fd, False)
        self.kern_err = bytearray()
        self.reader = _frames.FrameReader(proc.stdout.fileno(), reply_limit, self.err_fd,
                                          self._read_stderr)
        self.started_at = time.monotonic()

    def _read_stderr(self) -> bool:
        """Take what kern wrote on stderr; False at its end."""
        while True:
            try:
                data = os.read(self.err_fd, 1 << 16)
            except BlockingIOError:
                return True
            except OSError:
                return False
            if not data:
                return False
            room = KERN_STDERR_CAP - len(self.kern_err)
            if room > 0:
                self.kern_err += data[:room]

    def _finish_stderr(self) -> None:
        # kern has exited (or was killed): its stderr ends soon after.
        if self.err_fd < 0:
            return
        poller = select.poll()
        poller.register(self.err_fd, select.POLLIN)
        deadline = time.monotonic() + EXIT_WAIT_S
        while self._read_stderr():
            left = deadline - time.monotonic()
            if left <= 0 or not poller.poll(int(left * 1000) + 1):
                break

    def kern_stderr(self) -> str:
        """kern's lines so far (what it wrote before this call included)."""
        if self.err_fd >= 0:
            self._read_stderr()
        return bytes(self.kern_err).decode("utf-8", "replace")

    def wait_hello(self, timeout_s: float) -> Optional[str]:
        """Wait for {"hello": 1}: None when it came, else the failure kind."""
        deadline = time.monotonic() + timeout_s
        try:
            msg = _frames.decode(self.reader.read(deadline))
        except _frames.FrameTimeout:
            return "timeout"
        except _frames.FrameEOF:
            return "eof"
        except _frames.FrameError:
            return "malformed"
        return None if _frames.is_hello(msg) else "malformed"

    def call(self, code: str, timeout_s: float, on_stdout: Optional[Callback] = None,
             on_stderr: Optional[Callback] = None) -> Cell:
        """Send one cell and read until its reply, the deadline or the end."""
        t0 = time.monotonic()
        deadline = t0 + timeout_s
        cell = Cell()
        streamer = _Streamer(on_stdout, on_stderr) if (on_stdout or on_stderr) else None
        try:
            self._send(_frames.encode(code.encode("utf-8", "surrogatepass")), deadline)
            while True:
                msg = _frames.decode(self.reader.read(deadline))
                chunk = _frames.stream_text(msg)
                if chunk is None:
                    cell.reply = _frames.parse_reply(msg)
                    break
                kind, text = chunk
                data = text.encode("utf-8", "replace")
                buf = cell.stdout if kind == "o" else cell.stderr
                room = self.out_cap - len(buf)
                if room < len(data):
                    cell.streamed_cut = True
                if room > 0:
                    buf += data[:room]
                if streamer is not None:
                    streamer.offer(kind, data)
        except (BrokenPipeError, ConnectionResetError):
            cell.failure, cell.detail = "eof", "the kernel stopped reading"
        except _frames.FrameEOF as e:
            cell.failure, cell.detail = "eof", str(e)
        except _frames.FrameTimeout as e:
            cell.failure, cell.detail = "timeout", str(e)
        except _frames.FrameOversize as e:
            cell.failure, cell.detail = "oversize", str(e)
        except _frames.FrameMalformed as e:
            cell.failure, cell.detail = "malformed", str(e)
        finally:
            if streamer is not None:
                streamer.finish()
        cell.duration_ms = int((time.monotonic() - t0) * 1000)
        return cell

    def _send(self, data: bytes, deadline: float) -> None:
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(self.stdin_fd, view):]
                continue
            except BlockingIOError:
                pass
            left = deadline - time.monotonic()
            if left <= 0 or not self.out_poll.poll(int(left * 1000) + 1):
                raise _frames.FrameTimeout("the kernel did not read the cell before the deadline")

    def alive(self) -> bool:
        """kern still runs (checked without reaping it)."""
        return not self.box.exited()

    def kill(self) -> None:
        """SIGKILL kern's process group: kern drops the box by itself."""
        self.box.kill_group()

    def stop(self) -> None:
        """`kern stop NAME`, then SIGKILL the process group."""
        self.box.stop()

    def end(self, grace_s: float) -> None:
        """Close the box's stdin (the driver exits), wait up to grace_s,
        then stop and kill it; reap kern and close every descriptor."""
        try:
            if self.box.proc.stdin is not None:
                self.box.proc.stdin.close()
        except OSError:
            pass
        if self.box.wait(grace_s) is None:
            self.box.stop()
        self.reap_killed()

    def reap_killed(self) -> None:
        """After kill() or stop(): reap kern and close every descriptor."""
        if self.box.wait(EXIT_WAIT_S) is None:
            self.box.kill_group()
            self.box.wait(None)
        self._finish_stderr()
        self.box.close()
        self.err_fd = -1

    def observe(self) -> Observation:
        """The channel broke: let kern finish, read its outcome bytes and
        exit status. A kern that does not exit in time is killed (and then
        reports no bytes)."""
        status = self.box.wait(EXIT_WAIT_S)
        if status is None:
            self.box.stop()
            status = self.box.wait(EXIT_WAIT_S)
            if status is None:
                self.box.kill_group()
                status = self.box.wait(None)
        started = _read_outcome(self.box.started_r)
        self._finish_stderr()
        obs = Observation(exit_code=status if status is not None else 137, started=started,
                          stderr=self.kern_stderr(), memory_mb=self.memory_mb)
        self.box.close()
        self.err_fd = -1
        return obs


def _read_outcome(fd: int) -> bytes:
    # Up to 4 bytes, each waited for at most OUTCOME_WAIT_S in all.
    if fd < 0:
        return b""
    out = b""
    deadline = time.monotonic() + OUTCOME_WAIT_S
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    while len(out) < 4:
        left = deadline - time.monotonic()
        if left <= 0 or not poller.poll(int(left * 1000) + 1):
            break
        data = os.read(fd, 4 - len(out))
        if not data:
            break
        out += data
    return out


def classify_death(obs: Observation, *, one_call: bool) -> Death:
    """Why the driver stopped answering (spec 12), in this order: OOM, a
    blocked system call, a crash of python3, a box that never started, and
    otherwise a kill. ``one_call`` (a pool box) treats a clean exit as the
    cell's own exit status, as a one-shot run would report it."""
    started = obs.started
    signal = started[3] if len(started) > 3 else None
    if is_oom(obs):
        return Death(oom_fault(obs), False, 137)
    if signal == SIGSYS:
        return Death(SandboxFault("escape_blocked", "a system call the sandbox forbids was blocked: "
                                  "the seccomp filter killed the kernel with SIGSYS"), False, 159)
    if signal in CRASH_SIGNALS:
        name = CRASH_SIGNALS[signal]
        note = ("kern-sandbox: the kernel's python3 crashed with %s (signal %d); its in-memory "
                "state is lost" % (name, signal))
        return Death(None, False, 128 + signal, note)
    if not started and kern_is_speaking(obs.stderr):
        return Death(startup_fault(obs.stderr), True, obs.exit_code)
    if signal == 0 and len(started) > 3:
        if one_call:
            return Death(None, False, obs.exit_code)
        return Death(SandboxFault("killed", "the kernel's python3 exited (status %d) while the "
                                  "cell ran: os._exit(), a thread that ended the process, or a "
                                  "fatal interpreter error; its in-memory state is lost"
                                  % obs.exit_code), False, obs.exit_code)
    if obs.exit_code == 137 or signal == SIGKILL or not started:
        return Death(killed_fault(obs), False, 137)
    return Death(SandboxFault("killed", "the kernel ended with exit status %d (signal %s) "
                              "without answering" % (obs.exit_code, signal)), False, obs.exit_code)
