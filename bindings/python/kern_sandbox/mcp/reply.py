"""Tool results as MCP content, with every cap of the spec applied.

A ``run_code`` reply is image content first (matplotlib figures, PNG/JPEG
rich results), then one text block: stdout, ``[stderr]`` and the code's
stderr, the text-shaped rich results, and a final ``[exit N]`` or
``[exit N, sandbox fault: T]`` line followed by notes on anything left out.
All of it is box output, so it passes ``_model_text.untrusted`` first: a
program cannot print a line that reads as this framing.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .. import _model_text as mt

STREAM_CAP = 16_000
RICH_CAP = 4_000
IMAGE_CAP = 6_000_000
IMAGES_TOTAL_CAP = 8 << 20
TEXT_CAP = 64_000
READ_CAP_BYTES = 16 << 20
READ_TEXT_CAP = 64_000
LIST_LINES_CAP = 10_000

_B64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")
_MAGIC: Tuple[Tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)
# One representation per rich result, the most readable first: a DataFrame
# brings html and text/plain, a chart png and text/plain.
_TEXT_MIMES = ("text/markdown", "text/html", "application/json", "image/svg+xml", "text/plain")


def text(value: str) -> Dict[str, Any]:
    return {"type": "text", "text": value}


def tool_error(message: str) -> Dict[str, Any]:
    return {"content": [text(message)], "isError": True}


def kern_error(err: BaseException) -> Dict[str, Any]:
    return tool_error("kern error: " + mt.one_line(str(err), 2000))


def sniff_image(data: bytes) -> Optional[str]:
    for magic, mime in _MAGIC:
        if data.startswith(magic):
            return mime
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def _b64_image(value: Any, mime: str) -> Optional[str]:
    """``value`` when it is base64 of an image of that type, else None."""
    if not isinstance(value, str) or not _B64.fullmatch(value):
        return None
    try:
        head = base64.b64decode(value[:64], validate=True)
    except (binascii.Error, ValueError):
        return None
    return value if sniff_image(head) == mime else None


@dataclass
class _Builder:
    lines: List[str] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)

    def stream(self, label: Optional[str], value: str, what: str) -> str:
        shown = mt.untrusted(value)
        if len(shown) > STREAM_CAP:
            self.notes.append(f"[omitted: {what} cut to {STREAM_CAP} of {len(shown)} characters]")
            shown = mt.cut_to_fit(shown, STREAM_CAP)
        if shown.strip():
            if label:
                self.lines.append(label)
            self.lines.append(shown.rstrip("\n"))
        return shown


def _images_and_texts(results: Sequence[Any], b: _Builder) -> List[Dict[str, Any]]:
    images: List[Dict[str, Any]] = []
    total = 0
    for i, r in enumerate(results, 1):
        data = getattr(r, "data", None)
        if not isinstance(data, dict):
            continue
        mime = next((m for m in ("image/png", "image/jpeg") if m in data), None)
        if mime is not None:
            value = _b64_image(data[mime], mime)
            if value is None:
                b.notes.append(f"[omitted: result {i} claims {mime} but is not a valid image]")
            elif len(value) > IMAGE_CAP:
                b.notes.append(f"[omitted: image {i} is {len(value)} base64 characters, "
                               f"over the {IMAGE_CAP} cap]")
            elif total + len(value) > IMAGES_TOTAL_CAP:
                b.notes.append(f"[omitted: image {i}: the images of one reply are capped "
                               f"at {IMAGES_TOTAL_CAP} base64 characters]")
            else:
                images.append({"type": "image", "data": value, "mimeType": mime})
                total += len(value)
            continue
        shown = next((m for m in _TEXT_MIMES if isinstance(data.get(m), str)), None)
        if shown is None:
            continue
        value = mt.untrusted(data[shown])
        if len(value) > RICH_CAP:
            b.notes.append(f"[omitted: result {i} ({shown}) cut to {RICH_CAP} of "
                           f"{len(value)} characters]")
            value = mt.cut_to_fit(value, RICH_CAP)
        b.lines.append(f"[result: {shown}]")
        b.lines.append(value.rstrip("\n"))
    return images


def exit_line(exit_code: int, fault: Any) -> str:
    if fault is None:
        return f"[exit {exit_code}]"
    return (f"[exit {exit_code}, sandbox fault: {mt.one_line(str(fault.type), 40)}] "
            f"{mt.one_line(str(fault.message))}")


def _finish(b: _Builder) -> str:
    body = "\n".join(b.lines + b.notes)
    if len(body) > TEXT_CAP:
        body = mt.cut_to_fit(body, TEXT_CAP - 80) + \
            f"\n[omitted: the reply text was cut to {TEXT_CAP} characters]"
    return body


def run_code(result: Any, structured: bool) -> Dict[str, Any]:
    """An ExecutionResult as a CallToolResult."""
    b = _Builder()
    stdout = b.stream(None, result.stdout or "", "stdout")
    stderr = b.stream("[stderr]", getattr(result, "code_stderr", "") or "", "stderr")
    images = _images_and_texts(getattr(result, "results", None) or (), b)
    b.lines.append(exit_line(int(result.exit_code), result.fault))
    files = list(getattr(result, "files", None) or ())
    if files:
        b.lines.append(mt.files_line([f.path for f in files]))
    if getattr(result, "truncated", False):
        b.notes.append("[omitted: output past the sandbox's capture limit was discarded]")
    reply: Dict[str, Any] = {
        "content": images + [text(_finish(b))],
        "isError": not bool(result.success),
    }
    if structured:
        fault = result.fault
        reply["structuredContent"] = {
            "stdout": stdout,
            "code_stderr": stderr,
            "exit_code": int(result.exit_code),
            "fault": None if fault is None else {"type": str(fault.type),
                                                 "message": mt.one_line(str(fault.message))},
            "files": [{"path": str(f.path), "size": int(f.size), "change": str(f.change)}
                      for f in files],
        }
    return reply


def read_file(path: str, data: bytes) -> Dict[str, Any]:
    """A whole file (at most READ_CAP_BYTES: the Sandbox refuses more)."""
    mime = sniff_image(data)
    if mime is not None:
        encoded = base64.b64encode(data).decode("ascii")
        if len(encoded) <= IMAGE_CAP:
            return {"content": [{"type": "image", "data": encoded, "mimeType": mime}],
                    "isError": False}
        return tool_error(f"{mt.escape_name(path)} is a {mime} of {len(data)} bytes, over the "
                          f"{IMAGE_CAP}-character image cap of one reply")
    try:
        body = data.decode("utf-8")
    except UnicodeDecodeError:
        return {"content": [text(f"{mt.escape_name(path)} is a binary file of {len(data)} "
                                 "bytes; read_file shows text and images only.")],
                "isError": False}
    body = mt.clean(body)
    if len(body) > READ_TEXT_CAP:
        body = mt.cut_to_fit(body, READ_TEXT_CAP - 80) + \
            f"\n[omitted: cut to {READ_TEXT_CAP} of {len(body)} characters]"
    return {"content": [text(body)], "isError": False}


def list_files(infos: Sequence[Any]) -> Dict[str, Any]:
    lines = [f"{mt.escape_name(str(f.path))}\t{int(f.size)}"
             for f in sorted(infos, key=lambda f: str(f.path))[:LIST_LINES_CAP]]
    if len(infos) > LIST_LINES_CAP:
        lines.append(f"[omitted: {len(infos) - LIST_LINES_CAP} more files]")
    if not lines:
        lines = ["(the workspace holds no files)"]
    return {"content": [text("\n".join(lines))], "isError": False}


def write_file(path: str, size: int) -> Dict[str, Any]:
    return {"content": [text(f"wrote {size} bytes to {mt.escape_name(path)}")],
            "isError": False}
