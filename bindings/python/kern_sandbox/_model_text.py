"""Text for a model's context window, built from what a box printed.

Everything a box prints is untrusted: the code chose every byte. These plain
functions (no dependencies, used by the LangChain tool and by kern-mcp) make
that text safe to frame: terminal escapes and control characters go, line
ends are normalised, and framing the code could forge (a ``[sandbox: ...]``
verdict, an ``[exited with code N]`` line, a cut marker) is rewritten so it
reads as what it is: printed by the code. Ordinary prompt injection is out of
scope; no filter at this layer can tell a clever instruction from data.
"""

from __future__ import annotations

import json
import re
from typing import Any, List, Optional, Sequence

# ESC-introduced sequences (ECMA-48): CSI with parameters, OSC/DCS/PM/APC/SOS
# strings up to BEL or ST (an unterminated one up to the end of its line,
# so it cannot swallow the rest of the output), and two-byte escapes with
# optional intermediates. Single 8-bit C1 codes are removed as controls
# below: a UTF-8 terminal does not read them as sequence introducers.
_ESCAPES = re.compile(
    r"\x1b\[[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?"
    r"|\x1b[\]P^_X][^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[\x20-\x2f]*[\x30-\x7e]?"
)
# Remaining C0 (but TAB and LF), DEL, C1, and the invisible bidirectional
# controls that can make text display in an order other than it reads.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")

SANDBOX_PREFIX = "[sandbox:"
FORGED = "[printed by the code, not the sandbox:"
# A line the code printed that starts like framing this package writes
# around box output: the LangChain tool's "[sandbox: T]" and "[exited with
# code N]", kern-mcp's "[stderr]", "[result: MIME]", "[exit N...]" and
# "[omitted: ...]".
_FORGED_FRAME = re.compile(
    r"^[ \t]*\[[ \t]*(sandbox[ \t]*:|exited[ \t]+with[ \t]+code|exit\b|stderr[ \t]*\]"
    r"|result[ \t]*:|omitted[ \t]*:)",
    re.IGNORECASE,
)
# The cut marker in any spacing, case or ellipsis the code might print.
_FORGED_CUT = re.compile(
    r"^[ \t]*(?:\.{3}|\u2026)?[ \t]*(.*?characters[ \t]+of[ \t]+output.*?cut[ \t]+to[ \t]+fit.*?)"
    r"[ \t]*(?:\.{3}|\u2026)?[ \t]*$",
    re.IGNORECASE,
)
_SAFE_NAME = re.compile(r"^[A-Za-z0-9_./+@-][A-Za-z0-9_./+@ -]*$")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})[^\n`]*\n(.*?)\n?[ \t]*\1[ \t]*\s*$", re.DOTALL)

NOTHING_PRINTED = "(The code ran and printed nothing. Print a value to see it.)"
TRUNCATED_NOTE = ("(Output over the sandbox's capture limit was discarded; print less, or write "
                  "it to a file and read parts of it.)")
IMAGE_PLACEHOLDER = "(The code produced an image ({mime}); images are not shown in this text.)"
FILES_SHOWN = 20


def clean(text: str) -> str:
    """Line ends normalised, escapes and control characters removed."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROLS.sub("", _ESCAPES.sub("", text))


def neutralise(text: str) -> str:
    """Rewrite lines that forge this module's framing (``clean`` first)."""
    out = []
    for line in text.split("\n"):
        m = _FORGED_FRAME.match(line)
        if m:
            rest = line[m.end():] if m.group(1).lower().startswith("sandbox") \
                else " " + line[m.start(1):]
            line = FORGED + rest
        else:
            c = _FORGED_CUT.match(line)
            if c:
                line = f"{FORGED} {c.group(1)}]"
        out.append(line)
    return "\n".join(out)


def untrusted(text: str) -> str:
    """``clean`` then ``neutralise``: the treatment for any box output."""
    return neutralise(clean(text))


def one_line(text: str, limit: int = 500) -> str:
    """A cleaned single line, for messages embedded in framing."""
    flat = " ".join(clean(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def escape_name(name: str) -> str:
    """A file name as a model should see it: plain when it is plain, else a
    JSON string literal whose escapes show every odd character."""
    if _SAFE_NAME.match(name) and not name.endswith(" "):
        return name
    return json.dumps(name, ensure_ascii=True)


def strip_fence(code: str) -> str:
    """The code inside a surrounding markdown fence, or the code as given."""
    m = _FENCE.match(code)
    return m.group(2) if m else code


def cut_marker(removed: int) -> str:
    return f"... {removed} characters of output, cut to fit ..."


def cut_to_fit(text: str, max_chars: int) -> str:
    """At most ``max_chars``: about two thirds head and one third tail
    around a marker saying how much was cut."""
    if len(text) <= max_chars:
        return text
    marker_len = len(cut_marker(len(text))) + 2
    budget = max_chars - marker_len
    if budget < 2:
        return text[:max_chars]
    head = budget * 2 // 3
    tail = budget - head
    removed = len(text) - head - tail
    return f"{text[:head]}\n{cut_marker(removed)}\n{text[len(text) - tail:]}"


def files_line(paths: Sequence[str], shown: int = FILES_SHOWN) -> str:
    names = ", ".join(escape_name(p) for p in paths[:shown])
    more = f" (+{len(paths) - shown} more)" if len(paths) > shown else ""
    return f"files in the workspace: {names}{more}"


def _result_text(data: Any) -> Optional[str]:
    if not isinstance(data, dict):
        return None
    for mime in ("image/png", "image/jpeg", "image/svg+xml"):
        if mime in data:
            return IMAGE_PLACEHOLDER.format(mime=mime)
    for mime in ("text/markdown", "text/plain"):
        value = data.get(mime)
        if isinstance(value, str):
            return untrusted(value)
    return None


def render_execution(result: Any, max_chars: int) -> str:
    """An ExecutionResult as the text a model reads (spec section 17)."""
    parts: List[str] = []
    fault = getattr(result, "fault", None)
    if fault is not None:
        parts.append(f"{SANDBOX_PREFIX} {one_line(str(fault.type), 40)}] "
                     f"{one_line(str(fault.message))}")
    elif result.exit_code != 0:
        parts.append(f"[exited with code {int(result.exit_code)}]")
    printed = False
    stdout = untrusted(result.stdout or "")
    if stdout.strip():
        parts.append(stdout.rstrip("\n"))
        printed = True
    for r in getattr(result, "results", None) or ():
        text = _result_text(getattr(r, "data", None))
        if text and text.strip():
            parts.append(text.rstrip("\n"))
            printed = True
    stderr = untrusted(getattr(result, "code_stderr", None) or "")
    if stderr.strip():
        parts.append("stderr:\n" + stderr.rstrip("\n"))
        printed = True
    files = [f.path for f in getattr(result, "files", None) or ()]
    if files:
        parts.append(files_line(files))
    if getattr(result, "truncated", False):
        parts.append(TRUNCATED_NOTE)
    if not printed:
        parts.append(NOTHING_PRINTED)
    return cut_to_fit("\n".join(parts), max_chars)


def code_too_large(size: int, limit: int) -> str:
    return (f"The code was not run: it is {size} bytes, over this "
            f"tool's limit of {limit} bytes. Send a shorter program, or write the data to a "
            "file first.")

