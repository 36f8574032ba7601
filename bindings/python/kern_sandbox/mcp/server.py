"""The MCP server: one connection, read frame by frame, answered in order of
completion.

The reading thread decodes every frame and answers what is instant
(``initialize``, ``ping``, refusals) itself; ``tools/list`` and
``tools/call`` run on worker threads so that a ``ping`` or a
``notifications/cancelled`` is read while a cell runs. Every request in
flight has an entry in one table: the progress ticker reads it, a
cancellation marks it, and its reply removes it, all under one lock, so no
progress notification can follow the reply it belongs to and a cancelled
request is never answered.
"""

from __future__ import annotations

import queue
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Protocol, Union

from . import jsonrpc as rpc
from . import reply, tools
from .framing import MAX_FRAME, FrameReader, FrameWriter, Oversize
from .versions import SUPPORTED, Features, negotiate

SERVER_NAME = "kern-sandbox"
PROGRESS_INTERVAL_S = 2.0
MAX_IN_FLIGHT = 32
# Boxes one connection runs at once; later calls wait their turn.
MAX_RUNNING = 4
INSTRUCTIONS = (
    "kern-mcp runs code in kern sandboxes on this machine. Each run_code call is a fresh, "
    "network-off box; files under /workspace persist between calls, processes do not. "
    "Use write_file/read_file/list_files for workspace files."
)


class Call:
    """One ``tools/call`` in flight, as the session sees it: a cancellation
    flag and the hooks that stop its box."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._hooks: List[Callable[[], None]] = []

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def wait(self, timeout: float) -> bool:
        return self._event.wait(timeout)

    def on_cancel(self, hook: Callable[[], None]) -> None:
        """Run ``hook`` on cancellation (now, when already cancelled)."""
        with self._lock:
            if not self._event.is_set():
                self._hooks.append(hook)
                return
        hook()

    def cancel(self) -> None:
        with self._lock:
            if self._event.is_set():
                return
            self._event.set()
            hooks, self._hooks = self._hooks, []
        for hook in hooks:
            try:
                hook()
            except Exception as e:  # a hook failing must not stop the others
                print(f"kern-mcp: cancelling: {e}", file=sys.stderr)


class Backend(Protocol):
    """What the server needs from a session (``session.Session``)."""

    def tool_context(self) -> tools.ToolContext: ...

    def call(self, tool: str, args: Any, call: Call, features: Features) -> Dict[str, Any]: ...

    def close(self) -> None: ...


@dataclass
class _InFlight:
    method: str
    call: Call
    token: Optional[Union[str, int]] = None
    started: float = field(default_factory=time.monotonic)
    limit_s: Optional[float] = None
    progress: int = 0


class _Batch:
    """Collects the replies of one JSON-RPC batch (2025-03-26) and sends
    them as one array when the last is in."""

    def __init__(self, writer: FrameWriter) -> None:
        self._writer = writer
        self._lock = threading.Lock()
        self._replies: List[Dict[str, Any]] = []
        self._pending = 1  # the reading thread's own hold, released by seal()

    def expect(self) -> None:
        with self._lock:
            self._pending += 1

    def deliver(self, message: Optional[Dict[str, Any]]) -> None:
        with self._lock:
            if message is not None:
                self._replies.append(message)
            self._pending -= 1
            done = self._pending == 0
            replies = self._replies
        if done and replies:
            self._writer.send(replies)

    def seal(self) -> None:
        self.deliver(None)


Reply = Callable[[Optional[Dict[str, Any]]], None]


class _Workers:
    """Daemon threads that run requests, kept for reuse: starting a thread
    per request cost more than the rest of a warm kernel cell's round trip.
    Each job gets a thread of its own: an idle one, reserved when the job
    is submitted, or a new one (at most ``limit``, the in-flight cap), so
    a quick call never waits behind a long one. Daemon, so a signal ends
    the process at once once the boxes in flight are stopped."""

    def __init__(self, limit: int) -> None:
        self._queue: "queue.SimpleQueue[Callable[[], None]]" = queue.SimpleQueue()
        self._cond = threading.Condition()
        self._idle = 0
        self._threads = 0
        self._pending = 0
        self._limit = limit

    def submit(self, job: Callable[[], None]) -> None:
        with self._cond:
            self._pending += 1
            if self._idle > 0:
                self._idle -= 1
            elif self._threads < self._limit:
                self._threads += 1
                threading.Thread(target=self._loop, daemon=True).start()
        self._queue.put(job)

    def _loop(self) -> None:
        while True:
            job = self._queue.get()
            try:
                job()
            finally:
                with self._cond:
                    self._pending -= 1
                    self._idle += 1
                    self._cond.notify_all()

    def drain(self) -> None:
        """Wait until every submitted job has finished."""
        with self._cond:
            while self._pending:
                self._cond.wait()


class Server:
    def __init__(self, backend: Backend, reader: FrameReader, writer: FrameWriter,
                 version: str = "0") -> None:
        self._backend = backend
        self._reader = reader
        self._writer = writer
        self._version = version
        self._features: Optional[Features] = None
        self._lock = threading.Lock()
        self._inflight: Dict[Union[str, int], _InFlight] = {}
        self._workers = _Workers(MAX_IN_FLIGHT)
        self._slots = threading.BoundedSemaphore(MAX_RUNNING)
        self._ticker: Optional[threading.Thread] = None
        self._stopping = threading.Event()

    # -- the reading loop -------------------------------------------------

    def serve(self) -> None:
        try:
            for frame in self._reader.frames():
                if self._writer.closed:
                    break
                self._frame(frame)
            self._drain()
        finally:
            self._stopping.set()
            self.cancel_all()
            self._backend.close()

    def _drain(self) -> None:
        """Input ended: let the calls in flight finish and answer."""
        self._workers.drain()

    def cancel_all(self) -> None:
        with self._lock:
            entries = list(self._inflight.values())
        for e in entries:
            e.call.cancel()

    def _frame(self, frame: Union[bytes, Oversize]) -> None:
        if isinstance(frame, Oversize):
            self._send(rpc.error(None, rpc.INVALID_REQUEST,
                                 f"Invalid Request: a message of {frame.size} bytes is over "
                                 f"the {MAX_FRAME} byte limit"))
            return
        value = rpc.decode(frame)
        if isinstance(value, rpc.Refusal):
            self._send(rpc.refusal_reply(value))
            return
        items = rpc.batch_items(value)
        if items is None:
            self._message(rpc.classify(value), self._send)
            return
        if not (self._features and self._features.batches):
            self._send(rpc.error(None, rpc.INVALID_REQUEST,
                                 "Invalid Request: JSON-RPC batches are only part of protocol "
                                 "revision 2025-03-26"))
            return
        if not items:
            self._send(rpc.error(None, rpc.INVALID_REQUEST, "Invalid Request: empty batch"))
            return
        batch = _Batch(self._writer)
        for item in items:
            msg = rpc.classify(item)
            if isinstance(msg, rpc.Request) and msg.method == "initialize":
                batch.expect()
                batch.deliver(rpc.error(msg.id, rpc.INVALID_REQUEST,
                                        "Invalid Request: initialize cannot be part of a batch"))
                continue
            if isinstance(msg, rpc.Request) or (isinstance(msg, rpc.Refusal) and not msg.silent):
                batch.expect()
            self._message(msg, batch.deliver)
        batch.seal()

    def _send(self, message: Optional[Dict[str, Any]]) -> None:
        if message is not None:
            self._writer.send(message)

    def _message(self, msg: rpc.Message, send: Reply) -> None:
        if isinstance(msg, rpc.Refusal):
            if not msg.silent:
                send(rpc.refusal_reply(msg))
            return
        if isinstance(msg, rpc.Response):
            return
        if isinstance(msg, rpc.Notification):
            self._notification(msg)
            return
        self._request(msg, send)

    def _notification(self, n: rpc.Notification) -> None:
        if n.method == "notifications/cancelled":
            rid = n.params.get("requestId")
            if isinstance(rid, bool) or not isinstance(rid, (str, int)):
                return
            with self._lock:
                entry = self._inflight.get(rid)
            if entry is not None and entry.method != "initialize":
                # Stopping a box waits for kern stop: not on the reading thread.
                threading.Thread(target=entry.call.cancel, daemon=True).start()
        # notifications/initialized and anything else: nothing to do.

    # -- requests ---------------------------------------------------------

    def _request(self, req: rpc.Request, send: Reply) -> None:
        m = req.method
        if m == "ping":
            send(rpc.result(req.id, {}))
            return
        if m == "server/discover":
            # The 2026-07-28 probe: a non-modern error sends a dual-era client
            # back to initialize, which is all this server speaks.
            send(rpc.error(req.id, rpc.METHOD_NOT_FOUND,
                           "Method not found: server/discover; this server uses the "
                           "initialize handshake", {"supported": list(SUPPORTED)}))
            return
        if m == "initialize":
            send(self._initialize(req))
            return
        if self._features is None:
            send(rpc.error(req.id, rpc.INVALID_REQUEST,
                           f"Invalid Request: {m} before initialize; send initialize first"))
            return
        if m == "resources/list":
            send(rpc.result(req.id, {"resources": []}))
        elif m == "prompts/list":
            send(rpc.result(req.id, {"prompts": []}))
        elif m in ("tools/list", "tools/call"):
            self._start(req, send)
        else:
            send(rpc.error(req.id, rpc.METHOD_NOT_FOUND, f"Method not found: {m}"))

    def _initialize(self, req: rpc.Request) -> Dict[str, Any]:
        if self._features is not None:
            return rpc.error(req.id, rpc.INVALID_REQUEST, "Invalid Request: already initialized")
        requested = req.params.get("protocolVersion")
        if not isinstance(requested, str):
            return rpc.error(req.id, rpc.INVALID_PARAMS,
                             'Invalid params: "protocolVersion" must be a string')
        version = negotiate(requested)
        self._features = Features.of(version)
        return rpc.result(req.id, {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": SERVER_NAME, "version": self._version},
            "instructions": INSTRUCTIONS,
        })

    def _start(self, req: rpc.Request, send: Reply) -> None:
        token = None
        meta = req.params.get("_meta")
        if isinstance(meta, dict):
            t = meta.get("progressToken")
            if isinstance(t, (str, int)) and not isinstance(t, bool):
                token = t
        entry = _InFlight(req.method, Call(), token)
        with self._lock:
            if req.id in self._inflight:
                refusal = "Invalid Request: a request with this id is still in flight"
            elif len(self._inflight) >= MAX_IN_FLIGHT:
                refusal = f"Server busy: {MAX_IN_FLIGHT} requests are in flight"
            else:
                refusal = ""
                self._inflight[req.id] = entry
        if refusal:
            code = rpc.INVALID_REQUEST if refusal.startswith("Invalid") else rpc.SERVER_BUSY
            send(rpc.error(req.id, code, refusal))
            return
        if token is not None:
            self._start_ticker()
        self._workers.submit(lambda: self._work(req, entry, send))

    def _work(self, req: rpc.Request, entry: _InFlight, send: Reply) -> None:
        try:
            out = self._run(req, entry)
        except Exception as e:  # never let one call take the connection down
            print(f"kern-mcp: {req.method}: {type(e).__name__}: {e}", file=sys.stderr)
            out = rpc.error(req.id, rpc.INTERNAL_ERROR, f"Internal error: {type(e).__name__}")
        with self._lock:
            self._inflight.pop(req.id, None)
            cancelled = entry.call.cancelled
        # A cancelled request gets no reply (a batch still learns it ended).
        send(None if cancelled else out)

    def _run(self, req: rpc.Request, entry: _InFlight) -> Dict[str, Any]:
        features = self._features
        assert features is not None
        ctx = self._backend.tool_context()
        if req.method == "tools/list":
            if req.params.get("cursor") is not None:
                return rpc.error(req.id, rpc.INVALID_PARAMS, "Invalid params: unknown cursor")
            return rpc.result(req.id, {"tools": tools.shape(tools.definitions(ctx), features)})
        name = req.params.get("name")
        if not isinstance(name, str):
            return rpc.error(req.id, rpc.INVALID_PARAMS, 'Invalid params: "name" must be a string')
        if name not in tools.names(ctx):
            return rpc.error(req.id, rpc.INVALID_PARAMS, f"Unknown tool: {name[:200]}")
        try:
            args = tools.check_arguments(name, req.params.get("arguments"), ctx)
        except tools.BadArguments as e:
            if features.argument_errors_as_results:
                return rpc.result(req.id, reply.tool_error(f"Invalid arguments for {name}: {e}"))
            return rpc.error(req.id, rpc.INVALID_PARAMS, f"Invalid params for {name}: {e}")
        if isinstance(args, tools.RunCodeArgs):
            entry.limit_s = args.timeout_s
        if not self._acquire(entry.call):
            return rpc.error(req.id, rpc.INTERNAL_ERROR, "cancelled")  # never sent
        try:
            return rpc.result(req.id, self._backend.call(name, args, entry.call, features))
        finally:
            self._slots.release()

    def _acquire(self, call: Call) -> bool:
        while not call.cancelled:
            if self._slots.acquire(timeout=0.2):
                return True
        return False

    # -- progress ---------------------------------------------------------

    def _start_ticker(self) -> None:
        with self._lock:
            if self._ticker is not None:
                return
            self._ticker = threading.Thread(target=self._tick, daemon=True)
        self._ticker.start()

    def _tick(self) -> None:
        while not self._stopping.wait(0.25):
            now = time.monotonic()
            with self._lock:
                for entry in self._inflight.values():
                    if entry.token is None or entry.call.cancelled:
                        continue
                    elapsed = now - entry.started
                    if elapsed < PROGRESS_INTERVAL_S * (entry.progress + 1):
                        continue
                    entry.progress += 1
                    self._writer.send(rpc.notification("notifications/progress",
                                                       self._progress(entry, elapsed)))

    def _progress(self, entry: _InFlight, elapsed: float) -> Dict[str, Any]:
        params: Dict[str, Any] = {"progressToken": entry.token, "progress": entry.progress}
        features = self._features
        if features is not None and features.progress_message:
            limit = f" of at most {entry.limit_s:g}" if entry.limit_s else ""
            params["message"] = f"{entry.method}: running for {elapsed:.0f} s{limit}"
        return params
