"""A test client for kern-mcp: frames over real pipes, replies read with a
deadline. ``Peer`` drives a server in this process (with any backend);
``StdioPeer`` drives the real ``kern-mcp`` program in a child process."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import threading
import time
from typing import Any, Dict, List, Optional

BINDINGS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class _Lines:
    """Reads newline-delimited JSON from a descriptor with a deadline."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buf = b""
        self.eof = False
        self.last_raw = b""

    def next(self, timeout: float) -> Optional[Any]:
        end = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = end - time.monotonic()
            if left <= 0 or self.eof:
                return None
            r, _, _ = select.select([self.fd], [], [], left)
            if not r:
                return None
            chunk = os.read(self.fd, 1 << 20)
            if not chunk:
                self.eof = True
                continue
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        self.last_raw = line
        return json.loads(line)


class _Base:
    out: _Lines

    def write(self, data: bytes) -> None:
        raise NotImplementedError

    def send(self, message: Any) -> None:
        self.write(json.dumps(message).encode() + b"\n")

    def recv(self, timeout: float = 10.0) -> Any:
        msg = self.out.next(timeout)
        if msg is None:
            raise AssertionError(f"no message from the server within {timeout} s")
        return msg

    def silent(self, seconds: float) -> None:
        """Assert that the server says nothing for ``seconds``."""
        msg = self.out.next(seconds)
        assert msg is None, f"unexpected message: {msg}"

    def request(self, rid: Any, method: str, params: Optional[Dict[str, Any]] = None,
                timeout: float = 30.0) -> Dict[str, Any]:
        """Send a request and return its reply, collecting notifications
        that arrive first in ``self.notes``."""
        msg: Dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return self.reply(rid, timeout)

    def reply(self, rid: Any, timeout: float = 30.0) -> Dict[str, Any]:
        end = time.monotonic() + timeout
        while True:
            m = self.recv(max(0.01, end - time.monotonic()))
            if "method" in m:
                self.notes.append(m)
                continue
            assert m.get("id") == rid, f"reply to {m.get('id')!r}, expected {rid!r}: {m}"
            return m

    def initialize(self, version: str = "2025-11-25") -> Dict[str, Any]:
        r = self.request(0, "initialize", {"protocolVersion": version, "capabilities": {},
                                           "clientInfo": {"name": "test", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return r

    def call(self, rid: Any, tool: str, arguments: Optional[Dict[str, Any]] = None,
             timeout: float = 60.0, meta: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        params: Dict[str, Any] = {"name": tool, "arguments": arguments or {}}
        if meta:
            params["_meta"] = meta
        return self.request(rid, "tools/call", params, timeout)

    notes: List[Dict[str, Any]]


class Peer(_Base):
    """A ``Server`` with ``backend`` on a thread of this process, over pipes."""

    def __init__(self, backend: Any) -> None:
        from kern_sandbox.mcp.framing import FrameReader, FrameWriter
        from kern_sandbox.mcp.server import Server

        self.notes = []
        self._in_r, self._in_w = os.pipe()
        self._out_r, self._out_w = os.pipe()
        self.server = Server(backend, FrameReader(self._in_r), FrameWriter(self._out_w), "test")
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.out = _Lines(self._out_r)
        self.thread.start()

    def _serve(self) -> None:
        try:
            self.server.serve()
        finally:
            os.close(self._out_w)

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._in_w, view):]

    def close(self, timeout: float = 30.0) -> None:
        """Close the server's input and wait for it to end."""
        if self._in_w >= 0:
            os.close(self._in_w)
            self._in_w = -1
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the server did not end after its input closed"


def kern_mcp_command() -> List[str]:
    """How to start kern-mcp from this checkout with the test's interpreter."""
    return [sys.executable, "-m", "kern_sandbox.mcp"]


class StdioPeer(_Base):
    """The real kern-mcp in a child process, stdin and stdout as pipes."""

    def __init__(self, env: Optional[Dict[str, str]] = None, cwd: Optional[str] = None,
                 argv: Optional[List[str]] = None) -> None:
        self.notes = []
        full = dict(os.environ)
        full["PYTHONPATH"] = BINDINGS + os.pathsep + full.get("PYTHONPATH", "")
        full.update(env or {})
        self.proc = subprocess.Popen(argv or kern_mcp_command(), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=full, cwd=cwd)
        assert self.proc.stdout is not None
        self.out = _Lines(self.proc.stdout.fileno())
        self.stderr_chunks: List[bytes] = []
        self._err = threading.Thread(target=self._drain_stderr, daemon=True)
        self._err.start()

    def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        for chunk in iter(lambda: self.proc.stderr.read1(65536), b""):  # type: ignore[union-attr]
            self.stderr_chunks.append(chunk)

    @property
    def stderr(self) -> str:
        return b"".join(self.stderr_chunks).decode(errors="replace")

    def write(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def close(self, timeout: float = 60.0) -> int:
        assert self.proc.stdin is not None
        if not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            return self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self._err.join(5)
