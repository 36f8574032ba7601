"""Kernel frames (spec 15.2), the host side.

A frame is the ASCII decimal length of its body, a newline, then the body.
The host sends a cell's UTF-8 source; the box answers with UTF-8 JSON
objects: optional {"hello": 1} once ready, {"o": text} / {"e": text} while
a cell runs, then one reply {"stdout", "stderr", "rc", "results", "trunc"}.
Everything read here comes from inside a box and is treated as hostile:
lengths are bounded before anything is allocated and every field is
checked.
"""

import json
import math
import os
import select
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

# Digits of a declared length plus its newline: far more than any cap needs.
HEADER_MAX = 32


class FrameError(Exception):
    """The box's side of the channel broke the protocol or went away."""


class FrameEOF(FrameError):
    """The box closed its stdout: the kernel process is gone."""


class FrameTimeout(FrameError):
    """No complete frame before the deadline."""


class FrameOversize(FrameError):
    """A frame declared more bytes than the reply cap allows."""


class FrameMalformed(FrameError):
    """A header that is not a length, or a body that is not a valid message."""


def encode(body: bytes) -> bytes:
    return b"%d\n" % len(body) + body


def reply_cap(max_output_bytes: int, results_cap: int) -> int:
    """The largest reply the driver can send for these caps (spec 13)."""
    return 2 * max_output_bytes + results_cap + 64 * 1024


class FrameReader:
    """Reads whole frames from a pipe, each within a deadline and a cap.

    ``aux``/``on_aux``: a second descriptor (kern's stderr) watched in the
    same poll; ``on_aux()`` is called when it is readable and returns False
    once it reached EOF. No thread needs to wait on it.
    """

    def __init__(self, fd: int, cap: int, aux: Optional[int] = None,
                 on_aux: Optional[Callable[[], bool]] = None) -> None:
        self.fd = fd
        self.cap = cap
        self.buf = bytearray()
        self.poller = select.poll()
        self.poller.register(fd, select.POLLIN)
        self.aux = aux if on_aux is not None else None
        self.on_aux = on_aux
        if self.aux is not None:
            self.poller.register(self.aux, select.POLLIN)

    def _fill(self, want: int, deadline: Optional[float]) -> None:
        # Read until at least `want` bytes are buffered, or fail.
        while len(self.buf) < want:
            wait_ms = -1
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise FrameTimeout("no reply before the deadline")
                wait_ms = math.ceil(left * 1000)
            events = self.poller.poll(wait_ms)
            if not events:
                raise FrameTimeout("no reply before the deadline")
            ours = False
            for fd, _ in events:
                if fd == self.fd:
                    ours = True
                elif fd == self.aux and self.on_aux is not None and not self.on_aux():
                    self.poller.unregister(fd)
                    self.aux = None
            if not ours:
                continue
            data = os.read(self.fd, max(1 << 16, min(want - len(self.buf), 1 << 22)))
            if not data:
                raise FrameEOF("the kernel closed its output")
            self.buf += data

    def read(self, deadline: Optional[float] = None) -> bytes:
        """One frame's body. deadline: a time.monotonic() value, or None."""
        while True:
            nl = self.buf.find(b"\n", 0, HEADER_MAX)
            if nl >= 0:
                break
            if len(self.buf) >= HEADER_MAX:
                raise FrameMalformed("frame header over %d bytes" % HEADER_MAX)
            self._fill(len(self.buf) + 1, deadline)
        head = bytes(self.buf[:nl])
        if not head.isdigit():
            raise FrameMalformed("frame header %r is not a length" % head[:HEADER_MAX])
        size = int(head)
        if size > self.cap:
            raise FrameOversize("reply of %d bytes is over the %d-byte cap" % (size, self.cap))
        self._fill(nl + 1 + size, deadline)
        body = bytes(self.buf[nl + 1:nl + 1 + size])
        del self.buf[:nl + 1 + size]
        return body


@dataclass
class Reply:
    """The end of one cell, as the driver reported it."""

    stdout: str
    stderr: str
    rc: int
    results: List[Dict[str, str]] = field(default_factory=list)
    trunc: bool = False


def decode(body: bytes) -> dict:
    """A box message: a JSON object, or FrameMalformed."""
    try:
        msg = json.loads(body.decode("utf-8", "replace"))
    except ValueError as exc:
        raise FrameMalformed("reply is not JSON: %s" % exc) from None
    if not isinstance(msg, dict):
        raise FrameMalformed("reply is not a JSON object")
    return msg


def stream_text(msg: dict) -> Optional[Tuple[str, str]]:
    """("o"|"e", text) for a streamed output frame, else None."""
    if len(msg) == 1:
        for key in ("o", "e"):
            text = msg.get(key)
            if isinstance(text, str):
                return key, text
    return None


def is_hello(msg: dict) -> bool:
    return msg.get("hello") == 1 and "rc" not in msg


def parse_reply(msg: dict) -> Reply:
    """Check a reply's fields; FrameMalformed names the first bad one."""
    rc = msg.get("rc")
    if not isinstance(rc, int) or isinstance(rc, bool):
        raise FrameMalformed("reply has no integer rc")
    out = msg.get("stdout", "")
    err = msg.get("stderr", "")
    if not isinstance(out, str) or not isinstance(err, str):
        raise FrameMalformed("reply stdout/stderr are not strings")
    raw = msg.get("results", [])
    if not isinstance(raw, list):
        raise FrameMalformed("reply results is not a list")
    results = []
    for bundle in raw:
        if not isinstance(bundle, dict):
            raise FrameMalformed("a result is not an object")
        clean = {k: v for k, v in bundle.items() if isinstance(k, str) and isinstance(v, str)}
        if len(clean) != len(bundle):
            raise FrameMalformed("a result holds a value that is not a string")
        results.append(clean)
    trunc = msg.get("trunc", False)
    return Reply(stdout=out, stderr=err, rc=rc, results=results, trunc=trunc is True)
