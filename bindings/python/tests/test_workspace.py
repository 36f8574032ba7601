"""Spec §4: workspace I/O confined to the workspace, whatever a box left
there; file tracking; snapshot and restore with hostile archives."""

import io
import os
import stat
import tarfile
import threading
import time

import pytest

import kern_sandbox as kern
from kern_sandbox import SandboxError


def test_round_trip_and_parents(sbx):
    sbx.write_file("a/b/c.txt", "héllo")
    sbx.write_file("/workspace/raw.bin", b"\x00\xff")
    assert sbx.read_file("a/b/c.txt") == "héllo".encode()
    assert sbx.read_file("./a//b/c.txt") == "héllo".encode()
    assert sbx.read_file("raw.bin") == b"\x00\xff"
    r = sbx.run_code("print(open('a/b/c.txt').read())")
    assert r.stdout == "héllo\n"
    sbx.write_file("a/b/c.txt", "x")
    assert sbx.read_file("a/b/c.txt") == b"x"


def test_max_bytes(sbx):
    sbx.write_file("big", b"x" * 1000)
    assert len(sbx.read_file("big", max_bytes=1000)) == 1000
    with pytest.raises(SandboxError, match="larger than max_bytes"):
        sbx.read_file("big", max_bytes=999)


def test_missing_file(sbx):
    with pytest.raises(FileNotFoundError):
        sbx.read_file("nope.txt")


@pytest.mark.parametrize("path", ["../x", "a/../../x", "..", "/etc/passwd", "/workspace/../etc",
                                  "", "/", "a\0b"])
def test_paths_outside_are_refused(sbx, path):
    with pytest.raises(SandboxError):
        sbx.read_file(path)
    with pytest.raises(SandboxError):
        sbx.write_file(path, "x")


def test_symlink_to_etc_shadow_left_by_a_box(sbx):
    r = sbx.run(["sh", "-c", "ln -s /etc/shadow leak && ln -s /etc d && ln -s leak chain"])
    assert r.success, r.stderr
    for path in ("leak", "chain", "d/shadow", "d/passwd"):
        with pytest.raises(SandboxError, match="symlink"):
            sbx.read_file(path)
    with pytest.raises(SandboxError, match="symlink"):
        sbx.write_file("leak", "overwrite")
    with pytest.raises(SandboxError, match="symlink"):
        sbx.write_file("d/kern-test-should-not-exist", "x")
    assert not os.path.exists("/etc/kern-test-should-not-exist")
    names = [f.path for f in sbx.list_files()]
    assert "leak" not in names and "chain" not in names


def test_write_through_a_planted_symlink_never_reaches_the_target(sbx, tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("original")
    os.symlink(str(victim), os.path.join(sbx.workspace, "out.txt"))
    with pytest.raises(SandboxError):
        sbx.write_file("out.txt", "pwned")
    assert victim.read_text() == "original"


def test_fifo_does_not_block_the_host(sbx):
    assert sbx.run(["mkfifo", "out.png"]).success
    t = time.monotonic()
    with pytest.raises(SandboxError, match="FIFO|not a regular file"):
        sbx.read_file("out.png")
    with pytest.raises(SandboxError):
        sbx.write_file("out.png", b"x")
    assert time.monotonic() - t < 2
    assert "out.png" not in [f.path for f in sbx.list_files()]


def test_socket_is_refused(sbx):
    r = sbx.run_code("import socket\ns = socket.socket(socket.AF_UNIX)\ns.bind('sock')")
    assert r.success, r.stderr
    with pytest.raises(SandboxError):
        sbx.read_file("sock")


def test_directory_is_refused(sbx):
    sbx.write_file("dir/x", "1")
    with pytest.raises(SandboxError, match="directory"):
        sbx.read_file("dir")


@pytest.mark.skipif(os.getuid() != 0, reason="creating a device node needs root")
def test_device_node_is_refused(sbx):
    os.mknod(os.path.join(sbx.workspace, "null"), 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    with pytest.raises(SandboxError, match="not a regular file"):
        sbx.read_file("null")
    with pytest.raises(SandboxError):
        sbx.write_file("null", "x")


def test_box_swaps_a_file_for_a_symlink_between_calls(sbx):
    assert sbx.run_code("open('report.txt', 'w').write('fine')").success
    assert sbx.read_file("report.txt") == b"fine"
    assert sbx.run(["sh", "-c", "rm report.txt && ln -s /etc/passwd report.txt"]).success
    with pytest.raises(SandboxError, match="symlink"):
        sbx.read_file("report.txt")
    # And a directory swapped for a symlink to a host directory.
    sbx.write_file("out/data.txt", "mine")
    assert sbx.run(["sh", "-c", "rm -r out && ln -s /etc out"]).success
    with pytest.raises(SandboxError, match="symlink"):
        sbx.read_file("out/passwd")


def test_list_files(sbx):
    sbx.write_file("b.txt", "22")
    sbx.write_file("sub/a.txt", "1")
    assert sbx.run(["sh", "-c", "mkdir -p .deps/pkg && echo x > .deps/pkg/m.py && "
                    "ln -s b.txt link && mkfifo pipe"]).success
    files = sbx.list_files()
    assert [(f.path, f.size, f.change) for f in files] == [("b.txt", 2, None),
                                                           ("sub/a.txt", 1, None)]
    assert [f.path for f in sbx.list_files("sub")] == ["sub/a.txt"]
    with pytest.raises(SandboxError):
        sbx.list_files("../")


def test_files_created_and_modified(sbx):
    sbx.write_file("keep.txt", "same")
    sbx.write_file("change.txt", "old")
    r = sbx.run_code("open('new.csv', 'w').write('a,b\\n')\n"
                     "open('change.txt', 'w').write('newer')\n"
                     "import os; os.makedirs('deep/er'); open('deep/er/x', 'w').close()\n"
                     "os.symlink('keep.txt', 'alias')")
    assert r.success, r.stderr
    got = {(f.path, f.size, f.change) for f in r.files}
    assert got == {("new.csv", 4, "created"), ("change.txt", 5, "modified"),
                   ("deep/er/x", 0, "created")}
    # The package's own scratch files (.run-, .cell-, .res-) never show.
    assert not [n for n in os.listdir(sbx.workspace) if n.startswith((".run-", ".cell-", ".res-"))]
    assert sbx.run_code("pass").files == []


def test_track_files_off(kern_bin):
    with kern.Sandbox(image="host", track_files=False) as s:
        assert s.run_code("open('x', 'w').write('1')").files == []


def test_temporary_workspace_is_private_and_removed(kern_bin):
    s = kern.Sandbox(image="host")
    s.run(["sh", "-c", "mkdir -p locked/in && touch locked/in/f && chmod 000 locked/in locked"])
    path = s.workspace
    assert os.path.basename(path).startswith("kern-ws-")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o700
    assert os.path.realpath(path) == path
    s.close()
    assert not os.path.exists(path)
    with pytest.raises(SandboxError, match="closed"):
        s.run(["true"])


def test_given_workspace_persists(kern_bin, tmp_path):
    ws = tmp_path / "ws"
    with kern.Sandbox(image="host", workspace=str(ws)) as s:
        s.run_code("open('state.txt', 'w').write('kept')")
    assert (ws / "state.txt").read_text() == "kept"
    with kern.Sandbox(image="host", workspace=str(ws)) as s:
        assert s.run_code("print(open('state.txt').read())").stdout == "kept\n"


def test_workspace_with_colon_and_comma(kern_bin, tmp_path):
    ws = tmp_path / "odd:name,here"
    with kern.Sandbox(image="host", workspace=str(ws)) as s:
        r = s.run_code("import os; print(os.getcwd()); open('f', 'w').write('1')")
        assert r.stdout == "/workspace\n", r.stderr
    assert (ws / "f").read_text() == "1"


# -- snapshot / restore ---------------------------------------------------

def test_snapshot_restore_round_trip(sbx, tmp_path):
    sbx.write_file("a.txt", "alpha")
    sbx.write_file("dir/b.bin", bytes(range(256)))
    sbx.run(["sh", "-c", "mkdir -p empty .deps/p && echo dep > .deps/p/m.py && "
             "echo '#!/bin/sh' > run.sh && chmod 755 run.sh && ln -s a.txt link && mkfifo fifo && "
             "echo tmp > /tmp/not-in-snapshot"])
    dest = tmp_path / "snap.tar.gz"
    sbx.snapshot(str(dest))
    with open(dest, "rb") as f:
        head = f.read(10)
    assert head[:2] == b"\x1f\x8b" and head[8] == 4  # gzip, fastest compression (level 1)
    with tarfile.open(dest) as tar:
        members = {m.name: m for m in tar.getmembers()}
        assert all(m.isreg() or m.isdir() for m in members.values())
    assert set(members) >= {"a.txt", "dir", "dir/b.bin", "empty", ".deps/p/m.py", "run.sh"}
    assert "link" not in members and "fifo" not in members
    assert not any(n.startswith("tmp") for n in members)
    # Change everything, then go back.
    sbx.write_file("a.txt", "changed")
    sbx.write_file("later.txt", "gone after restore")
    sbx.restore(str(dest))
    assert sbx.read_file("a.txt") == b"alpha"
    assert sbx.read_file("dir/b.bin") == bytes(range(256))
    assert not os.path.exists(os.path.join(sbx.workspace, "later.txt"))
    assert os.path.isdir(os.path.join(sbx.workspace, "empty"))
    assert os.stat(os.path.join(sbx.workspace, "run.sh")).st_mode & 0o111
    r = sbx.run(["sh", "-c", "cat a.txt .deps/p/m.py"])
    assert r.stdout == "alphadep\n"


def test_snapshot_is_ustar(sbx, tmp_path):
    sbx.write_file("x", "1")
    dest = tmp_path / "s.tgz"
    sbx.snapshot(str(dest))
    import gzip
    raw = gzip.decompress(dest.read_bytes())
    assert raw[257:263] == b"ustar\x00"


def _archive(tmp_path, add):
    path = tmp_path / "hostile.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        good = tarfile.TarInfo("good.txt")
        good.size = 2
        tar.addfile(good, io.BytesIO(b"ok"))
        add(tar)
    return path


def _member(name, kind, **extra):
    info = tarfile.TarInfo(name)
    info.type = kind
    for k, v in extra.items():
        setattr(info, k, v)
    return info


HOSTILE = {
    "absolute": lambda t: t.addfile(_member("/etc/x", tarfile.REGTYPE)),
    "dotdot": lambda t: t.addfile(_member("a/../../x", tarfile.REGTYPE)),
    "dotdot-only": lambda t: t.addfile(_member("..", tarfile.DIRTYPE)),
    "symlink": lambda t: t.addfile(_member("link", tarfile.SYMTYPE, linkname="/etc/shadow")),
    "symlink-relative": lambda t: t.addfile(_member("link", tarfile.SYMTYPE, linkname="good.txt")),
    "hardlink": lambda t: t.addfile(_member("hard", tarfile.LNKTYPE, linkname="good.txt")),
    "chardev": lambda t: t.addfile(_member("null", tarfile.CHRTYPE, devmajor=1, devminor=3)),
    "blockdev": lambda t: t.addfile(_member("sda", tarfile.BLKTYPE, devmajor=8, devminor=0)),
    "fifo": lambda t: t.addfile(_member("pipe", tarfile.FIFOTYPE)),
}


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_restore_refuses_hostile_members(sbx, tmp_path, kind):
    sbx.write_file("before.txt", "untouched")
    path = _archive(tmp_path, HOSTILE[kind])
    with pytest.raises(SandboxError, match="restore refused"):
        sbx.restore(str(path))
    # Refused before anything changed.
    assert sbx.read_file("before.txt") == b"untouched"
    assert [f.path for f in sbx.list_files()] == ["before.txt"]


def test_restore_refuses_garbage(sbx, tmp_path):
    bad = tmp_path / "x.tar.gz"
    bad.write_bytes(b"not a tar")
    with pytest.raises(SandboxError):
        sbx.restore(str(bad))


def test_restore_through_a_planted_symlink_stays_inside(sbx, tmp_path):
    """A workspace symlink cannot redirect a restored file: the workspace is
    cleared first and every component is opened without following links."""
    outside = tmp_path / "outside"
    outside.mkdir()
    path = tmp_path / "a.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        tar.addfile(_member("d", tarfile.DIRTYPE))
        f = _member("d/f.txt", tarfile.REGTYPE, size=1)
        tar.addfile(f, io.BytesIO(b"1"))
    os.symlink(str(outside), os.path.join(sbx.workspace, "d"))
    sbx.restore(str(path))
    assert os.listdir(str(outside)) == []
    assert sbx.read_file("d/f.txt") == b"1"
