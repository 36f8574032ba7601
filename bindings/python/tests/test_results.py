"""python-binding.md §5 (results), §11 (code_stderr, runtime_notes,
streaming), §15.1 (the one-shot runner) on real boxes, beyond the shared
table (test_shared_cases.py, which the Node package runs too and which
holds the rich-result, streaming-order, stderr-split and truncation
cases): figures and DataFrames, slow and failing callbacks, host memory
under a flood."""

import base64
import resource
import time

import pytest

import kern_sandbox as kern

PNG = b"\x89PNG\r\n\x1a\n"


def _has(module):
    import importlib.util
    return importlib.util.find_spec(module) is not None


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
