"""Starting a kern process and collecting what it leaves behind (spec §9).

``BoxProcess`` starts ``kern ...`` in a session of its own (so the whole
process group can be killed) with the outcome pipe (KERN_STARTED_FD) and,
for one-shot calls, the alive pipe (KERN_ALIVE_FD). ``collect`` then owns
the call until it ends: one poll loop reads stdout and stderr into buffers
capped at ``max_output_bytes`` (the rest is read and discarded, so a
flooding box can neither stall nor grow the host process) and waits for
kern on a pidfd until the deadline. The two report pipes are not polled
(kern writes a few bytes on each, which wait in the pipe): they are read
without blocking at the deadline and once kern is gone, so the caller wakes
for the end of the call, not also while the box starts. At the deadline it
records whether kern was still setting the box up, runs ``kern stop``,
kills the process group and reaps.

Kernel and pool boxes (stdin a pipe) use ``BoxProcess`` and run their own
protocol over its pipes.
"""

from __future__ import annotations

import codecs
import os
import queue
import select
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence

from ._locate import Kern

READ_CHUNK = 1 << 16
STOP_TIMEOUT_S = 5        # `kern stop` after the deadline
DRAIN_S = 8               # readers after kern exited or was killed
REAP_S = 8                # waiting for kern itself after the kill
STREAM_QUEUE = 64         # chunks held for slow on_stdout/on_stderr callbacks
STREAM_JOIN_S = 5         # how long a call waits for its callbacks to catch up
STARTED_MAX = 4           # outcome bytes kern writes on KERN_STARTED_FD
ALIVE_MAX = 64            # kept of what it writes on KERN_ALIVE_FD
DRAIN_READS = 16          # reads of a report pipe per drain (kern writes a few bytes)

Callback = Callable[[str], None]


def exit_status(returncode: Optional[int]) -> int:
    """Popen's returncode as a shell reports it: signal N -> 128+N."""
    if returncode is None:
        return 137
    return 128 - returncode if returncode < 0 else returncode


class BoxProcess:
    """One running ``kern`` process and the pipes it reports on.

    ``stdin_pipe`` gives the box a pipe on stdin (kernel and pool boxes);
    otherwise stdin is /dev/null. ``alive`` passes KERN_ALIVE_FD.
    ``no_scope`` sets KERN_NO_SCOPE=1 (``enforce_limits=False``).
    ``pass_fds``: more descriptors kern inherits at the same numbers (an
    env-file given as /proc/self/fd/N); the caller keeps and closes them.
    """

    def __init__(self, kern: Kern, argv: Sequence[str], name: str, *, stdin_pipe: bool = False,
                 alive: bool = True, no_scope: bool = False,
                 pass_fds: Sequence[int] = ()) -> None:
        self.kern = kern
        self.name = name
        self.argv = [kern.path] + list(argv)
        self.started_r, started_w = os.pipe()
        self.alive_r: Optional[int] = None
        alive_w = -1
        if alive:
            self.alive_r, alive_w = os.pipe()
        # The caller's environment as bytes: os.environ would decode every
        # value here for Popen to encode it back (with 37 variables, 56-72
        # against 41-53 us per call).
        env = dict(os.environb)
        env[b"KERN_STARTED_FD"] = b"%d" % started_w
        env.pop(b"KERN_ALIVE_FD", None)
        if alive:
            env[b"KERN_ALIVE_FD"] = b"%d" % alive_w
        if no_scope:
            env[b"KERN_NO_SCOPE"] = b"1"
        else:
            env.pop(b"KERN_NO_SCOPE", None)
        fds = (started_w, alive_w) if alive else (started_w,)
        self.t0 = time.monotonic()
        try:
            self.proc = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE if stdin_pipe else subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, pass_fds=fds + tuple(pass_fds),
                env=env,
                start_new_session=True, bufsize=0)
        except BaseException:
            for fd in (self.started_r, started_w, self.alive_r, alive_w):
                if fd is not None and fd >= 0:
                    os.close(fd)
            raise
        for fd in fds:
            os.close(fd)
        self.pidfd: Optional[int] = None
        if hasattr(os, "pidfd_open"):
            try:
                self.pidfd = os.pidfd_open(self.proc.pid)
            except OSError:
                self.pidfd = None
        self._reaped = False

    @property
    def pid(self) -> int:
        return self.proc.pid

    def kill_group(self) -> None:
        """SIGKILL kern's whole process group, then kern itself. Safe until
        kern is reaped: an unreaped pid cannot be reused."""
        if self._reaped:
            return
        for kill in (lambda: os.killpg(self.proc.pid, signal.SIGKILL),
                     lambda: os.kill(self.proc.pid, signal.SIGKILL)):
            try:
                kill()
            except OSError:
                pass

    def stop(self) -> None:
        """``kern stop NAME`` (bounded), then kill the process group."""
        if not self._reaped:
            try:
                subprocess.run([self.kern.path, "stop", self.name], stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               timeout=STOP_TIMEOUT_S, check=False)
            except (subprocess.TimeoutExpired, OSError):
                pass
        self.kill_group()

    def exited(self) -> bool:
        """kern has exited. Never reaps it (WNOWAIT): until wait() does,
        its pid, and so its process group, cannot be reused."""
        if self._reaped or self.proc.returncode is not None:
            return True
        try:
            info = os.waitid(os.P_PID, self.proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return True
        return info is not None

    def wait(self, timeout: Optional[float]) -> Optional[int]:
        """Reap kern; its exit status (128+N for signals), or None if it is
        still running after ``timeout``."""
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
        self._reaped = True
        return exit_status(self.proc.returncode)

    def close(self) -> None:
        """Close every descriptor this object still holds."""
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if f is not None:
                try:
                    f.close()
                except OSError:
                    pass
        for fd in (self.started_r, self.alive_r, self.pidfd):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self.alive_r = self.pidfd = None
        self.started_r = -1


@dataclass
class Captured:
    """What ``collect`` gathered from one finished (or killed) kern."""

    exit_code: int
    stdout: bytes
    stderr: bytes
    truncated: bool
    started: bytes
    alive: Optional[bytes]
    alive_open: bool
    deadline_fired: bool
    duration_ms: int


class _Streamer:
    """Delivers output chunks to on_stdout/on_stderr on a thread of its own,
    through a bounded queue: a lagging callback loses chunks, the box and
    the captured output never wait for it."""

    def __init__(self, on_stdout: Optional[Callback], on_stderr: Optional[Callback]) -> None:
        self.callbacks = {"o": on_stdout, "e": on_stderr}
        self.queue: "queue.Queue[Optional[tuple]]" = queue.Queue(STREAM_QUEUE)
        self.thread = threading.Thread(target=self._run, name="kern-stream", daemon=True)
        self.thread.start()

    def offer(self, kind: str, data: bytes) -> None:
        if self.callbacks[kind] is None:
            return
        try:
            self.queue.put_nowait((kind, data))
        except queue.Full:
            pass

    def _run(self) -> None:
        decoders = {k: codecs.getincrementaldecoder("utf-8")("replace") for k in "oe"}
        while True:
            item = self.queue.get()
            final = item is None
            for kind, data in ([(k, b"") for k in "oe"] if final else [item]):
                text = decoders[kind].decode(data, final)
                callback = self.callbacks[kind]
                if text and callback is not None:
                    try:
                        callback(text)
                    except Exception:  # a failing callback must not fail the call
                        pass
            if final:
                return

    def finish(self) -> None:
        try:
            self.queue.put(None, timeout=STREAM_JOIN_S)
        except queue.Full:
            return
        self.thread.join(STREAM_JOIN_S)


def collect(box: BoxProcess, *, timeout_s: float, max_output_bytes: int,
            on_stdout: Optional[Callback] = None,
            on_stderr: Optional[Callback] = None) -> Captured:
    """Run ``box`` to its end or to the deadline and return what it left."""
    deadline = box.t0 + timeout_s
    bufs: Dict[str, bytearray] = {"o": bytearray(), "e": bytearray(), "s": bytearray(),
                                  "a": bytearray()}
    truncated = False
    streamer = _Streamer(on_stdout, on_stderr) if (on_stdout or on_stderr) else None
    kinds: Dict[int, str] = {}
    poller = select.poll()
    assert box.proc.stdout is not None and box.proc.stderr is not None
    for fd, kind in ((box.proc.stdout.fileno(), "o"), (box.proc.stderr.fileno(), "e"),
                     (box.started_r, "s"), (box.alive_r, "a")):
        if fd is not None and fd >= 0:
            os.set_blocking(fd, False)
            if kind in "oe":
                poller.register(fd, select.POLLIN)
                kinds[fd] = kind
    if box.pidfd is not None:
        poller.register(box.pidfd, select.POLLIN)
    exited = fired = False
    alive_open = False
    alive_at_deadline: Optional[bytes] = None
    drain_until: Optional[float] = None

    def read(fd: int) -> None:
        nonlocal truncated
        kind = kinds[fd]
        try:
            data = os.read(fd, READ_CHUNK)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            poller.unregister(fd)
            del kinds[fd]
            return
        buf = bufs[kind]
        room = max_output_bytes - len(buf)
        if room < len(data):
            truncated = True
        if room > 0:
            buf += data[:room]
            if streamer is not None:
                streamer.offer(kind, data[:room])

    while kinds or not exited:
        now = time.monotonic()
        if not fired and not exited and now >= deadline:
            fired = True
            alive_open = box.alive_r is not None and not _drain(box.alive_r, bufs["a"], ALIVE_MAX)
            alive_at_deadline = bytes(bufs["a"])
            box.stop()
            drain_until = time.monotonic() + DRAIN_S
            continue
        if exited and drain_until is None:
            drain_until = now + DRAIN_S
        if drain_until is not None and now >= drain_until:
            break
        limit = drain_until if fired else (min(deadline, drain_until) if drain_until else deadline)
        wait_ms = max(0, int((limit - now) * 1000) + 1)
        if box.pidfd is None and not exited:
            wait_ms = min(wait_ms, 20)
        for fd, _ in poller.poll(wait_ms):
            if fd == box.pidfd:
                exited = True
                poller.unregister(fd)
            elif fd in kinds:
                read(fd)
        if box.pidfd is None and not exited and box.wait(0) is not None:
            exited = True

    status = box.wait(REAP_S if (fired or exited) else 0)
    if status is None:
        box.kill_group()
        status = box.wait(REAP_S)
    # kern is gone: what it wrote on the report pipes is all there is.
    _drain(box.started_r, bufs["s"], STARTED_MAX)
    if box.alive_r is not None and not fired:
        _drain(box.alive_r, bufs["a"], ALIVE_MAX)
    if streamer is not None:
        streamer.finish()
    duration_ms = int((time.monotonic() - box.t0) * 1000)
    box.close()
    # An older kern writes nothing on the alive pipe: no bytes means no
    # information, not "still in setup".
    alive = (alive_at_deadline if fired else bytes(bufs["a"])) or None
    return Captured(
        exit_code=exit_status(None) if status is None else status,
        stdout=bytes(bufs["o"]), stderr=bytes(bufs["e"]), truncated=truncated,
        started=bytes(bufs["s"]), alive=alive, alive_open=alive_open,
        deadline_fired=fired, duration_ms=duration_ms)


def _drain(fd: int, buf: bytearray, limit: int) -> bool:
    """Read what waits in a non-blocking report pipe into ``buf`` (at most
    ``limit`` bytes kept); True once its writers are all closed."""
    if fd < 0:
        return True
    for _ in range(DRAIN_READS):
        try:
            data = os.read(fd, READ_CHUNK)
        except BlockingIOError:
            return False
        except OSError:
            return True
        if not data:
            return True
        room = limit - len(buf)
        if room > 0:
            buf += data[:room]
    return False


def run_quiet(kern: Kern, argv: List[str], timeout_s: float) -> Optional[int]:
    """Run a kern subcommand with all stdio on /dev/null (``kern pull``,
    ``kern recover``); its exit status, or None on timeout."""
    try:
        proc = subprocess.Popen([kern.path] + argv, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
    except OSError:
        return None
    try:
        return exit_status(proc.wait(timeout_s))
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        proc.wait()
        return None
