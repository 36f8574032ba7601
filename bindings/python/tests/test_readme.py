"""The Python examples of README.md run and say what their comments say."""

import contextlib
import io
import re

from conftest import TOP


def python_blocks():
    text = (TOP / "README.md").read_text()
    section = text.split("\n## Python\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_first_example_prints_42(kern_bin):
    first = python_blocks()[0]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(first, {})
    assert out.getvalue() == "42\n\n"  # stdout's own newline, then print's


def test_session_example(kern_bin):
    block = python_blocks()[1]
    ns = {}
    exec("import kern_sandbox as kern", ns)
    exec(block.replace("    sbx.run_code(\"while True: pass\", timeout_s=1).fault\n",
                       "    fault = sbx.run_code(\"while True: pass\", timeout_s=1).fault\n"), ns)
    import kern_sandbox as kern
    r = ns["r"]
    assert r.results[0].text == "2"
    assert r.files == [kern.FileInfo(path="sum.txt", size=1, change="created")]
    assert ns["fault"] == kern.SandboxFault(
        "timeout", "exceeded the 1s time limit (killed by the binding)")
    for line in block.splitlines():
        m = re.match(r"\s+sbx\.read_file\(\"sum\.txt\"\)\s+# (b'.*')$", line)
        if m:
            assert m.group(1) == "b'6'"
