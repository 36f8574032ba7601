"""Newline-delimited frames on raw file descriptors (the MCP stdio transport).

One JSON-RPC message per line, both ways. Reading is bounded: a line longer
than ``MAX_FRAME`` bytes is never held in memory; its bytes are skipped up to
the next newline and the reader reports it as one oversize frame, so the
server can refuse it and carry on with the next line.
"""

from __future__ import annotations

import errno
import json
import os
import threading
from dataclasses import dataclass
from typing import Iterator, Union

MAX_FRAME = 8 << 20
_CHUNK = 1 << 16


@dataclass(frozen=True)
class Oversize:
    """A line over the frame limit; ``size`` counts the bytes skipped."""

    size: int


Frame = Union[bytes, Oversize]


class FrameReader:
    """Yields each line of ``fd`` without its newline (and a trailing CR)."""

    def __init__(self, fd: int, limit: int = MAX_FRAME) -> None:
        self._fd = fd
        self._limit = limit

    def _read(self) -> bytes:
        while True:
            try:
                return os.read(self._fd, _CHUNK)
            except InterruptedError:
                continue
            except OSError as e:
                # A closed or broken input is the end of the session.
                if e.errno in (errno.EBADF, errno.EIO, errno.ECONNRESET):
                    return b""
                raise

    def frames(self) -> Iterator[Frame]:
        buf = bytearray()
        skipping = 0  # > 0 while discarding the rest of an oversize line
        while True:
            chunk = self._read()
            if not chunk:
                break
            start = 0
            while True:
                nl = chunk.find(b"\n", start)
                if nl < 0:
                    rest = len(chunk) - start
                    if skipping:
                        skipping += rest
                    elif len(buf) + rest > self._limit:
                        skipping = len(buf) + rest
                        buf.clear()
                    else:
                        buf += chunk[start:]
                    break
                piece = chunk[start:nl]
                start = nl + 1
                if skipping:
                    yield Oversize(skipping + len(piece))
                    skipping = 0
                    continue
                if len(buf) + len(piece) > self._limit:
                    size = len(buf) + len(piece)
                    buf.clear()
                    yield Oversize(size)
                    continue
                buf += piece
                line = bytes(buf)
                buf.clear()
                yield from _line(line)
        if skipping:
            yield Oversize(skipping)
        elif buf:
            # The last message may arrive without its newline before EOF.
            yield from _line(bytes(buf))


def _line(line: bytes) -> Iterator[bytes]:
    if line.endswith(b"\r"):
        line = line[:-1]
    if line.strip():
        yield line


class FrameWriter:
    """Writes one message per line; safe to share between threads.

    ``closed`` turns true once the client stops reading (EPIPE): later writes
    are dropped, and the server winds down.
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._lock = threading.Lock()
        self.closed = False

    def send(self, message: object) -> bool:
        # ensure_ascii: every string leaves as valid UTF-8 whatever it holds
        # (a file name's surrogate escapes included), and no raw newline.
        data = json.dumps(message, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode("ascii") + b"\n"
        with self._lock:
            return self._write(data)

    def _write(self, data: bytes) -> bool:
        if self.closed:
            return False
        view = memoryview(data)
        while view:
            try:
                n = os.write(self._fd, view)
            except InterruptedError:
                continue
            except OSError:
                self.closed = True
                return False
            view = view[n:]
        return True
