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
# Refill after calls pause this long, or at the latest this long after a
# burst began.
REFILL_QUIET_S = 0.1
REFILL_LATE_S = 1.0


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
        self._burst: Optional[float] = None  # when the current burst of calls began
        self._last_take = 0.0
        self._cv = threading.Condition()
        self._closed = False
        self.served = 0                      # calls a pooled box answered
        self._keys: dict = {}                # config_key's memo
        # Boxes that answered their call: the driver killed everything else
        # in them and stopped itself; the worker kills them once the burst
        # pauses (tearing a box down takes CPU the next calls want).
        self._used: List[DriverBox] = []
        # Boxes killed on a caller's thread (a fault): reaped by the worker.
        self._graves: List[DriverBox] = []
        self._thread = threading.Thread(target=self._fill, name="kern-prewarm", daemon=True)
        self._thread.start()

    def _reap(self) -> None:
        with self._cv:
            used, self._used = self._used, []
            graves, self._graves = self._graves, []
        for box in used:
            box.kill()
        for box in used + graves:
            box.reap_killed()

    # -- filling ---------------------------------------------------------------

    def _fill(self) -> None:
        backoff = BACKOFF_FIRST_S
        while True:
            with self._cv:
                if self._closed:
                    return
                stale = self._expire(time.monotonic())
            _discard(stale)
            with self._cv:
                if self._closed:
                    return
                now = time.monotonic()
                need = self._size - len(self._ready)
                wait = None
                if need <= 0:
                    wait = self._ready[0].born + MAX_AGE_S - now if self._ready else MAX_AGE_S
                elif self._burst is not None:
                    # Calls are being served: boxes started now would take
                    # the CPU (and this process's GIL) from them. Refill
                    # once the burst has paused, or after REFILL_LATE_S.
                    quiet = self._last_take + REFILL_QUIET_S - now
                    late = self._burst + REFILL_LATE_S - now
                    if quiet > 0 and late > 0:
                        wait = min(quiet, late)
                if wait is not None:
                    self._cv.wait(max(0.01, wait))
                    continue
                self._burst = None
            self._reap()
            started = self._start(need)
            with self._cv:
                if self._closed:
                    _discard(started)
                    return
                self._ready.extend(started)
                self._cv.notify_all()
            if not started:
                time.sleep(backoff)
                backoff = min(backoff * 2, BACKOFF_MAX_S)
            else:
                backoff = BACKOFF_FIRST_S

    def _expire(self, now: float) -> List[PoolBox]:
        # Called with the lock held: boxes past their age, and boxes killed
        # from outside while they waited, leave the pool.
        stale = [b for b in self._ready if now - b.born >= MAX_AGE_S or not b.box.alive()]
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
            key = config_key(sbx, budget, self._keys)
        except Exception:   # the Sandbox is closing under us
            return []
        source = _inbox.driver_source(cfg.max_output_bytes, RESULTS_CAP, True, one_call=True)
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
        key = config_key(self._sbx, self._sbx.config.timeout_s, self._keys)
        now = time.monotonic()
        with self._cv:
            # A box killed while it waited (a killpg from outside) would
            # fail the call with a fault its code never caused: dropped.
            stale = [b for b in self._ready if b.key != key or not b.box.alive()]
            for b in stale:
                self._ready.remove(b)
            found = None
            for b in self._ready:
                if b.fits(key, limit_s, now):
                    found = b
                    break
            first = False
            if found is not None:
                self._ready.remove(found)
                self._last_take = now
                first = self._burst is None
                if first:
                    self._burst = now
            # Only the first call of a burst wakes the worker (to time its
            # refill): waking it on every call would cost each one the GIL.
            if stale or first:
                self._cv.notify_all()
        _discard(stale)
        return found

    def serve(self, pooled: PoolBox, code: str, limit_s: float) -> ExecutionResult:
        """Run ``code`` as the only cell of ``pooled``. The box never serves
        another: after a fault it is killed at once; after a reply its driver
        has killed the rest of the box and stopped, and the worker kills it
        when the burst pauses."""
        box = pooled.box
        cell = box.call(code, limit_s)
        death: Optional[Death] = None
        if cell.reply is None and cell.failure == "eof":
            death = classify_death(box.observe(), one_call=True)
        elif cell.failure is not None:
            box.kill()
            if cell.failure == "timeout":
                death = Death(SandboxFault("timeout", "exceeded the %gs time limit (killed by the "
                                           "binding)" % limit_s), False, 137)
            elif cell.failure is not None:
                death = Death(SandboxFault("killed", "the box sent a reply the binding refuses (%s); "
                                           "it was killed" % cell.detail), False, 137)
        kern_stderr = box.kern_stderr()
        with self._cv:
            self.served += 1
            if cell.failure is None:
                self._used.append(box)
            elif cell.failure != "eof":
                self._graves.append(box)
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
        self._reap()
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
