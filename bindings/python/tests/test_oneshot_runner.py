"""The one-shot runner (spec 15.1) without a box: the script run_code writes
as .run-<id>.py, run by a host python3 the way a box runs it
(`python3 -u RUNNER`). Each test runs once per interpreter found, as the
kernel driver's tests do: an image's python3 is not ours to choose.

What the runner imports before the cell runs is paid by every cold
run_code; these tests hold it to what a bare interpreter has already loaded
and check that the behaviours the left-out modules served (tracebacks with
source lines, warnings, inspect, rich results) are all still there.
"""

import base64
import json
import subprocess

import pytest

from kern_sandbox._runner import runner_source
from test_kernel_driver import PYTHONS

# The same for every user: the unprivileged run of tests/run leaves it out.
pytestmark = pytest.mark.any_user

# Modules the runner imported eagerly before: each pulls in re, enum or
# tokenize, which a bare interpreter has not loaded.
LAZY = {"json", "base64", "ast", "traceback", "linecache", "tokenize", "re", "enum"}


def _run(python, tmp_path, code, *flags):
    cell, res = tmp_path / "cell.py", tmp_path / "res.json"
    cell.write_text(code)
    runner = tmp_path / "run.py"
    runner.write_text(runner_source(str(cell), str(res)))
    proc = subprocess.run([python, *flags, "-u", str(runner)], capture_output=True, text=True,
                          cwd=str(tmp_path), timeout=60)
    results = json.loads(res.read_text()) if res.exists() else []
    return proc, results


def _imported(stderr):
    # -X importtime lines: "import time: self | cumulative | <indent>name"
    return {line.rsplit("|", 1)[1].strip() for line in stderr.splitlines()
            if line.startswith("import time:") and "|" in line}


@pytest.mark.parametrize("python", PYTHONS)
def test_a_plain_cell_loads_nothing_a_bare_interpreter_has_not(python, tmp_path):
    bare = subprocess.run([python, "-X", "importtime", "-c", "pass"], capture_output=True,
                          text=True, timeout=60)
    proc, results = _run(python, tmp_path, "x = 6 * 7\nprint(x)", "-X", "importtime")
    assert proc.returncode == 0 and proc.stdout == "42\n" and results == []
    extra = _imported(proc.stderr) - _imported(bare.stderr)
    assert extra & LAZY == set(), extra
    assert extra <= {"_ast", "binascii"}, extra


@pytest.mark.parametrize("python", PYTHONS)
def test_an_uncaught_exception_shows_the_cells_lines_without_any_import(python, tmp_path):
    proc, _ = _run(python, tmp_path, "x = 1\nraise ValueError('boom %d' % x)\n")
    assert proc.returncode == 1
    assert proc.stderr == ("Traceback (most recent call last):\n"
                           "  File \"<cell>\", line 2, in <module>\n"
                           "    raise ValueError('boom %d' % x)\n"
                           "ValueError: boom 1\n")


@pytest.mark.parametrize("python", PYTHONS)
def test_traceback_warnings_and_inspect_in_the_cell_see_its_lines(python, tmp_path):
    code = ("import inspect, traceback, warnings\n"
            "def f():\n"
            "    return 1 / 0\n"
            "try:\n"
            "    f()\n"
            "except ZeroDivisionError:\n"
            "    traceback.print_exc()\n"
            "warnings.warn('careful')\n"
            "print(inspect.getsource(f), end='')\n")
    proc, _ = _run(python, tmp_path, code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "def f():\n    return 1 / 0\n"
    assert "  File \"<cell>\", line 3, in f\n    return 1 / 0\n" in proc.stderr
    assert "<cell>:8: UserWarning: careful\n  warnings.warn('careful')\n" in proc.stderr


@pytest.mark.parametrize("python", PYTHONS)
def test_rich_results_load_what_they_need(python, tmp_path):
    code = ("class P:\n"
            "    def _repr_png_(self): return bytes(range(256))\n"
            "    def _repr_json_(self): return {'a': [1, 'b']}\n"
            "display(P())\n"
            "{'k': 1}")
    proc, results = _run(python, tmp_path, code)
    assert proc.returncode == 0 and proc.stderr == ""
    assert results[0]["image/png"] == base64.b64encode(bytes(range(256))).decode("ascii")
    assert results[0]["application/json"] == '{"a": [1, "b"]}'
    assert results[1] == {"text/plain": "{'k': 1}"}


@pytest.mark.parametrize("python", PYTHONS)
def test_syntax_error_and_exit_status(python, tmp_path):
    proc, _ = _run(python, tmp_path, "x = (\n")
    assert proc.returncode == 1 and "SyntaxError" in proc.stderr
    assert "Traceback" not in proc.stderr
    proc, _ = _run(python, tmp_path, "raise SystemExit(3)")
    assert (proc.returncode, proc.stderr) == (3, "")


@pytest.mark.parametrize("python", PYTHONS)
def test_an_exception_is_still_printed_when_traceback_cannot_be_imported(python, tmp_path):
    # What a MemoryError leaves: no room to import traceback. The runner
    # falls back to the interpreter's own printer, from the cell's frame.
    code = "import sys\nsys.modules['traceback'] = None\nraise KeyError('gone')\n"
    proc, _ = _run(python, tmp_path, code)
    assert proc.returncode == 1
    assert proc.stderr.startswith("Traceback (most recent call last):\n  File \"<cell>\", line 3")
    assert proc.stderr.endswith("KeyError: 'gone'\n")
    assert "_kern" not in proc.stderr
