"""MCP protocol revisions this server speaks, and what each one changes.

The server is "legacy" in the 2026-07-28 revision's terms: it opens every
session with the ``initialize`` handshake. A client of that revision probes
with ``server/discover`` first; this server answers the probe at once with
"method not found", which that revision tells a dual-era client to read as
"fall back to initialize" (any error that is not a modern one).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Tuple

# Oldest first; negotiation answers the newest when the client's is unknown.
SUPPORTED: Tuple[str, ...] = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
NEWEST = SUPPORTED[-1]


def negotiate(requested: Any) -> str:
    """The client's version when supported, else the newest one we speak."""
    return requested if isinstance(requested, str) and requested in SUPPORTED else NEWEST


@dataclass(frozen=True)
class Features:
    """Per-revision differences the server acts on."""

    version: str
    # 2025-03-26: tool annotations, a message on progress notifications,
    # JSON-RPC batches (dropped again in 2025-06-18).
    annotations: bool
    progress_message: bool
    batches: bool
    # 2025-06-18: tool ``title``, ``outputSchema`` and ``structuredContent``.
    structured: bool
    # 2025-11-25: invalid tool arguments come back as a tool result with
    # isError (so the model can correct itself), not as error -32602.
    argument_errors_as_results: bool

    @classmethod
    def of(cls, version: str) -> "Features":
        at_least = SUPPORTED.index(version)
        return cls(
            version=version,
            annotations=at_least >= 1,
            progress_message=at_least >= 1,
            batches=version == "2025-03-26",
            structured=at_least >= 2,
            argument_errors_as_results=at_least >= 3,
        )
