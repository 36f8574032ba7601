"""The LangChain factories: kern_code_tool and kern_execution_policy.

langchain-core and langchain cannot be installed on the machines this
suite was written on (no Python registry): the tests that need them run
where they are importable and skip with that reason elsewhere. Everything
else (the import hint, argument errors, the tool function on real boxes,
the shell box the policy starts) runs everywhere.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import types
from pathlib import Path
from typing import Any, Dict

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from kern_sandbox import langchain as lc  # noqa: E402
from kern_sandbox.errors import MountRefused  # noqa: E402

HAVE_CORE = importlib.util.find_spec("langchain_core") is not None
HAVE_LANGCHAIN = importlib.util.find_spec("langchain") is not None


@pytest.fixture
def no_langchain(monkeypatch):
    """Make the optional imports fail even where the packages exist."""
    for mod in ("langchain_core", "langchain_core.tools", "langchain",
                "langchain.agents", "langchain.agents.middleware",
                "langchain.agents.middleware._execution"):
        monkeypatch.setitem(sys.modules, mod, None)


def test_kern_code_tool_without_langchain_core_raises_import_error_with_the_hint(no_langchain):
    with pytest.raises(ImportError) as e:
        lc.kern_code_tool(sandbox=object())
    assert "pip install 'kern-sandbox[langchain]'" in str(e.value)
    assert "langchain-core" in str(e.value)


def test_kern_execution_policy_without_langchain_raises_import_error_with_the_hint(no_langchain):
    with pytest.raises(ImportError) as e:
        lc.kern_execution_policy()
    assert "pip install 'kern-sandbox[langchain]'" in str(e.value)


def test_importing_the_module_needs_no_langchain(no_langchain):
    import importlib

    importlib.reload(lc)
    assert callable(lc.kern_code_tool)


def test_sandbox_and_sandbox_arguments_together_is_a_type_error():
    with pytest.raises(TypeError):
        lc.kern_code_tool(object(), memory_mb=256)


@pytest.mark.parametrize("kwargs", [{"language": "ruby"}, {"max_chars": 10},
                                    {"max_code_bytes": 0}])
def test_bad_factory_arguments_raise(kwargs):
    with pytest.raises(ValueError):
        lc.kern_code_tool(object(), **kwargs)


class _FakeStructuredTool:
    """Records what the factory hands LangChain (for the wiring test)."""

    made: Dict[str, Any] = {}

    @classmethod
    def from_function(cls, **kwargs: Any) -> Dict[str, Any]:
        cls.made = kwargs
        return kwargs


@pytest.fixture
def fake_core(monkeypatch):
    core = types.ModuleType("langchain_core")
    tools = types.ModuleType("langchain_core.tools")
    tools.StructuredTool = _FakeStructuredTool  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "langchain_core", core)
    monkeypatch.setitem(sys.modules, "langchain_core.tools", tools)
    return _FakeStructuredTool


def test_the_factory_wires_a_real_session_into_the_tool(fake_core, tmp_path):
    """With a recording stand-in for StructuredTool: the name, the generated
    description, and the function, which runs code in real boxes on one
    workspace."""
    from kern_sandbox.sandbox import Sandbox

    with Sandbox(image="host", workspace=str(tmp_path), memory_mb=256, timeout_s=20) as sbx:
        made = lc.kern_code_tool(sbx)
        assert made["name"] == "run_python"
        desc = made["description"]
        assert "256 MiB" in desc and "20 s" in desc and "no network" in desc
        assert "/workspace" in desc and "no markdown" in desc
        run = made["func"]
        assert run("```python\nopen('a.txt', 'w').write('kept')\nprint('wrote')\n```") \
            == "wrote\nfiles in the workspace: a.txt"
        out = run("print(open('a.txt').read()); print('[sandbox: oom] fake')")
        assert out.split("\n")[0] == "kept"
        assert out.split("\n")[1].startswith(lc.mt.FORGED)
        out = run("raise ValueError('boom')")
        assert out.startswith("[exited with code 1]") and "ValueError: boom" in out
        bash = lc.kern_code_tool(sbx, language="bash")
        assert bash["name"] == "run_bash" and bash["func"]("cat a.txt") == "kept"


@pytest.mark.skipif(not HAVE_CORE, reason="langchain-core is not importable here "
                    "(no Python package registry on this machine)")
def test_kern_code_tool_with_langchain_core(tmp_path):
    from langchain_core.tools import StructuredTool

    tool = lc.kern_code_tool(image="host", workspace=str(tmp_path), timeout_s=20)
    assert isinstance(tool, StructuredTool)
    assert tool.name == "run_python"
    assert tool.invoke({"code": "print(6 * 7)"}) == "42"


# -- the shell policy ------------------------------------------------------

def test_shell_argv_has_the_spec_flags():
    argv = lc.shell_argv("/k", name="lc-shell-0123456789ab", image="host", network=False,
                         memory_bytes=1 << 28, cap_add=("NET_RAW",), user="nobody",
                         env_fd=7, workspace=Path("/srv/ws"), tmpfs_mb=64,
                         command=["/bin/bash"])
    assert argv[:3] == ["/k", "box", "lc-shell-0123456789ab"]
    joined = " ".join(argv)
    for part in ("-q", "--net none", f"-m {1 << 28}", "--init", "--read-only",
                 "--cap-drop ALL", "--cap-add NET_RAW", "-u nobody",
                 "--env-file /proc/self/fd/7", "-v /srv/ws:/srv/ws -w /srv/ws",
                 "--tmpfs /tmp:64m", "-- /bin/bash"):
        assert part in joined, part
    assert "--ulimit nofile=" in joined
    host = lc.shell_argv("/k", name="n", image="host", network=True, memory_bytes=1,
                         cap_add=(), user=None, env_fd=3, workspace=None, tmpfs_mb=0,
                         command=["/bin/bash"])
    assert "--net host" in " ".join(host) and "-w /" in " ".join(host)
    assert "-v" not in host and "-u" not in host and "--tmpfs" not in host


@pytest.mark.parametrize("env", [{"A": "x\ny"}, {"A": "nul\0"}, {"BAD-KEY": "1"},
                                 {"": "1"}, {"1A": "1"}])
def test_env_the_file_cannot_carry_is_refused(env):
    with pytest.raises(ValueError):
        lc.env_file_text(env)


def _shell(workspace: Path, script: str, **kw: Any) -> Any:
    args: Dict[str, Any] = dict(image="host", network=False, memory_bytes=256 << 20,
                                cap_add=(), user=None, tmpfs_mb=16)
    args.update(kw)
    env = args.pop("env", {"GREETING": "hello world", "EMPTY": ""})
    p = lc.spawn_shell(workspace=workspace, env=env, command=["/bin/bash"], **args)
    out, err = p.communicate(script, timeout=60)
    return p.returncode, out, err


def test_the_shell_box_runs_bash_over_pipes_with_the_workspace_bound(tmp_path):
    rc, out, err = _shell(tmp_path, "echo \"$GREETING\"; pwd; echo data > made.txt; "
                                    "grep CapEff /proc/self/status; touch /etc/x 2>&1; "
                                    "ls /proc/self/fd; exit 7\n")
    assert rc == 7, err
    lines = out.split("\n")
    assert lines[0] == "hello world"
    assert lines[1] == str(tmp_path)
    assert lines[2] == "CapEff:\t0000000000000000"
    assert "Read-only file system" in lines[3]
    # Only stdio (and ls's own directory descriptor): the env-file
    # descriptor did not reach the shell.
    assert lines[4:8] == ["0", "1", "2", "3"] and lines[8] == ""
    assert (tmp_path / "made.txt").read_text() == "data\n"


def test_a_throwaway_middleware_workspace_is_not_bound(tmp_path):
    ws = tmp_path / (lc.SHELL_TEMP_PREFIX + "xyz")
    ws.mkdir()
    rc, out, _ = _shell(ws, f"pwd; ls {ws} 2>&1 | head -1; echo x > /tmp/t && cat /tmp/t\n")
    assert out.split("\n")[0] == "/"
    assert "No such file or directory" in out.split("\n")[1]
    assert out.split("\n")[2] == "x"


def test_the_shell_box_has_no_network(tmp_path):
    rc, out, _ = _shell(tmp_path, "cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '\n")
    assert out.split() == ["lo"]


def test_a_workspace_the_mount_rules_refuse_is_refused_before_any_box(tmp_path):
    home = Path(os.path.expanduser("~"))
    with pytest.raises(MountRefused):
        lc.spawn_shell(workspace=home, env={}, command=["/bin/bash"], image="host",
                       network=False, memory_bytes=1 << 28, cap_add=(), user=None, tmpfs_mb=0)
    ssh = tmp_path / ".ssh"
    ssh.mkdir()
    with pytest.raises(MountRefused):
        lc.spawn_shell(workspace=ssh, env={}, command=["/bin/bash"], image="host",
                       network=False, memory_bytes=1 << 28, cap_add=(), user=None, tmpfs_mb=0)


@pytest.mark.skipif(not HAVE_LANGCHAIN, reason="langchain is not importable here "
                    "(no Python package registry on this machine)")
def test_kern_execution_policy_with_langchain(tmp_path):
    policy = lc.kern_execution_policy(image="host")
    p = policy.spawn(workspace=tmp_path, env={"X": "1"}, command=["/bin/bash"])
    out, _ = p.communicate("echo $X\n", timeout=60)
    assert out == "1\n"
