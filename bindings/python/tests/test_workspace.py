"""python-binding.md §4 (methods): the workspace's lifetime, a device
node, snapshots' format. Confinement against what a box leaves there,
file tracking and hostile archives are cases of the shared table
(test_shared_cases.py), which the Node package runs too."""

import gzip
import io
import os
import stat
import tarfile

import pytest

import kern_sandbox as kern
from kern_sandbox import SandboxError


@pytest.mark.skipif(os.getuid() != 0, reason="creating a device node needs root")
def test_device_node_is_refused(sbx):
    os.mknod(os.path.join(sbx.workspace, "null"), 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    with pytest.raises(SandboxError, match="not a regular file"):
        sbx.read_file("null")
    with pytest.raises(SandboxError):
        sbx.write_file("null", "x")


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


def test_restore_refuses_a_cut_archive_changing_nothing(sbx, tmp_path):
    """A gzip stream cut short raises SandboxError (tarfile let EOFError
    through before), and the workspace is untouched. As Node's
    snapshot.test.mjs does."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as t:
        body = b"y" * 100000
        info = tarfile.TarInfo("big.txt")
        info.size = len(body)
        t.addfile(info, io.BytesIO(body))
    cut = tmp_path / "cut.tgz"
    # Half a tar, and a gzip stream without its end.
    cut.write_bytes(gzip.compress(raw.getvalue()[:20000], compresslevel=1)[:-12])
    sbx.write_file("before.txt", "untouched")
    with pytest.raises(SandboxError, match="^restore .*cut.tgz: "):
        sbx.restore(str(cut))
    assert [f.path for f in sbx.list_files()] == ["before.txt"]
