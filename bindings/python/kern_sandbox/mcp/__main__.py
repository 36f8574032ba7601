"""``python3 -m kern_sandbox.mcp``: the same as the ``kern-mcp`` command."""

from . import main

raise SystemExit(main())
