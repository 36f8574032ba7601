"""Exceptions the package raises.

A box that ran and was stopped by the sandbox is not an exception: it comes
back as an ExecutionResult whose ``fault`` says what happened. These are
raised for programmer and configuration errors and for boxes that never
started (kern's exit 125, any failed kernel() start).
"""


class SandboxError(RuntimeError):
    """A configuration error, a refused request, or a box that never started."""


class MountRefused(SandboxError):
    """A mount or tmpfs the package refuses to set up, even when asked.

    Raised before any box starts, so a caller can tell "this sandbox will not
    do that" from "the sandbox broke".
    """
