"""kern_sandbox: run untrusted code in a fresh kern box, from Python.

Each call runs in its own throw-away box (``kern box``): its own user,
pid, mount and network namespaces, a read-only root, no network, memory,
task and time limits, a seccomp filter, no capabilities. The package
drives the ``kern`` binary and never re-implements isolation; it needs
kern on PATH (or $KERN_BIN) and the standard library only.

    import kern_sandbox as kern
    print(kern.run_code("print(6*7)", image="host").stdout)      # 42

    with kern.Sandbox(image="host") as sbx:                      # a session
        sbx.write_file("data.csv", "a,b\\n1,2\\n")
        r = sbx.run_code("print(open('data.csv').read())")       # same files,
        r.fault, r.exit_code, r.files, r.results                 # a fresh box

File state persists in the session's workspace (/workspace in the box);
processes do not. When memory should persist too, ``sbx.kernel()`` keeps
one warm python3 in a long-lived box (cells share state, a cell costs well
under a millisecond); ``Sandbox(prewarm=N)`` starts boxes before the calls
that use them (one call per box); ``Sandbox(persist=True)`` reuses one
resident box through ``kern exec``. A result's ``fault`` is set only when the sandbox acted
(timeout, oom, escape_blocked, killed, startup_failed, exec_failed); an
exception in the code is a non-zero ``exit_code`` with ``fault`` None.

Public names: run_code, run, Sandbox, Kernel, ExecutionResult,
SandboxFault, FileInfo, Result, SandboxError, MountRefused, __version__.
Each has its own help().
"""

from ._version import __version__
from .errors import MountRefused, SandboxError
from .kernel import Kernel
from .results import ExecutionResult, FileInfo, Result, SandboxFault
from .sandbox import Sandbox, run, run_code

__all__ = [
    "ExecutionResult",
    "FileInfo",
    "Kernel",
    "MountRefused",
    "Result",
    "Sandbox",
    "SandboxError",
    "SandboxFault",
    "__version__",
    "run",
    "run_code",
]
