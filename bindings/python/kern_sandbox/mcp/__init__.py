"""kern-mcp: a Model Context Protocol server (stdio) that runs code in kern.

An MCP client (Claude Desktop, Cursor, an agent framework) starts
``kern-mcp`` and talks newline-delimited JSON-RPC 2.0 on its stdin and
stdout. The server offers ``run_code`` (python, bash, sh, and node when the
image has it), ``write_file``, ``read_file`` and ``list_files`` on one
workspace per connection, each call a fresh network-off box; with
``KERN_MCP_INSTALL_ALLOW`` set, also ``install_packages``. Settings come
from ``KERN_MCP_*`` variables (``man kern-mcp``).

Modules: ``framing`` (lines on file descriptors, the 8 MiB bound),
``jsonrpc`` (decoding hostile frames), ``versions`` (negotiation),
``settings``, ``tools`` (schemas and argument checks), ``reply`` (results
as MCP content, with caps), ``session`` (the Sandbox behind a connection),
``server`` (dispatch, progress, cancellation) and ``main`` below.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import List, Optional

from .framing import FrameReader, FrameWriter
from .settings import Settings, SettingsError

USAGE = """\
usage: kern-mcp [--help | --version]

An MCP server on stdin/stdout that runs code in kern boxes. Configure it
with environment variables (see `man kern-mcp`):
  KERN_MCP_IMAGE      image for every box (default python:3.12-slim)
  KERN_MCP_SETUP      setup command run once, network on (e.g. pip install pandas)
  KERN_MCP_MEMORY_MB  memory cap per box in MiB (default 1024; 0: kern's or a profile's)
  KERN_MCP_TIMEOUT    seconds per call (default 60)
  KERN_MCP_WORKSPACE  workspace directory (default: a temporary one)
  KERN_MCP_PROFILES   kern.toml profile tokens, comma-separated
  KERN_MCP_KERNEL     1: python runs in one warm interpreter
  KERN_MCP_QUIET      0: keep kern's notes (default: quiet)
  KERN_MCP_TMPFS_MB   size of /tmp in MiB (0: no /tmp tmpfs)
  KERN_MCP_INSTALL_ALLOW  domains for the install_packages tool (off when unset)
  KERN_MCP_TRACK_FILES    1: report the files each call created or modified
  KERN_BIN            the kern binary (default: kern on PATH)
Exit status: 0 when the client closed the connection, 2 for a bad setting.
"""


def _version() -> str:
    try:
        from .._version import __version__
    except ImportError:
        return "0"
    return str(__version__)


def _private_stdio() -> "tuple[int, int]":
    """Move the protocol to private descriptors: fd 0 becomes /dev/null and
    fd 1 a copy of stderr, so nothing a library or child prints can land in
    the JSON stream, and no child can read the client's messages."""
    proto_in = os.dup(0)
    proto_out = os.dup(1)
    os.set_inheritable(proto_in, False)
    os.set_inheritable(proto_out, False)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return proto_in, proto_out


def _on_signal(signum: int, _frame: object) -> None:
    # Unwinds the reading loop, whose cleanup stops the boxes in flight.
    raise SystemExit(128 + signum)


def main(argv: Optional[List[str]] = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] in ("-h", "--help"):
        sys.stdout.write(USAGE)
        return 0
    if args and args[0] == "--version":
        print(f"kern-mcp {_version()}")
        return 0
    if args:
        print(f"kern-mcp: unknown argument {args[0]!r} (try --help)", file=sys.stderr)
        return 2
    from .server import Server
    from .session import Session, check_settings

    try:
        settings = Settings.from_env(os.environ)
        check_settings(settings)
    except SettingsError as e:
        print(f"kern-mcp: {e}", file=sys.stderr)
        return 2
    if settings.quiet:
        os.environ["KERN_QUIET"] = "1"

    proto_in, proto_out = _private_stdio()
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _on_signal)
    server = Server(Session(settings), FrameReader(proto_in), FrameWriter(proto_out), _version())
    try:
        server.serve()
    except KeyboardInterrupt:
        return 130
    return 0
