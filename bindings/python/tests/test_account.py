"""user= with a non-root account on real boxes (spec 14): the probe box,
ACLs on the workspace, assist boxes for files the account closed to the
host. The account is `nobody` of the host image; kern maps it into the
caller's subordinate range, so these tests need one (/etc/subuid: make
check lends root one and kerntest has its own)."""

import os
import stat

import pytest

import kern_sandbox as kern
from kern_sandbox import _account

from conftest import kern_ps


@pytest.fixture
def sbx(kern_bin):
    try:
        s = kern.Sandbox(image="host", user="nobody").open()
    except kern.SandboxError as e:
        if "cannot be mapped" in str(e):
            pytest.skip("no subordinate id range for this user: %s" % e)
        raise
    try:
        yield s
    finally:
        ws = s._ws.path if s._ws else None
        s.close()
        # The temporary workspace is gone, whatever the account left in it.
        assert ws is None or not os.path.exists(ws)
        assert not [n for n in kern_ps(kern_bin) if n.startswith(("pysbx-", "kern-"))]


def test_the_box_runs_as_the_account_and_both_sides_share_files(sbx):
    assert sbx._account.active and sbx._account.uid != os.geteuid()
    sbx.write_file("in/data.txt", "from the host")
    r = sbx.run_code("import os\n"
                     "print(os.getuid(), os.getcwd())\n"
                     "print(open('in/data.txt').read())\n"
                     "open('in/data.txt', 'a').write(', appended in the box')\n"
                     "os.makedirs('out/deep')\n"
                     "open('out/deep/r.txt', 'w').write('from the box')\n")
    assert r.success, r
    assert r.stdout == "65534 /workspace\nfrom the host\n"
    assert sorted((f.path, f.change) for f in r.files) == [("in/data.txt", "modified"),
                                                           ("out/deep/r.txt", "created")]
    assert sbx.read_file("in/data.txt") == b"from the host, appended in the box"
    assert sbx.read_file("out/deep/r.txt") == b"from the box"
    # The host can replace what the box made.
    sbx.write_file("out/deep/r.txt", "host again")
    assert sbx.run_code("print(open('out/deep/r.txt').read())").stdout == "host again\n"
    st = os.stat(os.path.join(sbx.workspace, "out/deep/r.txt"))
    assert st.st_uid == sbx._account.uid
    # Nobody but the two of them: no permission bits for others anywhere.
    for top, dirs, files in os.walk(sbx.workspace):
        for name in dirs + files:
            assert os.lstat(os.path.join(top, name)).st_mode & 0o007 == 0, name


def test_files_the_account_closed_are_opened_by_an_assist_box(sbx):
    r = sbx.run_code("import os\nos.umask(0o077)\nos.makedirs('secret/inner')\n"
                     "open('secret/inner/s.txt', 'w').write('closed')\n"
                     "os.chmod('secret/inner/s.txt', 0o600)")
    assert r.success, r
    assert sbx.read_file("secret/inner/s.txt") == b"closed"
    assert [f.path for f in sbx.list_files("secret")] == ["secret/inner/s.txt"]
    dest = os.path.join(os.path.dirname(sbx.workspace), os.path.basename(sbx.workspace) + ".tgz")
    try:
        sbx.snapshot(dest)
        import tarfile
        with tarfile.open(dest) as tar:
            assert "secret/inner/s.txt" in tar.getnames()
    finally:
        os.unlink(dest)


def test_kernel_and_persist_run_as_the_account(sbx, kern_bin):
    with sbx.kernel() as k:
        assert k.run_code("import os; os.getuid()").results[0].text == "65534"
        k.run_code("open('k.txt', 'w').write('kernel')")
    assert sbx.read_file("k.txt") == b"kernel"


def test_persist_with_an_account_uses_exec_u(kern_bin, tmp_path):
    try:
        s = kern.Sandbox(image="host", user="nobody", persist=True).open()
    except kern.SandboxError as e:
        if "cannot be mapped" in str(e):
            pytest.skip("no subordinate id range for this user: %s" % e)
        raise
    with s:
        r = s.run(["id", "-u"])
        assert r.stdout == "65534\n", r
        assert s.run(["sh", "-c", "echo x > made; stat -c %u made"]).stdout == "65534\n"
        assert s.read_file("made") == b"x\n"


def test_acl_blobs_round_trip():
    entries = _account._with_users([], {1234: 7}, 0o750)
    blob = _account._pack(entries)
    assert _account._parse(blob) == sorted(entries, key=lambda e: (e[0], e[2]))
    tags = {e[0]: e for e in entries}
    # The mask lets the named entry act; the others keep their mode bits.
    assert tags[_account._MASK][1] == 7 and tags[_account._OTHER][1] == 0
    assert _account._parse(b"junk") == []


def test_grant_never_touches_what_the_caller_does_not_own(tmp_path):
    f = tmp_path / "f"
    f.write_text("x")
    fd = os.open(str(f), os.O_RDONLY)
    try:
        # Not our file (pretend the caller is someone else): left alone.
        _account.grant_fd(fd, 4242, os.geteuid() + 1)
        with pytest.raises(OSError):
            os.getxattr(fd, _account.ACCESS)
        _account.grant_fd(fd, 4242, os.geteuid())
        named = [e for e in _account._parse(os.getxattr(fd, _account.ACCESS)) if e[0] == _account._USER]
        assert (_account._USER, 6, 4242) in named
        assert stat.S_IMODE(os.fstat(fd).st_mode) & 0o070 == 0o060   # the mask: rw
    finally:
        os.close(fd)
