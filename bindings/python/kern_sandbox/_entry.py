"""Console entry points."""

from __future__ import annotations

import importlib
import sys


def mcp_main() -> int:
    """``kern-mcp``: the MCP stdio server (kern_sandbox.mcp)."""
    try:
        server = importlib.import_module("kern_sandbox.mcp")
    except ModuleNotFoundError as e:
        if e.name != "kern_sandbox.mcp":
            raise
        sys.stderr.write("kern-mcp: the MCP server is not part of this build of kern-sandbox "
                         "yet\n")
        return 1
    return int(server.main() or 0)
