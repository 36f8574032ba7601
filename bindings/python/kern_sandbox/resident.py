"""persist=True: one resident box per workspace, reused through `kern exec`
(spec 14).

The box is `kern-sbx-<12 hex of the workspace path>`, started detached
(`-d --init -- sleep <ttl>`, kern's --timeout ttl+5) with the session's
whole configuration and the label kern.sbx.cfg=<16 hex of that
configuration>. Each call is `kern exec NAME -w /workspace [-u USER] --
COMMAND` with the one-shot pipes (outcome bytes, alive pipe), so it is
classified like a one-shot run. Processes a call leaves running stay in the
box, and so does /tmp: that is the point, and the trade, of persist=True.
A box found with another configuration is replaced; a box that went away
(stopped from outside, past its ttl) is started again once per call, with a
RuntimeWarning. A named workspace keeps its resident box after the Sandbox
closes (a later session with the same configuration reuses it) until
`Sandbox.destroy()` or its ttl; a temporary workspace's box is stopped.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import threading
import warnings
from typing import TYPE_CHECKING, List, Optional, Sequence

from ._boxkey import config_key
from ._imagecache import user_is_root
from ._spawn import BoxProcess, Callback, Captured, collect
from .errors import SandboxError
from .rules import WORKSPACE

if TYPE_CHECKING:
    from .sandbox import OnStart, Sandbox

TTL_S = 3600
LABEL = "kern.sbx.cfg"
# `kern box -d` returns once the workload runs; a first pull is the
# Sandbox's job, so this is about starting a box.
CREATE_TIMEOUT_S = 120
QUICK_TIMEOUT_S = 15
GONE = "no running box named"


class _ExecProcess(BoxProcess):
    """A `kern exec` client. At the deadline only its process group is
    killed (the exec'd command is in it): `kern stop` would end the
    resident box and every other call in it."""

    def stop(self) -> None:
        self.kill_group()


class Resident:
    """The resident box of one Sandbox."""

    def __init__(self, sandbox: "Sandbox") -> None:
        self._sbx = sandbox
        digest = hashlib.sha256(os.path.realpath(sandbox.workspace).encode("utf-8",
                                                                            "surrogateescape"))
        self.name = "kern-sbx-" + digest.hexdigest()[:12]
        self._lock = threading.Lock()
        self._running = False          # seen running with our label since the last fault
        self._killed = False           # the last call was killed: the box may be ending
        self._user_flag: Optional[List[str]] = None

    # -- finding and starting the box ---------------------------------------

    def _ps(self) -> Optional[dict]:
        """Our box's `kern ps --json` row, when it is running."""
        kern = self._sbx._kern
        try:
            out = subprocess.run([kern.path, "ps", "--filter", "name=" + self.name, "--json"],
                                 stdin=subprocess.DEVNULL, capture_output=True,
                                 timeout=QUICK_TIMEOUT_S, check=False)
            rows = json.loads(out.stdout.decode("utf-8", "replace") or "[]")
        except (OSError, subprocess.TimeoutExpired, ValueError):
            return None
        if not isinstance(rows, list):
            return None
        for row in rows:
            if isinstance(row, dict) and row.get("name") == self.name \
                    and row.get("status") == "running":
                return row
        return None

    def _stop(self) -> None:
        kern = self._sbx._kern
        try:
            subprocess.run([kern.path, "stop", self.name], stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=QUICK_TIMEOUT_S, check=False)
        except (OSError, subprocess.TimeoutExpired):
            pass

    def _label(self) -> str:
        return config_key(self._sbx, self._sbx.config.timeout_s)[:16]

    def ensure(self) -> None:
        """Make sure our box runs with this session's configuration."""
        with self._lock:
            if self._running:
                return
            label = self._label()
            row = self._ps()
            if row is not None:
                labels = row.get("labels")
                if isinstance(labels, dict) and labels.get(LABEL) == label:
                    self._running = True
                    return
                # Another configuration (an older session's): replace it.
                self._stop()
            self._create(label)
            self._running = True

    def _create(self, label: str) -> None:
        sbx = self._sbx
        env_file = sbx.env_file_path()
        try:
            req = sbx.box_request(["sleep", str(TTL_S)], sbx.config.timeout_s, name=self.name,
                                  env_file=env_file, kern_timeout=TTL_S + 5,
                                  extra=("-d", "--init", "--label", "%s=%s" % (LABEL, label)))
            sbx.write_env_file(req)
            env = dict(os.environ)
            if not sbx.config.enforce_limits:
                env["KERN_NO_SCOPE"] = "1"
            try:
                out = subprocess.run([sbx._kern.path] + sbx.box_argv(req), stdin=subprocess.DEVNULL,
                                     capture_output=True, timeout=CREATE_TIMEOUT_S, check=False,
                                     env=env, start_new_session=True)
                rc, err = out.returncode, out.stderr.decode("utf-8", "replace")
            except subprocess.TimeoutExpired:
                rc, err = -1, "kern box -d did not return within %d s" % CREATE_TIMEOUT_S
        finally:
            try:
                os.unlink(env_file)
            except OSError:
                pass
        if rc == 0:
            return
        # Another process may have started the same box at the same moment:
        # the loser adopts the winner's box.
        row = self._ps()
        labels = row.get("labels") if row is not None else None
        if isinstance(labels, dict) and labels.get(LABEL) == label:
            return
        raise SandboxError("persist=True: the resident box %s could not start (kern exit %d): %s"
                           % (self.name, rc, err.strip()[-500:]))

    def destroy(self) -> None:
        """Stop the resident box (`kern stop`); the next call starts a new one."""
        with self._lock:
            self._stop()
            self._running = False

    # -- a call ---------------------------------------------------------------

    def _user_args(self) -> List[str]:
        if self._user_flag is None:
            user = self._sbx.config.user
            flag: List[str] = []
            if user is not None and not user_is_root(user):
                if not _exec_has_user_flag(self._sbx._kern.path):
                    raise SandboxError("persist=True with user=%r needs `kern exec -u`, which this "
                                       "kern (%s) does not offer" % (user, self._sbx._kern.path))
                flag = ["-u", user]
            self._user_flag = flag
        return self._user_flag

    def run(self, command: Sequence[str], timeout_s: float, on_stdout: Optional[Callback],
            on_stderr: Optional[Callback], on_start: Optional["OnStart"]) -> Captured:
        """One call in the resident box, started (again) when needed."""
        for attempt in (1, 2):
            self.ensure()
            argv = ["exec", self.name, "-w", WORKSPACE] + self._user_args() + ["--"] + list(command)
            box = _ExecProcess(self._sbx._kern, argv, self.name, alive=True,
                               no_scope=not self._sbx.config.enforce_limits)
            if on_start is not None:
                on_start(box.stop)
            done = collect(box, timeout_s=timeout_s,
                           max_output_bytes=self._sbx.config.max_output_bytes,
                           on_stdout=on_stdout, on_stderr=on_stderr)
            gone = not done.started and done.exit_code == 1 and \
                GONE in done.stderr.decode("utf-8", "replace")
            if gone and attempt == 1:
                if not self._killed:
                    warnings.warn("kern-sandbox: the resident box %s was gone (stopped from "
                                  "outside, or past its %d s life); starting it again"
                                  % (self.name, TTL_S), RuntimeWarning, stacklevel=4)
                with self._lock:
                    self._running = False
                continue
            # A kill may have been the whole box's (an OOM kills every task
            # in it, and the box may still be ending): look again before the
            # next call, and do not warn when it is gone.
            self._killed = done.exit_code in (137, 143, 159)
            if self._killed or gone:
                with self._lock:
                    self._running = False
            return done
        raise AssertionError("unreachable")


def _exec_has_user_flag(kern_path: str) -> bool:
    try:
        out = subprocess.run([kern_path, "exec", "--help"], stdin=subprocess.DEVNULL,
                             capture_output=True, timeout=QUICK_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    text = (out.stdout + out.stderr).decode("utf-8", "replace")
    return "-u," in text or "-u <" in text or "--user" in text
