"""The session workspace on the host (spec §4, §6): confined file I/O,
file tracking, snapshot and restore.

Every box can write the workspace, so every name in it is hostile: a box
can leave a symlink to /etc/shadow, a FIFO that blocks a reader forever, or
swap a directory for a symlink between two calls. So the host never
resolves a workspace path through the kernel's path walk: it holds the
workspace open and opens each component relative to its parent with
O_NOFOLLOW, the final one O_NONBLOCK, and refuses anything that is not a
regular file (or, on the way, a directory).
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import subprocess
import tarfile
import tempfile
import zlib
from typing import Callable, Dict, Iterator, List, Optional, Tuple, Union

from .errors import SandboxError
from .results import FileInfo

DEPS = ".deps"
# Names the package itself writes at the top of the workspace for one call.
SCRATCH_PREFIXES = (".run-", ".cell-", ".res-", ".kernel-", ".kern-env.")
# Walks stop this deep (a box can build trees deeper than anyone can use).
MAX_DEPTH = 128
# Tracking stops after this many files (and says nothing about the rest).
MAX_TRACKED = 100_000
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
Data = Union[str, bytes, bytearray, memoryview]
Stamp = Tuple[int, int]


def is_scratch(top_level_name: str) -> bool:
    return top_level_name.startswith(SCRATCH_PREFIXES)


def _hidden(rel: str) -> bool:
    """Not the user's file: .deps and the package's scratch files."""
    top = rel.split("/", 1)[0]
    return top == DEPS or is_scratch(top)


def _refuse(rel: str, why: str) -> SandboxError:
    return SandboxError("workspace path %r refused: %s" % (rel, why))


def split_path(rel: object) -> List[str]:
    """A workspace-relative path as components. ``/workspace/x`` is taken
    as ``x``; any other absolute path, ``..``, NUL and empty paths are
    refused."""
    if isinstance(rel, os.PathLike):
        rel = os.fspath(rel)
    if not isinstance(rel, str):
        raise SandboxError("workspace path must be a str, not %r" % type(rel).__name__)
    if "\0" in rel:
        raise _refuse(rel, "it contains NUL")
    path = rel
    if path.startswith("/"):
        if path == "/workspace" or path.startswith("/workspace/"):
            path = path[len("/workspace"):]
        else:
            raise _refuse(rel, "absolute paths must be under /workspace")
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise _refuse(rel, "'..' is not allowed")
    return parts


class Workspace:
    """A workspace directory held open for the life of a session.

    ``path=None`` creates a private ``kern-ws-*`` directory (0700) that
    ``remove()`` deletes; a given path is created if missing and kept.
    """

    def __init__(self, path: Optional[str] = None) -> None:
        self.temporary = path is None
        if path is None:
            path = tempfile.mkdtemp(prefix="kern-ws-")
        else:
            os.makedirs(path, mode=0o700, exist_ok=True)
        self.path = os.path.realpath(path)
        try:
            self.fd = os.open(self.path, DIR_FLAGS)
        except OSError as e:
            raise SandboxError("workspace %s: %s" % (self.path, e.strerror)) from None

    # -- opening, one component at a time -------------------------------

    def _open_dir(self, parts: List[str], rel: str, create: bool = False) -> int:
        """A descriptor of the directory ``parts`` (from the workspace on,
        no symlink followed); the caller closes it."""
        fd = os.dup(self.fd)
        try:
            for name in parts:
                try:
                    nxt = os.open(name, DIR_FLAGS, dir_fd=fd)
                except FileNotFoundError:
                    if not create:
                        raise
                    try:
                        os.mkdir(name, 0o755, dir_fd=fd)
                    except FileExistsError:
                        pass
                    nxt = os.open(name, DIR_FLAGS, dir_fd=fd)
                except OSError as e:
                    if e.errno in (errno.ELOOP, errno.ENOTDIR):
                        raise _refuse(rel, "%r is a symlink or not a directory" % name) from None
                    raise
                os.close(fd)
                fd = nxt
            return fd
        except BaseException:
            os.close(fd)
            raise

    def _open_file(self, rel: str, flags: int, mode: int = 0o644) -> int:
        """Open a regular file of the workspace; anything else is refused."""
        parts = split_path(rel)
        if not parts:
            raise _refuse(rel, "it names the workspace itself")
        create = bool(flags & os.O_CREAT)
        d = self._open_dir(parts[:-1], rel, create)
        try:
            try:
                fd = os.open(parts[-1], flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                             mode, dir_fd=d)
            except OSError as e:
                if e.errno == errno.ELOOP:
                    raise _refuse(rel, "it is a symlink") from None
                if e.errno in (errno.EISDIR, errno.ENXIO, errno.ENODEV, errno.EOPNOTSUPP):
                    raise _refuse(rel, "it is not a regular file") from None
                if e.errno == errno.ENOENT:
                    raise FileNotFoundError(errno.ENOENT, "no such file in the workspace",
                                            rel) from None
                raise
        finally:
            os.close(d)
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            os.close(fd)
            kind = "a FIFO" if stat.S_ISFIFO(st.st_mode) else \
                "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
            raise _refuse(rel, "it is %s" % kind)
        return fd

    # -- the public file calls ------------------------------------------

    def write_file(self, rel: str, data: Data) -> None:
        """Write ``data`` (str as UTF-8, or bytes) to a workspace file,
        creating parent directories."""
        if isinstance(data, str):
            blob = data.encode("utf-8")
        elif isinstance(data, (bytes, bytearray, memoryview)):
            blob = bytes(data)
        else:
            raise SandboxError("write_file data must be str or bytes, not %s"
                               % type(data).__name__)
        fd = self._open_file(rel, os.O_WRONLY | os.O_CREAT)
        try:
            os.set_blocking(fd, True)
            os.ftruncate(fd, 0)
            view = memoryview(blob)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)

    def read_file(self, rel: str, max_bytes: Optional[int] = None) -> bytes:
        """The bytes of a regular workspace file; over ``max_bytes`` raises."""
        if max_bytes is not None and (isinstance(max_bytes, bool) or
                                      not isinstance(max_bytes, int) or max_bytes < 0):
            raise SandboxError("max_bytes must be an integer >= 0 or None")
        fd = self._open_file(rel, os.O_RDONLY)
        try:
            os.set_blocking(fd, True)
            chunks, total = [], 0
            limit = None if max_bytes is None else max_bytes + 1
            while limit is None or total < limit:
                chunk = os.read(fd, 1 << 20 if limit is None else min(1 << 20, limit - total))
                if not chunk:
                    break
                chunks.append(chunk)
                total += len(chunk)
        finally:
            os.close(fd)
        if max_bytes is not None and total > max_bytes:
            raise SandboxError("workspace file %r is larger than max_bytes=%d" % (rel, max_bytes))
        return b"".join(chunks)

    def list_files(self, subdir: str = "") -> List[FileInfo]:
        """Regular files under ``subdir``, sorted; .deps and scratch left out."""
        parts = split_path(subdir)
        d = self._open_dir(parts, subdir or ".")
        prefix = "/".join(parts) + "/" if parts else ""
        try:
            out = [FileInfo(rel, st.st_size)
                   for kind, rel, st, _, _ in _walk(d, prefix, skip_top=None if parts else _hidden)
                   if kind == "f" and not _hidden(rel)]
        finally:
            os.close(d)
        return sorted(out, key=lambda f: f.path)

    # -- tracking --------------------------------------------------------

    def stamps(self) -> Dict[str, Stamp]:
        """(mtime_ns, size) of every user file, for ``changes``."""
        out: Dict[str, Stamp] = {}
        # .deps and the scratch files are left out before they are stat'ed
        # or walked: a call scans the workspace twice, .deps can hold a
        # whole pip tree, and concurrent calls each add their scratch files.
        for kind, rel, st, _, _ in _walk(self.fd, "", skip_top=_hidden):
            if kind == "f":
                out[rel] = (st.st_mtime_ns, st.st_size)
                if len(out) >= MAX_TRACKED:
                    break
        return out

    @staticmethod
    def changes(before: Dict[str, Stamp], after: Dict[str, Stamp]) -> List[FileInfo]:
        """Files created or modified between two ``stamps()``."""
        out = []
        for rel, stamp in sorted(after.items()):
            old = before.get(rel)
            if old is None:
                out.append(FileInfo(rel, stamp[1], "created"))
            elif old != stamp:
                out.append(FileInfo(rel, stamp[1], "modified"))
        return out

    # -- the package's own scratch files ---------------------------------

    def create_scratch(self, name: str, data: bytes) -> None:
        """A new top-level scratch file (O_EXCL: never through a planted name)."""
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o644, dir_fd=self.fd)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)

    def read_scratch(self, name: str, max_bytes: int) -> Optional[bytes]:
        """A scratch file the box wrote, or None when absent, refused or
        over ``max_bytes``."""
        try:
            return self.read_file(name, max_bytes)
        except (OSError, SandboxError):
            return None

    def remove_scratch(self, *names: str) -> None:
        for name in names:
            try:
                os.unlink(name, dir_fd=self.fd)
            except IsADirectoryError:
                _remove_tree_at(self.fd, name)
            except OSError:
                pass

    # -- snapshot and restore --------------------------------------------

    def snapshot(self, dest: Union[str, "os.PathLike[str]"]) -> None:
        """Write the workspace (regular files and directories, .deps
        included, scratch left out) to ``dest`` as a .tar.gz (gzip level 1,
        USTAR)."""
        try:
            tar = tarfile.open(os.fspath(dest), "w:gz", compresslevel=1,
                               format=tarfile.USTAR_FORMAT)
        except OSError as e:
            raise SandboxError("snapshot %s: %s" % (dest, e.strerror)) from None
        with tar:
            for kind, rel, st, dir_fd, name in _walk(self.fd, "", dirs=True, skip_top=is_scratch):
                info = tarfile.TarInfo(rel)
                info.mtime = int(st.st_mtime)
                info.uname = info.gname = ""
                if kind == "d":
                    info.type, info.mode = tarfile.DIRTYPE, 0o755
                    _add(tar, info, None)
                    continue
                try:
                    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                                 dir_fd=dir_fd)
                except OSError:
                    continue
                with os.fdopen(fd, "rb") as f:
                    fst = os.fstat(fd)
                    if not stat.S_ISREG(fst.st_mode):
                        continue
                    os.set_blocking(fd, True)
                    info.size = fst.st_size
                    info.mode = 0o755 if fst.st_mode & 0o111 else 0o644
                    _add(tar, info, f)

    def restore(self, src: Union[str, "os.PathLike[str]"]) -> None:
        """Replace the workspace's files with a snapshot's.

        Every member is checked before anything is touched: absolute
        names, ``..``, sparse files (GNU or pax), symlinks, hard links,
        devices, FIFOs and any other non-file, non-directory member make
        the whole archive refused.
        """
        # One wording for every archive that cannot be read, whether its
        # first bytes are no tar at all or it breaks later (the Node
        # package says the same).
        try:
            tar = tarfile.open(os.fspath(src), "r:*", tarinfo=_RefusingTarInfo)
        except (OSError, tarfile.TarError) as e:
            raise SandboxError("restore %s: not a readable tar archive (%s)"
                               % (src, _one_line(e))) from None
        with tar:
            try:
                members = tar.getmembers()
            except (tarfile.TarError, ValueError, EOFError, OSError, zlib.error) as e:
                # tarfile lets a cut gzip stream (EOFError) through as it is.
                raise SandboxError("restore %s: not a readable tar archive (%s)"
                                   % (src, _one_line(e))) from None
            plan = [(_check_member(m), m) for m in members]
            self.clear()
            for parts, member in plan:
                if not parts:
                    continue
                rel = "/".join(parts)
                if member.isdir():
                    self._open_dir_close(parts, rel)
                    continue
                f = tar.extractfile(member)
                fd = self._open_file(rel, os.O_WRONLY | os.O_CREAT)
                try:
                    os.set_blocking(fd, True)
                    os.ftruncate(fd, 0)
                    os.fchmod(fd, 0o755 if member.mode & 0o111 else 0o644)
                    while f is not None:
                        chunk = f.read(1 << 20)
                        if not chunk:
                            break
                        view = memoryview(chunk)
                        while view:
                            view = view[os.write(fd, view):]
                finally:
                    os.close(fd)

    def _open_dir_close(self, parts: List[str], rel: str) -> None:
        os.close(self._open_dir(parts, rel, create=True))

    def clear(self) -> None:
        """Remove everything in the workspace but the directory itself."""
        with os.scandir(self.fd) as it:
            names = [e.name for e in it]
        for name in names:
            _remove_tree_at(self.fd, name)

    def remove(self) -> None:
        """Close the workspace, and delete it if it was temporary."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        if self.temporary:
            remove_tree(self.path)


def _add(tar: tarfile.TarFile, info: tarfile.TarInfo, f: object) -> None:
    try:
        tar.addfile(info, f)  # type: ignore[arg-type]
    except ValueError as e:  # a name USTAR cannot hold
        raise SandboxError("snapshot: %s: %s" % (info.name, e)) from None


class _RefusingTarInfo(tarfile.TarInfo):
    """tarfile's member, except that GNU sparse records it cannot parse (a
    malformed map) refuse the member as sparse, as _check_member refuses a
    well-formed one: any GNU.sparse record is refused by its presence, as
    in the Node package, not reported as a damaged archive. The hooks are
    tarfile's own per-format methods; should a later tarfile rename them,
    such a member comes back as an unreadable archive (still refused), and
    the shared box case of it fails."""

    def _proc_gnusparse_01(self, next: tarfile.TarInfo, pax_headers: Dict[str, str],
                           *rest: object) -> None:
        try:
            super()._proc_gnusparse_01(next, pax_headers, *rest)  # type: ignore[misc]
        except (ValueError, IndexError, tarfile.TarError):
            raise _sparse_refused(next, pax_headers) from None

    def _proc_gnusparse_10(self, next: tarfile.TarInfo, pax_headers: Dict[str, str],
                           *rest: object) -> None:
        try:
            super()._proc_gnusparse_10(next, pax_headers, *rest)  # type: ignore[misc]
        except (ValueError, IndexError, tarfile.TarError):
            raise _sparse_refused(next, pax_headers) from None


def _one_line(e: BaseException) -> str:
    """An error's text on one line (tarfile lists each method it tried on
    a line of its own)."""
    return " ".join(str(e).split())


def _sparse_refused(next: tarfile.TarInfo, pax_headers: Dict[str, str]) -> SandboxError:
    name = pax_headers.get("GNU.sparse.name") or pax_headers.get("path") or next.name
    return SandboxError("restore refused: member %r is a sparse file" % name)


def _check_member(m: tarfile.TarInfo) -> List[str]:
    name = m.name
    if "\0" in name or name.startswith("/"):
        raise SandboxError("restore refused: member %r has an absolute name" % name)
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise SandboxError("restore refused: member %r contains '..'" % name)
    if m.issparse() or m.type == tarfile.GNUTYPE_SPARSE or any(
            k.startswith("GNU.sparse.") for k in m.pax_headers):
        # A snapshot never holds one. Its real size is whatever the header
        # claims (a few bytes of archive can declare terabytes of holes),
        # and its layout is a map the archive supplies: nothing here can
        # check either, so the archive is refused rather than trusted.
        raise SandboxError("restore refused: member %r is a sparse file" % name)
    kinds = ((m.issym, "a symlink"), (m.islnk, "a hard link"), (m.ischr, "a device"),
             (m.isblk, "a device"), (m.isfifo, "a FIFO"))
    for test, kind in kinds:
        if test():
            raise SandboxError("restore refused: member %r is %s" % (name, kind))
    if not (m.isreg() or m.isdir()):
        raise SandboxError("restore refused: member %r is not a file or directory" % name)
    return parts


def _walk(dir_fd: int, prefix: str, dirs: bool = False, depth: int = 0,
          skip_top: Optional[Callable[[str], bool]] = None
          ) -> Iterator[Tuple[str, str, os.stat_result, int, str]]:
    """(kind, relpath, lstat, parent fd, name) of every regular file (and,
    with ``dirs``, directory) below ``dir_fd``, never through a symlink.
    The parent fd is valid only until the next item. Names of ``dir_fd``
    itself for which ``skip_top`` holds are left out with all below them."""
    try:
        with os.scandir(dir_fd) as it:
            entries = [e for e in it if skip_top is None or not skip_top(e.name)]
    except OSError:
        return
    subdirs = []
    for e in entries:
        try:
            if e.is_dir(follow_symlinks=False):
                subdirs.append(e)
            elif e.is_file(follow_symlinks=False):
                yield "f", prefix + e.name, e.stat(follow_symlinks=False), dir_fd, e.name
        except OSError:
            continue
    if depth >= MAX_DEPTH:
        return
    for e in subdirs:
        try:
            fd = os.open(e.name, DIR_FLAGS, dir_fd=dir_fd)
        except OSError:
            continue
        try:
            if dirs:
                yield "d", prefix + e.name, os.fstat(fd), dir_fd, e.name
            yield from _walk(fd, prefix + e.name + "/", dirs, depth + 1)
        finally:
            os.close(fd)


def _remove_tree_at(dir_fd: int, name: str) -> None:
    """Remove ``name`` below ``dir_fd`` whatever it is, never following a
    symlink out (a directory a box made unreadable is opened up first)."""
    try:
        os.unlink(name, dir_fd=dir_fd)
        return
    except FileNotFoundError:
        return
    except (IsADirectoryError, PermissionError):
        pass
    except OSError:
        return
    try:
        fd = os.open(name, DIR_FLAGS, dir_fd=dir_fd)
    except PermissionError:
        try:
            os.chmod(name, 0o700, dir_fd=dir_fd, follow_symlinks=False)
            fd = os.open(name, DIR_FLAGS, dir_fd=dir_fd)
        except OSError:
            return
    except OSError:
        return
    try:
        os.fchmod(fd, 0o700)
    except OSError:
        pass
    try:
        with os.scandir(fd) as it:
            names = [e.name for e in it]
        for child in names:
            _remove_tree_at(fd, child)
    except (OSError, RecursionError):
        pass
    finally:
        os.close(fd)
    try:
        os.rmdir(name, dir_fd=dir_fd)
    except OSError:
        pass


def remove_tree(path: str) -> None:
    """Delete a directory tree a box may have filled with anything: the
    descriptor walk first, ``rm -rf`` for whatever a very deep tree left."""
    parent, name = os.path.split(path.rstrip("/"))
    try:
        pfd = os.open(parent or "/", DIR_FLAGS)
    except OSError:
        return
    try:
        _remove_tree_at(pfd, name)
    finally:
        os.close(pfd)
    if os.path.lexists(path):
        subprocess.run(["rm", "-rf", "--one-file-system", "--", path], stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        if os.path.lexists(path):
            shutil.rmtree(path, ignore_errors=True)
