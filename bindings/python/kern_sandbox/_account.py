"""user=: a box account that is not root (spec 14).

A non-root account in the box (``user=``, or the image's USER) is not the
caller on the host: kern maps it into the caller's subordinate range, so
the workspace (0700, the caller's) is closed to it. The session therefore

* learns the account's host uid once, from a probe box that creates a file
  as the account in a scratch directory (``--entrypoint "" ... -- sh -c
  ": > /kern-uid/o"``);
* grants that uid access through POSIX ACLs: rwx on every directory the
  caller owns in the workspace, rw on its files, and default entries on the
  directories so what either side creates later stays reachable by both
  (a default ``other::---`` keeps everyone else out);
* opens up, through a short-lived assist box, files the account closed to
  the host (a 0600 file, a 0700 directory): box root (the caller) with
  CAP_FOWNER raises the ACL mask of everything in /workspace. Host root
  needs none of this to read; it is done before anything the host reads
  or removes fails for lack of permission.

ACLs are written as the kernel's xattr blobs (system.posix_acl_access and
system.posix_acl_default), through descriptors opened without following
symlinks, so a box that swaps a directory for a symlink cannot make the
host change an ACL outside the workspace.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import struct
import subprocess
import tempfile
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

from ._argv import box_name
from .errors import SandboxError
from .rules import WORKSPACE, Mount
from .workspace import DIR_FLAGS, _walk, split_path

if TYPE_CHECKING:
    from .sandbox import Sandbox

ACCESS = "system.posix_acl_access"
DEFAULT = "system.posix_acl_default"
_VERSION = 2
_USER_OBJ, _USER, _GROUP_OBJ, _GROUP, _MASK, _OTHER = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
_UNDEFINED = 0xFFFFFFFF
PROBE_TIMEOUT_S = 120
ASSIST_TIMEOUT_S = 300
OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC

Entry = Tuple[int, int, int]       # (tag, perm, id)


def _parse(blob: bytes) -> List[Entry]:
    if len(blob) < 4 or (len(blob) - 4) % 8 or struct.unpack_from("<I", blob)[0] != _VERSION:
        return []
    return [struct.unpack_from("<HHI", blob, off) for off in range(4, len(blob), 8)]


def _pack(entries: List[Entry]) -> bytes:
    entries = sorted(entries, key=lambda e: (e[0], e[2]))
    return struct.pack("<I", _VERSION) + b"".join(struct.pack("<HHI", *e) for e in entries)


def _with_users(base: List[Entry], users: Dict[int, int], mode: Optional[int]) -> List[Entry]:
    """``base`` (or, when empty, the entries ``mode`` implies) with the
    named user entries ``users`` {uid: perm} set and a mask that lets every
    named entry act."""
    if not base:
        assert mode is not None
        base = [(_USER_OBJ, (mode >> 6) & 7, _UNDEFINED), (_GROUP_OBJ, (mode >> 3) & 7, _UNDEFINED),
                (_OTHER, mode & 7, _UNDEFINED)]
    named = {e[2]: e[1] for e in base if e[0] == _USER}
    named.update(users)
    out = [e for e in base if e[0] not in (_USER, _MASK)]
    out += [(_USER, perm, uid) for uid, perm in named.items()]
    mask = 0
    for e in out:
        if e[0] in (_USER, _GROUP_OBJ, _GROUP):
            mask |= e[1]
    out.append((_MASK, mask, _UNDEFINED))
    return out


def grant_fd(fd: int, account_uid: int, caller_uid: int) -> None:
    """Give ``account_uid`` rwx on a directory (rw on a file) and, on a
    directory, default entries for both uids; only for inodes the caller
    owns (nobody else may set their ACL)."""
    st = os.fstat(fd)
    if st.st_uid != caller_uid or not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):
        return
    is_dir = stat.S_ISDIR(st.st_mode)
    try:
        current = _parse(os.getxattr(fd, ACCESS))
    except OSError:
        current = []
    # Files: read and write, never more (an entry inherited from a default
    # ACL may say rwx).
    users = {account_uid: 7} if is_dir else {account_uid: 6, caller_uid: 6}
    os.setxattr(fd, ACCESS, _pack(_with_users(current, users, st.st_mode)))
    if is_dir:
        # What either side creates here: both reach it, nobody else does.
        default = [(_USER_OBJ, 7, _UNDEFINED), (_GROUP_OBJ, 0, _UNDEFINED), (_OTHER, 0, _UNDEFINED)]
        os.setxattr(fd, DEFAULT, _pack(_with_users(default, {account_uid: 7, caller_uid: 7}, None)))


class Account:
    """The non-root box account of one Sandbox and its host uid."""

    def __init__(self, sandbox: "Sandbox", spec: str) -> None:
        self._sbx = sandbox
        self.spec = spec
        self.caller = os.geteuid()
        self.uid, self.gid = self._probe()

    @property
    def active(self) -> bool:
        """False when the account is the caller on the host (no range map)."""
        return self.uid != self.caller

    def _probe(self) -> Tuple[int, int]:
        sbx = self._sbx
        cfg = sbx.config
        top = tempfile.mkdtemp(prefix="kern-uid-")
        try:
            probe = os.path.join(top, "p")
            os.mkdir(probe)
            os.chmod(probe, 0o777)   # any uid of the box may create o here
            argv = ["box", box_name("kern-uid"), "--image", cfg.image, "--ro", "--entrypoint", "",
                    "-v", probe + ":/kern-uid", "--workdir", "/kern-uid", "--user", self.spec]
            for cap in cfg.cap_drop:
                argv += ["--cap-drop", cap]
            argv += ["--timeout", str(PROBE_TIMEOUT_S), "--", "sh", "-c", ": > /kern-uid/o"]
            env = dict(os.environ)
            if not cfg.enforce_limits:
                env["KERN_NO_SCOPE"] = "1"
            try:
                out = subprocess.run([sbx._kern.path] + argv, stdin=subprocess.DEVNULL,
                                     capture_output=True, timeout=PROBE_TIMEOUT_S + 10, env=env,
                                     check=False, start_new_session=True)
                err = out.stderr.decode("utf-8", "replace").strip()
            except subprocess.TimeoutExpired:
                err = "the probe box did not finish in %d s" % PROBE_TIMEOUT_S
            try:
                st = os.lstat(os.path.join(probe, "o"))
            except OSError:
                raise SandboxError("user=%r: could not learn the account's host uid (a probe box "
                                   "running `sh -c ': > /kern-uid/o'` as it failed): %s"
                                   % (self.spec, err[-500:] or "no output")) from None
            if not stat.S_ISREG(st.st_mode):
                raise SandboxError("user=%r: the probe box left no regular file" % self.spec)
            return st.st_uid, st.st_gid
        finally:
            shutil.rmtree(top, ignore_errors=True)

    def grant_tree(self) -> None:
        """ACLs for the account on the workspace and everything in it the
        caller owns."""
        if not self.active:
            return
        ws = self._sbx._workspace()
        grant_fd(ws.fd, self.uid, self.caller)
        for _kind, _rel, st, parent, name in _walk(ws.fd, "", dirs=True):
            if st.st_uid != self.caller:
                continue
            try:
                fd = os.open(name, OPEN_FLAGS, dir_fd=parent)
            except OSError:
                continue
            try:
                grant_fd(fd, self.uid, self.caller)
            finally:
                os.close(fd)

    def grant_path(self, rel: str) -> None:
        """After the host wrote ``rel``: the file and the directories above
        it (which write_file may have created) for the account."""
        if not self.active:
            return
        ws = self._sbx._workspace()
        parts = split_path(rel)
        fd = os.dup(ws.fd)
        try:
            for i, name in enumerate(parts):
                flags = DIR_FLAGS if i < len(parts) - 1 else OPEN_FLAGS
                nxt = os.open(name, flags, dir_fd=fd)
                os.close(fd)
                fd = nxt
                grant_fd(fd, self.uid, self.caller)
        finally:
            os.close(fd)

    def open_up(self) -> None:
        """An assist box: box root (the caller, with CAP_FOWNER and
        CAP_DAC_OVERRIDE over the box's ids) raises the ACL mask (the group
        bits) of everything in /workspace, so the caller's default entry
        applies to what the account made. Host root reads without it."""
        if not self.active or self.caller == 0:
            return
        sbx = self._sbx
        # Box root with a range map: the account's files are then ids of
        # its own user namespace, and CAP_FOWNER applies to them.
        argv = ["box", box_name("kern-assist"), "--image", sbx.config.image, "--ro"]
        argv += Mount(sbx._workspace().path, WORKSPACE, False).argv()
        argv += ["--workdir", WORKSPACE, "--user", "0", "--uid-range", "--cap-drop", "ALL",
                 "--cap-add", "CAP_FOWNER", "--cap-add", "CAP_DAC_OVERRIDE",
                 "--timeout", str(ASSIST_TIMEOUT_S), "--",
                 "chmod", "-R", "u+rwX,g+rwX", WORKSPACE]
        env = dict(os.environ)
        if not sbx.config.enforce_limits:
            env["KERN_NO_SCOPE"] = "1"
        try:
            subprocess.run([sbx._kern.path] + argv, stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=ASSIST_TIMEOUT_S + 10, env=env, check=False,
                           start_new_session=True)
        except (OSError, subprocess.TimeoutExpired):
            pass


def is_denied(exc: BaseException) -> bool:
    return isinstance(exc, PermissionError) or (isinstance(exc, OSError)
                                                and exc.errno in (errno.EACCES, errno.EPERM))
