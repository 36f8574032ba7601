"""Spec §5, §11, §15.1 on real boxes: rich results, streaming, the stderr
split and the output cap."""

import base64
import resource
import threading
import time

import pytest

import kern_sandbox as kern

PNG = b"\x89PNG\r\n\x1a\n"


def _has(module):
    import importlib.util
    return importlib.util.find_spec(module) is not None


def test_trailing_expression_and_display(sbx):
    r = sbx.run_code("display([1, 2]); display('two')\nx = 40\nx + 2")
    assert [res.text for res in r.results] == ["[1, 2]", "'two'", "42"]
    assert r.stdout == "" and r.exit_code == 0


def test_none_tail_and_statement_tail_give_nothing(sbx):
    assert sbx.run_code("None").results == []
    assert sbx.run_code("x = 1").results == []


def test_repr_methods_become_mime_types(sbx):
    code = ("class Rich:\n"
            "    def _repr_html_(self): return '<b>x</b>'\n"
            "    def _repr_markdown_(self): return '**x**'\n"
            "    def _repr_svg_(self): return '<svg/>'\n"
            "    def _repr_latex_(self): return '$x$'\n"
            "    def _repr_json_(self): return {'a': [1]}\n"
            "    def _repr_png_(self): return b'\\x89PNG'\n"
            "    def _repr_jpeg_(self): raise ValueError('broken repr')\n"
            "    def __repr__(self): return 'Rich()'\n"
            "Rich()")
    r = sbx.run_code(code)
    assert r.success, r.stderr
    res = r.results[0]
    assert (res.html, res.markdown, res.svg, res.latex, res.text) == \
        ("<b>x</b>", "**x**", "<svg/>", "$x$", "Rich()")
    assert res.json == '{"a": [1]}'
    assert base64.b64decode(res.png) == b"\x89PNG" and res.jpeg is None
    assert r.stderr == ""


def test_capture_never_changes_output_or_status(sbx):
    code = "import sys\nprint('out')\nsys.stderr.write('err\\n')\ndisplay(1)\nsys.exit(4)"
    r = sbx.run_code(code)
    assert (r.stdout, r.stderr, r.exit_code) == ("out\n", "err\n", 4)
    assert [x.text for x in r.results] == ["1"]


def test_a_hostile_results_file_is_ignored(sbx):
    # The cell replaces the runner's result file with junk and a FIFO
    # elsewhere; the host reads neither as results.
    code = ("import glob, os\n"
            "for p in glob.glob('/workspace/.run-*.py'):\n"
            "    rid = p.split('.run-')[1][:-3]\n"
            "    os.mkfifo('/workspace/.res-%s.json' % rid)\n")
    t = time.monotonic()
    r = sbx.run_code(code)
    assert r.success and r.results == [] and time.monotonic() - t < 10


@pytest.mark.skipif(not _has("matplotlib"), reason="python3-matplotlib is not installed on the host")
def test_matplotlib_figure_without_savefig(kern_bin):
    # Debian's matplotlib reads /etc/matplotlibrc, which the host image's
    # /etc does not carry (box-cli.md §2.7 lists what it does): point it
    # at the copy under /usr. MPLCONFIGDIR: the root is read-only.
    env = {"MPLCONFIGDIR": "/tmp", "MATPLOTLIBRC": "/usr/share/matplotlib/matplotlib.conf"}
    with kern.Sandbox(image="host", env=env) as s:
        r = s.run_code("import matplotlib\nmatplotlib.use('Agg')\n"
                       "import matplotlib.pyplot as plt\nplt.plot([1, 4, 9])\nprint('plotted')")
    assert r.success, r.stderr
    assert r.stdout == "plotted\n"
    figs = [x for x in r.results if x.png]
    assert len(figs) == 1
    assert base64.b64decode(figs[0].png).startswith(PNG)
    assert "Figure" in figs[0].text
    assert r.files == []  # nothing was saved to the workspace


@pytest.mark.skipif(not _has("pandas"), reason="python3-pandas is not installed on the host")
def test_pandas_dataframe_as_html(kern_bin):
    with kern.Sandbox(image="host") as s:
        s.write_file("data.csv", "a,b\n1,2\n3,4\n")
        r = s.run_code("import pandas as pd\npd.read_csv('data.csv').describe()")
    assert r.success, r.stderr
    assert "<table" in r.results[0].html and "mean" in r.results[0].html
    assert "mean" in r.results[0].text


def test_streaming_order(sbx):
    chunks = []
    lock = threading.Lock()

    def out(text):
        with lock:
            chunks.append(("o", text, time.monotonic()))

    def err(text):
        with lock:
            chunks.append(("e", text, time.monotonic()))

    code = ("import sys, time\n"
            "for i in range(5):\n"
            "    print('line', i, flush=True)\n"
            "    sys.stderr.write('err %d\\n' % i); sys.stderr.flush()\n"
            "    time.sleep(0.2)\n")
    t = time.monotonic()
    r = sbx.run_code(code, on_stdout=out, on_stderr=err)
    end = time.monotonic()
    assert r.success
    streamed_out = "".join(c[1] for c in chunks if c[0] == "o")
    streamed_err = "".join(c[1] for c in chunks if c[0] == "e")
    assert streamed_out == r.stdout == "".join("line %d\n" % i for i in range(5))
    assert streamed_err == r.stderr
    # They arrived while the box ran, not all at the end.
    first_o = min(c[2] for c in chunks if c[0] == "o")
    assert first_o - t < (end - t) - 0.5
    # Across the two streams, in the order the box wrote them: everything
    # of step i (0.2 s apart) reached the callbacks before anything of i+1.
    def step_of(chunk):
        return {int(w) for w in chunk[1].split() if w.isdigit()}
    steps = [step_of(c) for c in chunks]
    for i in range(4):
        last_of_i = max(n for n, s in enumerate(steps) if i in s)
        first_of_next = min(n for n, s in enumerate(steps) if i + 1 in s)
        assert last_of_i < first_of_next, chunks


def test_slow_callback_never_stalls_the_box(sbx):
    seen = []

    def slow(text):
        seen.append(text)
        time.sleep(0.5)

    t = time.monotonic()
    r = sbx.run_code("for i in range(200000): print(i)", on_stdout=slow, timeout_s=30)
    assert r.success
    # The captured output is complete although the callback lagged.
    assert r.stdout.count("\n") == 200000
    assert time.monotonic() - t < 20
    assert len("".join(seen)) < len(r.stdout)


def test_failing_callback_does_not_fail_the_call(sbx):
    def boom(text):
        raise RuntimeError("callback bug")
    r = sbx.run_code("print('x')", on_stdout=boom)
    assert r.success and r.stdout == "x\n"


def test_code_stderr_and_runtime_notes(kern_bin):
    # The untrusted profile makes kern print its banner: a real kern line.
    with kern.Sandbox(image="host", security_profile="untrusted") as s:
        r = s.run_code("import sys\nsys.stderr.write('mine 1\\n')\nsys.stderr.write('mine 2\\n')")
    assert r.success, r.stderr
    assert r.runtime_notes and all(n.startswith("kern: security-profile=untrusted:")
                                   for n in r.runtime_notes)
    assert r.code_stderr == "mine 1\nmine 2\n"
    assert r.stderr.index("kern: security-profile") < r.stderr.index("mine 1")
    for line in r.stderr.split("\n"):
        assert line in r.runtime_notes or line in r.code_stderr.split("\n")


def test_output_over_the_cap_is_cut_and_host_memory_stays_bounded(kern_bin):
    cap = 1 << 20
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with kern.Sandbox(image="host", max_output_bytes=cap, timeout_s=60) as s:
        # 256 MiB on stdout and 64 MiB on stderr.
        r = s.run(["sh", "-c", "head -c 268435456 /dev/zero | tr '\\0' a; "
                   "head -c 67108864 /dev/zero | tr '\\0' b >&2; echo done >&2"])
    grew_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert r.truncated and r.exit_code == 0 and r.fault is None
    assert len(r.stdout) == cap and set(r.stdout) == {"a"}
    assert len(r.stderr) == cap
    assert grew_kib < 48 * 1024, "host RSS grew %d KiB" % grew_kib


def test_output_under_the_cap_is_whole(sbx):
    r = sbx.run(["sh", "-c", "head -c 100000 /dev/zero | tr '\\0' z"])
    assert not r.truncated and len(r.stdout) == 100000


def test_invalid_utf8_is_replaced(sbx):
    r = sbx.run(["printf", "\\377ok"])
    assert r.stdout == "\ufffdok"
