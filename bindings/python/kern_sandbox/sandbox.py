"""Sandbox and the one-shot calls (spec §2-§4, §6, §8).

A Sandbox is a workspace plus a checked configuration. Each call is a
fresh ``kern box`` on that workspace: file state persists between calls,
processes do not.
"""

from __future__ import annotations

import dataclasses
import os
import secrets
import shutil
import stat
import tempfile
import threading
import weakref
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple, TypeVar

from . import _pyc
from ._argv import (DEPS, NET_HOST, NET_NONE, PYC_DIR, BoxRequest, box_argv, box_name,
                    box_user, deadline_backstop)
from ._config import SandboxConfig, check_timeout, make_config
from ._imagecache import HOST_IMAGE, is_cached, user_is_root
from ._locate import Kern, locate
from ._runner import RESULTS_MAX, parse_results, runner_source
from ._spawn import BoxProcess, Callback, Captured, collect, run_quiet
from .errors import SandboxError
from ._account import Account
from .kernel import Kernel
from .pool import Pool
from .resident import Resident
from .faults import Observation, classify, split_stderr
from .results import ExecutionResult, FileInfo
from .rules import WORKSPACE, MountSpec
from .workspace import Workspace, remove_tree

LANGUAGES = ("python", "bash", "sh", "node")
# bash/sh/node code longer than this goes to a file instead of argv.
ARGV_CODE_MAX = 128 << 10
PULL_TIMEOUT_S = 900
SETUP_MIN_TIMEOUT_S = 120
RECOVER_TIMEOUT_S = 30
PIP_INSTALL = "pip install "
# Receives a box's stop() as soon as its kern process exists.
OnStart = Callable[[Callable[[], None]], None]
_T = TypeVar("_T")
PIP_TARGET = ("pip install --target /workspace/.deps --no-cache-dir "
              "--disable-pip-version-check ")


def setup_command(setup: str) -> List[str]:
    """``sh -c SETUP``; a leading ``pip install `` installs into .deps."""
    if setup.startswith(PIP_INSTALL):
        setup = PIP_TARGET + setup[len(PIP_INSTALL):]
    return ["sh", "-c", setup]


class Sandbox:
    """A session: one workspace, a checked configuration, one fresh box per call.

    Every argument is a keyword; every relaxation of isolation is one of
    them, and bad values raise SandboxError (MountRefused for mounts and
    tmpfs) before any box starts. Arguments (defaults in parentheses):

    image ("python:3.12-slim")  OCI image, or "host" (the host's /usr, read-only)
    setup (None)         shell command run once in a separate setup box with the
                         network on (the only network window); "pip install X"
                         installs into /workspace/.deps
    workspace (None)     None: a private temporary directory deleted on close;
                         a path: kept (created if missing)
    memory_mb (512)      memory cap in MiB; None: kern's default or a profile's
    cpus (None)          CPU cap in cores (1.5); None: uncapped
    pids (256)           task cap (fork-bomb guard); None: kern's default
    timeout_s (30)       wall-clock limit of each call, enforced by this package
    network (False)      True shares the host network with every call
    mounts (None)        {host_src: box_dst} or {host_src: (box_dst, "ro"|"rw")};
                         the host's system paths, $HOME, credential directories
                         and kern's own state are refused
    tmpfs (None)         None: /tmp of min(64, memory_mb // 2) MiB; {}: none;
                         {"/tmp": "512m"}: sizes with a unit, within memory_mb
    profiles (None)      kern.toml tokens: ["vcpu:heavy", "vdisk:scratch"]
    max_output_bytes (64 MiB)  cap on captured stdout and stderr, each
    deps_readonly (True) .deps is read-only to calls (writes get EROFS)
    security_profile (None)    "untrusted": seccomp allowlist, no capabilities,
                         read-only root
    apparmor (None)      a loaded AppArmor profile to enter (fails closed)
    require_limits (False)     refuse to start unless memory and pids caps hold
    cap_drop (("ALL",))  capabilities to drop; () keeps kern's default set
    enforce_limits (True)      False: best-effort caps, no systemd scope
    egress_allow (None)  domains calls may reach through kern's proxy
    env (None)           extra box environment {name: value}
    user (None)          box account; None: the image's USER
    prewarm (0)          keep N boxes started ahead, each a booted python3 that
                         has run nothing; a Python call without callbacks takes
                         one (then it is destroyed: one call per box) and a
                         worker thread starts the next; a box killed while it
                         waits is dropped. Covers a burst, not a rate
    persist (False)      one resident box per workspace, reused by every call
                         through `kern exec`: processes and /tmp live on between
                         calls; a named workspace keeps it for the next session
                         (up to an hour) until destroy(). Not with prewarm
    pyc_cache (True)     share compiled bytecode per image (not for "host")
    track_files (True)   compute ExecutionResult.files

    Use it as a context manager (``with Sandbox() as sbx:``) or call
    ``close()``; a temporary workspace is also removed when the object is
    collected. Methods: run_code, run, write_file, read_file, list_files,
    snapshot, restore, kernel (one warm interpreter: state across cells),
    destroy (persist=True: stop the resident box).
    """

    def __init__(self, *, image: str = "python:3.12-slim", setup: Optional[str] = None,
                 workspace: Optional[str] = None, memory_mb: Optional[int] = 512,
                 cpus: Optional[float] = None, pids: Optional[int] = 256,
                 timeout_s: float = 30, network: bool = False,
                 mounts: Optional[Mapping[str, MountSpec]] = None,
                 tmpfs: Optional[Mapping[str, str]] = None,
                 profiles: Optional[List[str]] = None, max_output_bytes: int = 64 << 20,
                 deps_readonly: bool = True, security_profile: Optional[str] = None,
                 apparmor: Optional[str] = None, require_limits: bool = False,
                 cap_drop: Sequence[str] = ("ALL",), enforce_limits: bool = True,
                 egress_allow: Optional[List[str]] = None, prewarm: int = 0,
                 env: Optional[Mapping[str, str]] = None, user: Optional[str] = None,
                 persist: bool = False, pyc_cache: bool = True,
                 track_files: bool = True) -> None:
        args = dict(locals())
        del args["self"]
        self.config: SandboxConfig = make_config(args)
        if self.config.persist and self.config.prewarm:
            raise SandboxError("persist=True reuses one resident box; prewarm=N starts a box per "
                               "call: choose one")
        self._kern: Kern = locate()
        self._lock = threading.Lock()
        self._ws: Optional[Workspace] = None
        self._private: Optional[str] = None
        self._pyc_ready: Optional[str] = None
        self._pyc_build: Optional[_pyc.Build] = None
        self._pyc_stop: Optional[weakref.finalize] = None
        self._closed = False
        self._finalizer: Optional[weakref.finalize] = None
        # Kernels and the prewarm pool: ended with the session.
        self._children: "weakref.WeakSet[Kernel | Pool]" = weakref.WeakSet()
        self._pool: Optional[Pool] = None
        self._resident: Optional[Resident] = None
        self._account: Optional[Account] = None

    # -- life cycle ------------------------------------------------------

    def __enter__(self) -> "Sandbox":
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def open(self) -> "Sandbox":
        """Create the workspace, pull the image unless kern has it, run
        ``setup=`` and start the bytecode cache. Called by ``with`` and by
        the first call; safe to call again."""
        with self._lock:
            if self._closed:
                raise SandboxError("this Sandbox is closed")
            if self._ws is not None:
                return self
            self._kern = locate()
            ws = Workspace(self.config.workspace)
            private = tempfile.mkdtemp(prefix="kern-sandbox-")
            self._finalizer = weakref.finalize(self, _cleanup, ws, private)
            self._ws, self._private = ws, private
            try:
                self._prepare()
            except BaseException:
                self._closed = True
                self._finalizer()
                raise
        return self

    def _prepare(self) -> None:
        cfg = self.config
        if cfg.image != HOST_IMAGE and not is_cached(cfg.image):
            run_quiet(self._kern, ["pull", cfg.image], PULL_TIMEOUT_S)
        account = box_user(cfg)
        if account and not user_is_root(account):
            # A non-root box account: its host uid, and ACLs for it.
            self._account = Account(self, account)
            self._account.grant_tree()
        if cfg.setup is not None:
            self._run_setup(cfg.setup)
        if cfg.pyc_cache and cfg.image != HOST_IMAGE:
            self._pyc_ready = _pyc.usable(cfg.image)
            if self._pyc_ready is None:
                self._pyc_build = _pyc.Build(self._kern, cfg.image, cfg.enforce_limits)
                # A session never closed still stops its build box at exit.
                self._pyc_stop = weakref.finalize(self, self._pyc_build.stop)
        if cfg.prewarm:
            self._pool = Pool(self, cfg.prewarm)
            self._children.add(self._pool)
        if cfg.persist:
            self._resident = Resident(self)

    def close(self) -> None:
        """Stop the kernels, the pool and a bytecode-cache build this
        session started (its box is stopped and reaped: a cache left
        unbuilt is built by a later session), delete a temporary workspace
        and the package's private files. The Sandbox cannot be used
        afterwards."""
        for child in list(self._children):
            child.close()
        if self._pyc_stop is not None:
            self._pyc_stop()
        # A temporary workspace goes now: so does the box that binds it.
        if self._resident is not None and self.config.workspace is None:
            self._resident.destroy()
        if self._account is not None and self.config.workspace is None and self._ws is not None:
            self._account.open_up()
        with self._lock:
            self._closed = True
            if self._finalizer is not None:
                self._finalizer()

    @property
    def workspace(self) -> str:
        """The host path of the workspace (the box sees it as /workspace)."""
        return self._workspace().path

    def _workspace(self) -> Workspace:
        if self._closed:
            raise SandboxError("this Sandbox is closed")
        if self._ws is None:
            self.open()
        assert self._ws is not None
        return self._ws

    @property
    def _pyc_dir(self) -> Optional[str]:
        """The bytecode cache to bind: found at open, or built since."""
        if self._pyc_ready is None and self._pyc_build is not None:
            self._pyc_ready = self._pyc_build.result
        return self._pyc_ready

    # -- setup and .deps (§6) ----------------------------------------------

    def _has_deps(self) -> bool:
        try:
            st = os.stat(".deps", dir_fd=self._workspace().fd, follow_symlinks=False)
        except OSError:
            return False
        return stat.S_ISDIR(st.st_mode)

    def _run_setup(self, setup: str) -> None:
        limit = max(self.config.timeout_s, SETUP_MIN_TIMEOUT_S)
        done = self._box(setup_command(setup), limit, network=NET_HOST, read_only=False,
                         tmpfs=False, deps_ro=False)
        verdict = classify(self._observe(done, limit))
        if done.exit_code != 0 or verdict.fault is not None:
            text = split_stderr(_text(done.stderr))[0].strip() or _text(done.stdout).strip()
            why = verdict.fault.message if verdict.fault else text[-2000:]
            raise SandboxError("setup failed (exit %d): %s" % (done.exit_code, why))
        if self.config.deps_readonly and self._has_deps():
            # Bytecode compiled now, by a network-off box, is the only
            # bytecode .deps will hold: later calls cannot write there.
            self._box(["python3", "-m", "compileall", "-q", DEPS], limit, network=NET_NONE,
                      deps_ro=False)

    # -- one box -----------------------------------------------------------

    def env_lines(self, pyc: bool) -> str:
        """The env-file of a box: PYTHONPATH=/workspace/.deps, ``env=``, and
        PYTHONPYCACHEPREFIX when the bytecode cache is bound."""
        env = {"PYTHONPATH": DEPS}
        env.update(self.config.env)
        if pyc:
            env["PYTHONPYCACHEPREFIX"] = PYC_DIR
        return "".join("%s=%s\n" % kv for kv in env.items())

    def env_file_path(self) -> str:
        """A fresh name for an env-file in the private 0700 directory."""
        self._workspace()
        assert self._private is not None
        return os.path.join(self._private, "env-" + secrets.token_hex(6))

    def write_env_file(self, request: BoxRequest) -> None:
        """Write ``request.env_file`` (mode 0600, never through a planted name)."""
        assert request.env_file is not None
        fd = os.open(request.env_file,
                     os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(self.env_lines(request.pyc_dir is not None))

    def box_request(self, command: Sequence[str], timeout_s: float, *, name: Optional[str] = None,
                    network: str = "session", read_only: bool = True, tmpfs: bool = True,
                    deps_ro: Optional[bool] = None, env_file: Optional[str] = None,
                    extra: Sequence[str] = (), kern_timeout: Optional[int] = None) -> BoxRequest:
        """The BoxRequest of a box of this session (kernel, pool and resident
        boxes are built from it too)."""
        if deps_ro is None:
            deps_ro = self.config.deps_readonly and self._has_deps()
        return BoxRequest(
            name=name or box_name(), command=list(command),
            kern_timeout=kern_timeout if kern_timeout is not None else deadline_backstop(timeout_s),
            read_only=read_only, deps_ro=deps_ro,
            pyc_dir=self._pyc_dir if read_only else None, network=network, tmpfs=tmpfs,
            env_file=env_file, extra=tuple(extra))

    def box_argv(self, request: BoxRequest) -> List[str]:
        """The kern argv (after the binary) for ``request``; re-checks that
        the kern binary is still kern."""
        self._kern = locate()
        return box_argv(self.config, self._workspace().path, request)

    def _box(self, command: Sequence[str], timeout_s: float,
             on_stdout: Optional[Callback] = None, on_stderr: Optional[Callback] = None,
             on_start: Optional[OnStart] = None, **request: object) -> Captured:
        """Run one box to its end (or deadline) and return what it left.

        Its env-file is an anonymous memory file kern inherits and reads as
        /proc/self/fd/N: nothing is written to disk or left to delete (a
        file created and unlinked on the caller's disk per call cost ten
        times as much); a file in the private directory where there is no
        memfd_create."""
        req = self.box_request(command, timeout_s, **request)  # type: ignore[arg-type]
        env_fd = _memfd(self.env_lines(req.pyc_dir is not None))
        env_file = self.env_file_path() if env_fd is None else "/proc/self/fd/%d" % env_fd
        try:
            req = dataclasses.replace(req, env_file=env_file)
            if env_fd is None:
                self.write_env_file(req)
            argv = self.box_argv(req)
            box = BoxProcess(self._kern, argv, req.name, alive=True,
                             no_scope=not self.config.enforce_limits,
                             pass_fds=() if env_fd is None else (env_fd,))
            if env_fd is not None:
                os.close(env_fd)  # kern holds its own copy
                env_fd = None
            if on_start is not None:
                on_start(box.stop)
            return collect(box, timeout_s=timeout_s, max_output_bytes=self.config.max_output_bytes,
                           on_stdout=on_stdout, on_stderr=on_stderr)
        finally:
            if env_fd is not None:
                os.close(env_fd)
            elif not env_file.startswith("/proc/"):
                try:
                    os.unlink(env_file)
                except OSError:
                    pass

    def _observe(self, done: Captured, timeout_s: float) -> Observation:
        return Observation(
            exit_code=done.exit_code, started=done.started, stdout=_text(done.stdout),
            stderr=_text(done.stderr), deadline_fired=done.deadline_fired, alive=done.alive,
            alive_open=done.alive_open, memory_mb=self.config.memory_mb, timeout_s=timeout_s,
            image=self.config.image)

    def _call(self, command: Sequence[str], timeout_s: Optional[float],
              on_stdout: Optional[Callback], on_stderr: Optional[Callback],
              results_file: Optional[str] = None,
              on_start: Optional[OnStart] = None) -> ExecutionResult:
        """One call: a fresh box, classified, with files and rich results."""
        limit = self.config.timeout_s if timeout_s is None else check_timeout(timeout_s)
        ws = self._workspace()
        before = ws.stamps() if self.config.track_files else {}
        if self._resident is not None:
            done = self._resident.run(command, limit, on_stdout, on_stderr, on_start)
            return self.result(done, limit, before, results_file, resident_exec=True)
        done = self._box(command, limit, on_stdout, on_stderr, on_start)
        return self.result(done, limit, before, results_file)

    def result(self, done: Captured, timeout_s: float, before: Dict[str, Tuple[int, int]],
               results_file: Optional[str] = None, resident_exec: bool = False) -> ExecutionResult:
        """Turn what a box left into an ExecutionResult (or raise on 125)."""
        ws = self._workspace()
        obs = self._observe(done, timeout_s)
        if resident_exec:
            obs = dataclasses.replace(obs, resident_exec=True,
                                      exec_reports_start=self._kern.exec_reports_start)
        verdict = classify(obs)
        if verdict.raises:
            assert verdict.fault is not None
            raise SandboxError(verdict.fault.message)
        results = []
        if results_file is not None:
            blob = ws.read_scratch(results_file, RESULTS_MAX)
            results = parse_results(blob) if blob else []
        files: List[FileInfo] = []
        if self.config.track_files:
            files = ws.changes(before, ws.stamps())
        code_stderr, notes = split_stderr(obs.stderr)
        return ExecutionResult(
            stdout=obs.stdout, stderr=obs.stderr, exit_code=verdict.exit_code,
            duration_ms=done.duration_ms, fault=verdict.fault, files=files, results=results,
            truncated=done.truncated, code_stderr=code_stderr, runtime_notes=notes)

    # -- the calls -----------------------------------------------------------

    def run_code(self, code: str, language: str = "python", *, timeout_s: Optional[float] = None,
                 on_stdout: Optional[Callback] = None, on_stderr: Optional[Callback] = None,
                 on_start: Optional[OnStart] = None) -> ExecutionResult:
        """Run ``code`` in a fresh, network-off box on the workspace.

        ``language``: "python" (rich results: a trailing expression,
        display(obj), open matplotlib figures), "bash", "sh" or "node"; an
        interpreter the image lacks gives an ``exec_failed`` fault.
        ``timeout_s`` overrides the session's limit for this call;
        ``on_stdout``/``on_stderr`` receive output chunks as they arrive.
        ``on_start`` is called with a ``stop()`` function as soon as the
        box's kern process exists: calling it (from any thread) stops the
        box, and the call returns with a ``killed`` or ``timeout`` fault
        (kern-mcp cancels requests with it).
        """
        if not isinstance(code, str):
            raise SandboxError("code must be a str, not %s" % type(code).__name__)
        if language not in LANGUAGES:
            raise SandboxError("language must be one of %s, not %r" % (", ".join(LANGUAGES),
                                                                      language))
        ws = self._workspace()
        if language == "python" and self._pool is not None and on_stdout is None \
                and on_stderr is None:
            limit = self.config.timeout_s if timeout_s is None else check_timeout(timeout_s)
            pooled = self._pool.take(limit)
            if pooled is not None:
                before = ws.stamps() if self.config.track_files else {}
                if on_start is not None:
                    on_start(pooled.box.kill)
                result = self._pool.serve(pooled, code, limit)
                if self.config.track_files:
                    result.files = ws.changes(before, ws.stamps())
                return result
        cid = secrets.token_hex(4)
        if language == "python":
            cell, run, res = ".cell-%s.py" % cid, ".run-%s.py" % cid, ".res-%s.json" % cid
            ws.create_scratch(cell, code.encode("utf-8", "surrogateescape"))
            try:
                ws.create_scratch(run, runner_source("%s/%s" % (WORKSPACE, cell),
                                                     "%s/%s" % (WORKSPACE, res)).encode())
                command = ["python3", "-u", "%s/%s" % (WORKSPACE, run)]
                return self._call(command, timeout_s, on_stdout, on_stderr, res, on_start)
            finally:
                ws.remove_scratch(cell, run, res)
        if "\0" in code:
            raise SandboxError("%s code cannot contain NUL" % language)
        program = "node" if language == "node" else language
        if len(code.encode("utf-8", "surrogateescape")) <= ARGV_CODE_MAX:
            return self._call([program, "-e" if language == "node" else "-c", code], timeout_s,
                              on_stdout, on_stderr, on_start=on_start)
        cell = ".cell-%s.%s" % (cid, "js" if language == "node" else "sh")
        ws.create_scratch(cell, code.encode("utf-8", "surrogateescape"))
        try:
            return self._call([program, "%s/%s" % (WORKSPACE, cell)], timeout_s, on_stdout,
                              on_stderr, on_start=on_start)
        finally:
            ws.remove_scratch(cell)

    def run(self, argv: Sequence[str], *, timeout_s: Optional[float] = None,
            on_stdout: Optional[Callback] = None, on_stderr: Optional[Callback] = None,
            on_start: Optional[OnStart] = None) -> ExecutionResult:
        """Run a command (a non-empty list of str, never a shell string) in
        a fresh, network-off box on the workspace (``on_start``: see
        run_code)."""
        if isinstance(argv, (str, bytes)) or not isinstance(argv, (list, tuple)) or not argv:
            raise SandboxError("argv must be a non-empty list of str (never a shell string)")
        for arg in argv:
            if not isinstance(arg, str) or "\0" in arg:
                raise SandboxError("argv entries must be str without NUL, not %r" % (arg,))
        return self._call(list(argv), timeout_s, on_stdout, on_stderr, on_start=on_start)

    def kernel(self) -> Kernel:
        """Start one warm python3 in a long-lived box: a ``Kernel``.

        Cells run in the same interpreter, so in-memory state persists and
        a cell costs well under a millisecond; they share one process and
        one box. Use it as a context manager (``with sbx.kernel() as k:``)
        or call ``k.close()``; the Sandbox closes it on exit. A box that
        cannot start raises SandboxError.
        """
        k = Kernel(self)
        self._children.add(k)
        return k

    def destroy(self) -> None:
        """With persist=True: stop the resident box (``kern stop``); the
        next call starts a new one. A named workspace's resident box
        otherwise outlives the Sandbox (up to an hour), for the next
        session with the same configuration. Without persist: nothing."""
        if self._resident is not None:
            self._resident.destroy()

    # -- workspace files -------------------------------------------------------

    def write_file(self, path: str, data: "str | bytes") -> None:
        """Write a workspace file (str as UTF-8, or bytes), creating parent
        directories. Symlinks, FIFOs, devices, sockets, ``..`` and paths
        outside /workspace are refused."""
        self._with_access(lambda: self._workspace().write_file(path, data))
        if self._account is not None:
            self._account.grant_path(path)

    def read_file(self, path: str, max_bytes: Optional[int] = None) -> bytes:
        """The bytes of a regular workspace file; SandboxError over
        ``max_bytes`` or for anything that is not a regular file (a symlink
        or FIFO a box left there, for one); FileNotFoundError if missing."""
        return self._with_access(lambda: self._workspace().read_file(path, max_bytes))

    def list_files(self, subdir: str = "") -> List[FileInfo]:
        """Regular files under the workspace (or ``subdir``), sorted by path;
        .deps and the package's scratch files left out, symlinks skipped."""
        if self._account is not None:
            self._account.open_up()
        return self._workspace().list_files(subdir)

    def snapshot(self, dest: str) -> None:
        """Save the workspace to ``dest`` as a portable .tar.gz (gzip level 1,
        USTAR): regular files and directories, .deps included. /tmp of a box
        is never part of it."""
        if self._account is not None:
            self._account.open_up()
        self._workspace().snapshot(dest)

    def restore(self, src: str) -> None:
        """Replace the workspace's content with a ``snapshot``. Archives with
        absolute, ``..``, sparse, symlink, hard link, device or FIFO
        members are refused before anything changes."""
        if self._account is not None:
            self._account.open_up()
        self._workspace().restore(src)
        if self._account is not None:
            self._account.grant_tree()

    def _with_access(self, op: Callable[[], _T]) -> _T:
        """``op()``; with a non-root box account, once more after an assist
        box opened up what the account closed to the host."""
        try:
            return op()
        except PermissionError:
            if self._account is None:
                raise
            self._account.open_up()
            return op()


def _memfd(text: str) -> Optional[int]:
    """``text`` in an anonymous memory file (close-on-exec), or None where
    the platform has no memfd_create or no /proc to name it by."""
    if not _MEMFD:
        return None
    try:
        fd = os.memfd_create("kern-env", os.MFD_CLOEXEC)
    except OSError:
        return None
    try:
        data = memoryview(text.encode("utf-8"))
        while data:
            data = data[os.write(fd, data):]
    except BaseException:
        os.close(fd)
        raise
    return fd


_MEMFD = hasattr(os, "memfd_create") and os.path.isdir("/proc/self/fd")


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def _cleanup(ws: Workspace, private: str) -> None:
    """Remove a session's private directory and (if temporary) workspace."""
    try:
        ws.remove()
    finally:
        shutil.rmtree(private, ignore_errors=True)


def run_code(code: str, language: str = "python", *, timeout_s: Optional[float] = None,
             on_stdout: Optional[Callback] = None, on_stderr: Optional[Callback] = None,
             **sandbox_kwargs: object) -> ExecutionResult:
    """Run ``code`` once in a throwaway Sandbox and return its ExecutionResult.

    ``language``, ``timeout_s``, ``on_stdout`` and ``on_stderr`` go to
    ``Sandbox.run_code``; every other keyword to ``Sandbox``::

        kern.run_code("print(6*7)", image="host").stdout   # '42\\n'
    """
    with Sandbox(**sandbox_kwargs) as sbx:  # type: ignore[arg-type]
        return sbx.run_code(code, language, timeout_s=timeout_s, on_stdout=on_stdout,
                            on_stderr=on_stderr)


def run(argv: Sequence[str], *, timeout_s: Optional[float] = None,
        on_stdout: Optional[Callback] = None, on_stderr: Optional[Callback] = None,
        **sandbox_kwargs: object) -> ExecutionResult:
    """Run a command once in a throwaway Sandbox (see ``run_code``)."""
    with Sandbox(**sandbox_kwargs) as sbx:  # type: ignore[arg-type]
        return sbx.run(argv, timeout_s=timeout_s, on_stdout=on_stdout, on_stderr=on_stderr)
