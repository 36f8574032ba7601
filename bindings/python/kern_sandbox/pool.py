"""prewarm=N: boxes started before the calls that use them (spec 13).

Each pooled box runs the kernel driver (`python3 -c`, so no cell can rewrite
it) and is ready once it says {"hello": 1}: a booted interpreter that has
run nothing. A call takes one, sends its code as the only cell, and the box
is then destroyed with SIGKILL to kern's process group; kern drops its
record by itself. Isolation is the one-shot run's: only the moment the box
is created moves. A worker thread keeps the pool full. The pool covers a
burst, not a rate: a call that finds it empty starts a cold box rather
than wait.

A pooled box is used only when its key (the box's whole configuration,
kern's environment and, with profiles, kern's resolved view of them)
matches the call's, the call's deadline fits the budget the box was
started with, and the box is younger than 300 s.
"""

from __future__ import annotations

import collections
import os
import queue
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Deque, List, Optional

from . import _frames, _inbox
from ._boxkey import config_key
from ._driverbox import RESULTS_CAP, Cell, Death, DriverBox, classify_death
from ._spawn import run_quiet
from .faults import split_stderr
from .results import ExecutionResult, Result, SandboxFault

if TYPE_CHECKING:
    from .sandbox import Sandbox

MAX_AGE_S = 300
HELLO_TIMEOUT_S = 120
RECOVER_TIMEOUT_S = 30
# Backoff when boxes fail to start (an image without python3, a kern that
# refuses the configuration): the pool must not spin.
BACKOFF_FIRST_S = 1.0
BACKOFF_MAX_S = 30.0


def kern_timeout(budget_s: float) -> int:
    """kern's --timeout of a pooled box: its whole life, then the call's
    deadline, then the usual 5 s backstop."""
    return MAX_AGE_S + int(budget_s) + 5


@dataclass
class PoolBox:
    """A started box waiting for its one call."""

    box: DriverBox
    key: str
    budget_s: float
    born: float

    def fits(self, key: str, limit_s: float, now: float) -> bool:
        return self.key == key and limit_s <= self.budget_s and now - self.born < MAX_AGE_S


class Pool:
    """The prewarmed boxes of one Sandbox, and the thread that refills them."""

    def __init__(self, sandbox: "Sandbox", size: int) -> None:
        self._sbx = sandbox
        self._size = size
        self._ready: Deque[PoolBox] = collections.deque()
        self._starting = 0
        self._cv = threading.Condition()
        self._closed = False
        self.served = 0                      # calls a pooled box answered
        # Used boxes are killed on the caller's thread and reaped on this
        # one, so a call does not wait for kern to go.
        self._graves: "queue.Queue[Optional[DriverBox]]" = queue.Queue()
        self._reaper = threading.Thread(target=self._reap, name="kern-prewarm-reaper", daemon=True)
        self._reaper.start()
        self._thread = threading.Thread(target=self._fill, name="kern-prewarm", daemon=True)
        self._thread.start()

    def _reap(self) -> None:
        while True:
            box = self._graves.get()
            if box is None:
                return
            box.reap_killed()

    # -- filling ---------------------------------------------------------------

    def _fill(self) -> None:
        backoff = BACKOFF_FIRST_S
        while True:
            with self._cv:
                if self._closed:
                    return
                stale = self._expire(time.monotonic())
                need = self._size - len(self._ready) - self._starting
                if need <= 0 and not stale:
                    wait = MAX_AGE_S
                    if self._ready:
                        wait = max(0.1, self._ready[0].born + MAX_AGE_S - time.monotonic())
                    self._cv.wait(wait)
                    continue
                self._starting += max(need, 0)
            _discard(stale)
            started = self._start(max(need, 0))
            with self._cv:
                self._starting -= max(need, 0)
                if self._closed:
                    _discard(started)
                    return
                self._ready.extend(started)
                self._cv.notify_all()
            if need > 0 and not started:
                time.sleep(backoff)
                backoff = min(backoff * 2, BACKOFF_MAX_S)
            elif started:
                backoff = BACKOFF_FIRST_S

    def _expire(self, now: float) -> List[PoolBox]:
        # Called with the lock held: boxes past their age leave the pool.
        stale = [b for b in self._ready if now - b.born >= MAX_AGE_S]
        for b in stale:
            self._ready.remove(b)
        return stale

    def _start(self, n: int) -> List[PoolBox]:
        """Start n boxes side by side; the ones that said hello."""
        if n <= 0:
            return []
        sbx = self._sbx
        cfg = sbx.config
        budget = cfg.timeout_s
        try:
            key = config_key(sbx, budget)
        except Exception:   # the Sandbox is closing under us
            return []
        source = _inbox.driver_source(cfg.max_output_bytes, RESULTS_CAP, True)
        pending = []
        for _ in range(n):
            env_file = sbx.env_file_path()
            try:
                req = sbx.box_request(["python3", "-c", source], budget, env_file=env_file,
                                      kern_timeout=kern_timeout(budget))
                sbx.write_env_file(req)
                box = DriverBox(sbx._kern, sbx.box_argv(req), req.name,
                                out_cap=cfg.max_output_bytes,
                                reply_limit=_frames.reply_cap(cfg.max_output_bytes, RESULTS_CAP),
                                no_scope=not cfg.enforce_limits, memory_mb=cfg.memory_mb)
            except Exception:
                _unlink(env_file)
                break
            pending.append((box, env_file, time.monotonic()))
        ready = []
        for box, env_file, born in pending:
            failure = box.wait_hello(HELLO_TIMEOUT_S)
            _unlink(env_file)
            if failure is None:
                ready.append(PoolBox(box, key, budget, born))
            else:
                box.kill()
                box.reap_killed()
        return ready

    # -- serving -----------------------------------------------------------------

    def take(self, limit_s: float) -> Optional[PoolBox]:
        """A ready box for a call with this deadline, or None (go cold)."""
        with self._cv:
            if self._closed or not self._ready:
                return None
        key = config_key(self._sbx, self._sbx.config.timeout_s)
        now = time.monotonic()
        with self._cv:
            stale = [b for b in self._ready if b.key != key]
            for b in stale:
                self._ready.remove(b)
            found = None
            for b in self._ready:
                if b.fits(key, limit_s, now):
                    found = b
                    break
            if found is not None:
                self._ready.remove(found)
            if stale or found is not None:
                self._cv.notify_all()
        _discard(stale)
        return found

    def serve(self, pooled: PoolBox, code: str, limit_s: float) -> ExecutionResult:
        """Run ``code`` as the only cell of ``pooled`` and destroy the box."""
        box = pooled.box
        cell = box.call(code, limit_s)
        death: Optional[Death] = None
        if cell.reply is None and cell.failure == "eof":
            death = classify_death(box.observe(), one_call=True)
        else:
            box.kill()
            if cell.failure == "timeout":
                death = Death(SandboxFault("timeout", "exceeded the %gs time limit (killed by the "
                                           "binding)" % limit_s), False, 137)
            elif cell.failure is not None:
                death = Death(SandboxFault("killed", "the box sent a reply the binding refuses (%s); "
                                           "it was killed" % cell.detail), False, 137)
        kern_stderr = box.kern_stderr()
        if cell.failure != "eof":
            self._graves.put(box)
        with self._cv:
            self.served += 1
        return _result(cell, death, kern_stderr)

    def close(self) -> None:
        """Kill every pooled box, then let `kern recover` sweep what the
        killed supervisors left (their scratch and cgroups)."""
        with self._cv:
            if self._closed:
                return
            self._closed = True
            boxes = list(self._ready)
            self._ready.clear()
            self._cv.notify_all()
        _discard(boxes)
        self._thread.join(HELLO_TIMEOUT_S + 10)
        self._graves.put(None)
        self._reaper.join()
        run_quiet(self._sbx._kern, ["recover"], RECOVER_TIMEOUT_S)

    def ready_count(self) -> int:
        with self._cv:
            return len(self._ready)


def _discard(boxes: List[PoolBox]) -> None:
    for b in boxes:
        b.box.kill()
    for b in boxes:
        b.box.reap_killed()


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _result(cell: Cell, death: Optional[Death], kern_stderr: str) -> ExecutionResult:
    """A pooled call's result, shaped like a one-shot run's: kern's lines
    first in stderr, then the program's."""
    if cell.reply is not None:
        out, err, rc = cell.reply.stdout, cell.reply.stderr, cell.reply.rc
        results = [Result(dict(b)) for b in cell.reply.results]
        truncated = cell.reply.trunc
        fault = None
    else:
        assert death is not None
        out = bytes(cell.stdout).decode("utf-8", "replace")
        err = bytes(cell.stderr).decode("utf-8", "replace")
        rc, results, truncated, fault = death.exit_code, [], cell.streamed_cut, death.fault
        if death.note:
            err += ("" if not err or err.endswith("\n") else "\n") + death.note + "\n"
    if kern_stderr:
        err = kern_stderr + ("" if kern_stderr.endswith("\n") else "\n") + err
    code_stderr, notes = split_stderr(err)
    return ExecutionResult(stdout=out, stderr=err, exit_code=rc, duration_ms=cell.duration_ms,
                           fault=fault, results=results, truncated=truncated,
                           code_stderr=code_stderr, runtime_notes=notes)
