"""The kernel driver (spec 15.2) and the host's frame codec, without a box.

The driver runs under a host python3 over real pipes, exactly as it runs in
a box: `python3 -c <source>`, the control channel on stdin and stdout. Each
test runs once per interpreter found (the one running pytest, python3 on
PATH and Debian's /usr/bin/python3), since an image's python3 is not ours
to choose.
"""

import json
import os
import shutil
import subprocess
import sys
import time

import pytest

from kern_sandbox import _frames, _inbox

# The same for every user: the unprivileged run of tests/run leaves it out.
pytestmark = pytest.mark.any_user


def _interpreters():
    found = []
    for name in (sys.executable, shutil.which("python3"), "/usr/bin/python3"):
        if not name:
            continue
        # A pyenv shim takes half a second per start: ask it once where the
        # interpreter itself is.
        real = subprocess.run([name, "-c", "import sys; print(sys.executable)"], capture_output=True,
                              text=True, timeout=60).stdout.strip()
        if real and os.path.realpath(real) not in [os.path.realpath(x) for x in found]:
            found.append(real)
    return found


PYTHONS = _interpreters()

OUT_CAP = 1 << 16
RES_CAP = 1 << 16


class Driver:
    """One driver process and the host end of its channel."""

    def __init__(self, python, tmp_path, out_cap=OUT_CAP, res_cap=RES_CAP, hello=True,
                 one_call=False):
        self.python = python
        src = _inbox.driver_source(out_cap, res_cap, hello, one_call)
        self.proc = subprocess.Popen([python, "-c", src], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, cwd=str(tmp_path), start_new_session=True)
        self.reader = _frames.FrameReader(self.proc.stdout.fileno(), _frames.reply_cap(out_cap, res_cap))
        self.hello = None
        if hello:
            self.hello = _frames.decode(self.reader.read(time.monotonic() + 30))

    def send(self, code):
        os.write(self.proc.stdin.fileno(), _frames.encode(code.encode("utf-8")))

    def cell(self, code, timeout=30):
        """Run a cell: (streamed frames, Reply)."""
        self.send(code)
        streamed = []
        deadline = time.monotonic() + timeout
        while True:
            msg = _frames.decode(self.reader.read(deadline))
            chunk = _frames.stream_text(msg)
            if chunk is not None:
                streamed.append(chunk)
                continue
            return streamed, _frames.parse_reply(msg)

    def close(self):
        self.proc.stdin.close()
        try:
            rc = self.proc.wait(10)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()
        err = self.proc.stderr.read()
        self.proc.stderr.close()
        return rc, err


@pytest.fixture(params=PYTHONS)
def drv(request, tmp_path):
    d = Driver(request.param, tmp_path)
    yield d
    if d.proc.poll() is None:
        d.close()


def joined(streamed, key):
    return "".join(text for k, text in streamed if k == key)


def test_hello_then_state_across_cells(drv):
    assert drv.hello == {"hello": 1}
    _, r = drv.cell("x = 40")
    assert (r.rc, r.stdout, r.stderr, r.results, r.trunc) == (0, "", "", [], False)
    _, r = drv.cell("x + 2")
    assert r.results == [{"text/plain": "42"}]
    _, r = drv.cell("def f(n):\n    return n * x\n")
    _, r = drv.cell("f(2)")
    assert r.results[0]["text/plain"] == "80"


def test_no_hello_when_not_asked(tmp_path):
    d = Driver(PYTHONS[0], tmp_path, hello=False)
    try:
        # The first frame the host reads is the first cell's reply.
        _, r = d.cell("1")
        assert r.results == [{"text/plain": "1"}]
    finally:
        d.close()


def test_every_kind_of_output_is_captured_and_streamed_before_the_reply(drv):
    code = ("import os, subprocess, sys\n"
            "print('print')\n"
            "os.write(1, b'raw fd 1\\n')\n"
            "subprocess.run(['sh', '-c', 'echo child out; echo child err >&2'])\n"
            "print('to stderr', file=sys.stderr)\n"
            "os.write(2, b'raw fd 2\\n')\n"
            "None\n")
    streamed, r = drv.cell(code)
    assert r.stdout == "print\nraw fd 1\nchild out\n"
    assert r.stderr == "child err\nto stderr\nraw fd 2\n"
    assert r.rc == 0 and r.results == []
    # The streamed frames carry the same bytes, in order per stream.
    assert joined(streamed, "o") == r.stdout
    assert joined(streamed, "e") == r.stderr


def test_output_of_one_cell_never_lands_in_the_next(drv):
    for i in range(50):
        _, r = drv.cell("import os; os.write(1, b'%d' * 5000); print('end')" % (i % 10))
        assert r.stdout == str(i % 10) * 5000 + "end\n"


def test_a_cell_may_write_more_than_a_pipe_holds(drv):
    _, r = drv.cell("import sys\nfor i in range(2000): sys.stdout.write('x' * 20 + '\\n')")
    assert r.stdout == ("x" * 20 + "\n") * 2000
    assert not r.trunc


def test_output_over_the_cap_is_cut_and_flagged(drv):
    streamed, r = drv.cell("import os\nfor _ in range(8): os.write(1, b'y' * %d)" % (OUT_CAP // 2))
    assert len(r.stdout) == OUT_CAP and r.trunc
    assert len(joined(streamed, "o")) <= OUT_CAP
    # The next cell starts with a fresh budget.
    _, r = drv.cell("print('ok')")
    assert r.stdout == "ok\n" and not r.trunc


def test_escapes_cannot_blow_a_reply_past_its_cap(drv):
    # \x01 becomes six bytes of JSON: the reply must still fit the cap.
    _, r = drv.cell("import os; os.write(1, b'\\x01' * %d)" % OUT_CAP)
    assert r.trunc
    assert len(json.dumps(r.stdout, ensure_ascii=False).encode()) <= OUT_CAP + 2


def test_bytes_that_are_not_utf8_are_replaced(drv):
    _, r = drv.cell("import os; os.write(1, b'a\\xffb\\n')")
    assert r.stdout == "a\ufffdb\n"


def test_exception_traceback_shows_only_the_cells_frames(drv):
    drv.cell("def boom():\n    return 1 / 0\n")
    _, r = drv.cell("x = 1\nboom()")
    assert r.rc == 1 and r.stdout == ""
    assert r.stderr.startswith("Traceback (most recent call last):\n")
    assert 'File "<cell-2>", line 2' in r.stderr and 'File "<cell-1>", line 2, in boom' in r.stderr
    assert "return 1 / 0" in r.stderr and r.stderr.rstrip().endswith("ZeroDivisionError: division by zero")
    assert "kern" not in r.stderr
    # The kernel lives on.
    assert drv.cell("x")[1].results == [{"text/plain": "1"}]


def test_syntax_error(drv):
    _, r = drv.cell("def (:")
    assert r.rc == 1 and "SyntaxError" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("code,rc,err", [
    ("import sys; sys.exit(3)", 3, ""),
    ("import sys; sys.exit()", 0, ""),
    ("raise SystemExit(258)", 2, ""),
    ("import sys; sys.exit('bye')", 1, "bye\n"),
    ("raise KeyboardInterrupt", 1, "KeyboardInterrupt"),
])
def test_exit_status_of_a_cell(drv, code, rc, err):
    _, r = drv.cell(code)
    assert r.rc == rc and err in r.stderr
    assert drv.cell("'alive'")[1].results == [{"text/plain": "'alive'"}]


def test_stdin_is_empty_and_fd0_is_dev_null(drv):
    _, r = drv.cell("import os, sys\n"
                    "print(repr(sys.stdin.read()))\n"
                    "try:\n    input()\nexcept EOFError:\n    print('eof')\n"
                    "print(os.readlink('/proc/self/fd/0'))\n"
                    "import subprocess\n"
                    "print(subprocess.run(['cat'], capture_output=True).stdout)")
    assert r.stdout == "''\neof\n/dev/null\nb''\n"


def test_control_channel_is_private(drv):
    # Only fds 0-2 survive into a child: the channel is close-on-exec, and
    # fds 1 and 2 are pipes owned by the driver, not the host's.
    _, r = drv.cell("import subprocess\n"
                    "print(subprocess.run(['ls', '/proc/self/fd'], capture_output=True, text=True).stdout.split())")
    assert r.stdout == "['0', '1', '2', '3']\n"   # 3: ls's own directory


def test_cell_namespace_is_a_fresh_main(drv):
    _, r = drv.cell("import sys\n[sorted(k for k in globals() if not k.startswith('__')), __name__,"
                    " sys.modules['__main__'].__dict__ is globals(), sys.argv]")
    assert r.results[0]["text/plain"] == "[['sys'], '__main__', True, ['']]"


def test_a_forked_child_returning_to_the_loop_exits(drv):
    _, r = drv.cell("import os\n"
                    "pid = os.fork()\n"
                    "if pid == 0:\n    print('child')\n"
                    "else:\n    os.waitpid(pid, 0)\n    print('parent')\n")
    assert r.stdout == "child\nparent\n"
    # Exactly one reply came: the next frame is the next cell's.
    _, r = drv.cell("'next'")
    assert r.results == [{"text/plain": "'next'"}]


def test_closed_or_redirected_fds_are_restored_for_the_next_cell(drv):
    _, r = drv.cell("import os, sys\nsys.stdout.close()\nos.close(1)\nos.dup2(os.open('/dev/null', os.O_WRONLY), 2)")
    assert r.rc == 0
    _, r = drv.cell("import os; print('back'); os.write(2, b'err back\\n')")
    assert (r.stdout, r.stderr) == ("back\n", "err back\n")


def test_output_written_between_cells_goes_to_the_next_cell(drv):
    drv.cell("import threading, time, os\n"
             "threading.Thread(target=lambda: (time.sleep(0.3), os.write(1, b'late\\n'))).start()")
    time.sleep(0.6)
    _, r = drv.cell("print('now')")
    assert r.stdout == "late\nnow\n"


def test_rich_results_display_tail_and_repr_methods(drv):
    code = ("class Rich:\n"
            "    def _repr_html_(self): return '<b>x</b>'\n"
            "    def _repr_markdown_(self): return ('**x**', {'meta': 1})\n"
            "    def _repr_png_(self): return b'\\x89PNG'\n"
            "    def _repr_json_(self): return {'a': [1]}\n"
            "    def _repr_svg_(self): raise ValueError('broken')\n"
            "    def __repr__(self): return 'Rich()'\n"
            "display(Rich(), 7)\n"
            "print('out')\n"
            "Rich\n")
    _, r = drv.cell(code)
    assert r.stdout == "out\n" and r.rc == 0
    assert r.results == [
        {"text/html": "<b>x</b>", "text/markdown": "**x**", "application/json": '{"a": [1]}',
         "image/png": "iVBORw==", "text/plain": "Rich()"},
        {"text/plain": "7"},
        # A class answers with its repr only, not its instances' methods.
        {"text/plain": "<class '__main__.Rich'>"},
    ]


def test_none_and_assignment_tails_give_no_result(drv):
    assert drv.cell("None")[1].results == []
    assert drv.cell("y = 3")[1].results == []
    assert drv.cell("print(1)")[1].results == []


def test_results_over_their_cap_are_dropped_and_flagged(drv):
    _, r = drv.cell("for i in range(10): display('z' * %d)" % (RES_CAP // 4))
    assert r.trunc and 1 <= len(r.results) < 10
    assert sum(len(json.dumps(b)) for b in r.results) <= RES_CAP


def test_matplotlib_figures_come_back_as_png_once(drv):
    probe = subprocess.run([drv.python, "-c", "import matplotlib"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("%s has no matplotlib (Debian: python3-matplotlib)" % drv.python)
    _, r = drv.cell("import os; os.environ['MPLBACKEND'] = 'Agg'\n"
                    "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.figure(); plt.bar([1], [2])\n"
                    "'tail'")
    assert r.rc == 0, r.stderr
    assert r.results[0] == {"text/plain": "'tail'"}
    pngs = [b["image/png"] for b in r.results[1:]]
    assert len(pngs) == 2 and all(p.startswith("iVBORw0KGgo") for p in pngs)
    # Shown once: the next cell has no figures left open.
    assert drv.cell("plt.get_fignums()")[1].results == [{"text/plain": "[]"}]


def test_eof_on_stdin_ends_the_driver_cleanly(drv):
    drv.cell("x = 1")
    rc, err = drv.close()
    assert rc == 0 and err == b""


def test_a_cell_as_large_as_a_megabyte(drv):
    code = "s = '" + "a" * (1 << 20) + "'\nlen(s)"
    assert drv.cell(code)[1].results == [{"text/plain": str(1 << 20)}]


def test_non_ascii_cell_and_output(drv):
    _, r = drv.cell("print('héllo ✓ 🐍'); 'ünï'")
    assert r.stdout == "héllo ✓ 🐍\n" and r.results == [{"text/plain": "'ünï'"}]


def test_driver_failure_is_reported_on_the_real_stderr(drv):
    # A header that is not a length is a host bug: the driver says so where
    # kern's own lines go, and exits 70.
    os.write(drv.proc.stdin.fileno(), b"zz\n")
    rc, err = drv.close()
    assert rc == 70 and b"kernel driver failed" in err and b"bad frame header" in err


# The host's codec, against hostile bytes.

def reader_for(data, cap=100):
    r, w = os.pipe()
    os.write(w, data)
    os.close(w)
    return _frames.FrameReader(r, cap), r


def test_codec_round_trip_and_split_reads():
    r, w = os.pipe()
    reader = _frames.FrameReader(r, 100)
    frame = _frames.encode(b'{"rc": 0}') + _frames.encode(b"")
    for byte in frame[:5]:
        os.write(w, bytes([byte]))
    os.write(w, frame[5:])
    assert reader.read(time.monotonic() + 5) == b'{"rc": 0}'
    assert reader.read(time.monotonic() + 5) == b""
    os.close(w)
    with pytest.raises(_frames.FrameEOF):
        reader.read(time.monotonic() + 5)
    os.close(r)


def test_codec_refuses_a_declared_length_over_the_cap():
    reader, fd = reader_for(b"101\n" + b"x" * 101)
    with pytest.raises(_frames.FrameOversize, match="100-byte cap"):
        reader.read()
    os.close(fd)


@pytest.mark.parametrize("data", [b"-1\n", b"1e3\n", b" 5\n", b"x" * 40, b"5\r\nabcde", b"\n"])
def test_codec_refuses_headers_that_are_not_lengths(data):
    reader, fd = reader_for(data)
    with pytest.raises(_frames.FrameMalformed):
        reader.read()
    os.close(fd)


def test_codec_eof_in_the_middle_of_a_body():
    reader, fd = reader_for(b"10\nabc")
    with pytest.raises(_frames.FrameEOF):
        reader.read()
    os.close(fd)


def test_codec_deadline():
    r, w = os.pipe()
    reader = _frames.FrameReader(r, 100)
    os.write(w, b"5\nab")
    t = time.monotonic()
    with pytest.raises(_frames.FrameTimeout):
        reader.read(t + 0.2)
    assert time.monotonic() - t < 5
    os.close(r)
    os.close(w)


@pytest.mark.parametrize("body", [b"not json", b"[1]", b'"s"', b"{}", b'{"rc": "0"}', b'{"rc": true}',
                                  b'{"rc": 0, "stdout": 1}', b'{"rc": 0, "results": {}}',
                                  b'{"rc": 0, "results": [1]}', b'{"rc": 0, "results": [{"a": 1}]}'])
def test_malformed_replies_are_refused(body):
    with pytest.raises(_frames.FrameMalformed):
        _frames.parse_reply(_frames.decode(body))


def test_a_well_formed_reply_and_the_other_frames():
    r = _frames.parse_reply(_frames.decode(
        b'{"stdout": "a", "stderr": "b", "rc": 3, "results": [{"text/plain": "1"}], "trunc": true}'))
    assert (r.stdout, r.stderr, r.rc, r.results, r.trunc) == ("a", "b", 3, [{"text/plain": "1"}], True)
    assert _frames.parse_reply(_frames.decode(b'{"rc": 0}')).trunc is False
    assert _frames.stream_text(_frames.decode(b'{"o": "x"}')) == ("o", "x")
    assert _frames.stream_text(_frames.decode(b'{"o": 1}')) is None
    assert _frames.is_hello(_frames.decode(b'{"hello": 1}'))


def test_driver_source_has_each_token_once():
    src = _inbox.driver_source(5, 6, True, True)
    assert "_KERN_OUT_CAP = 5\n" in src and "_KERN_RES_CAP = 6\n" in src and "_KERN_HELLO = 1\n" in src
    assert "_KERN_ONE_CALL = 1\n" in src
    assert "__KERN_" not in src
    compile(src, "<driver>", "exec")


def test_one_call_mode_stops_after_its_reply_and_never_kills_outside_a_box(tmp_path):
    # Outside a box (the parent is this test, not a kern init) the driver
    # must not send kill(-1): it only stops itself after the reply.
    d = Driver(PYTHONS[0], tmp_path, one_call=True)
    try:
        _, r = d.cell("import os\nprint(os.getppid() != 1)")
        assert r.stdout == "True\n"
        deadline = time.monotonic() + 10
        while True:
            with open("/proc/%d/stat" % d.proc.pid) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
            if state == "T":
                break
            assert time.monotonic() < deadline, "the driver did not stop (state %s)" % state
            time.sleep(0.02)
    finally:
        d.proc.kill()
        d.proc.wait()
        for f in (d.proc.stdin, d.proc.stdout, d.proc.stderr):
            f.close()


def test_in_box_sources_parse_as_python_3_8():
    # An image's python3 may be as old as 3.8 (spec 15.1): no newer syntax.
    import ast
    for src in (_inbox.driver_source(1, 1, True, True), _inbox.cell_source()):
        ast.parse(src, feature_version=(3, 8))
