"""The box argv of python-binding.md §9 (spawning), flag for flag,
without starting a box."""

import pytest

from kern_sandbox._argv import BoxRequest, box_argv, box_name, deadline_backstop
from kern_sandbox._config import make_config

# The same for every user: the unprivileged run of tests/run leaves it out.
pytestmark = pytest.mark.any_user


def argv(cfg_kwargs=None, ws="/tmp/ws", **req):
    cfg = make_config(cfg_kwargs or {})
    req.setdefault("name", "pysbx-000000000000")
    req.setdefault("command", ["python3", "-u", "/workspace/.run-x.py"])
    req.setdefault("kern_timeout", 35)
    return box_argv(cfg, ws, BoxRequest(**req))


def test_default_run_box():
    assert argv({"image": "host"}, env_file="/p/env") == [
        "box", "pysbx-000000000000", "--image", "host", "--ro", "-v", "/tmp/ws:/workspace",
        "--workdir", "/workspace", "--cap-drop", "ALL", "--no-uid-range", "--timeout", "35",
        "--memory", "512m", "--pids-limit", "256", "--tmpfs", "/tmp:64m",
        "--env-file", "/p/env", "--", "python3", "-u", "/workspace/.run-x.py"]


def test_every_flag_in_spec_order(tmp_path):
    src = tmp_path / "data"
    src.mkdir()
    got = argv({"image": "host", "memory_mb": 256, "cpus": 1.5, "pids": 64,
                "require_limits": True, "security_profile": "untrusted", "apparmor": "kern-box",
                "egress_allow": ["pypi.org"], "profiles": ["vcpu:small"],
                "mounts": {str(src): ("/data", "ro")}, "tmpfs": {"/tmp": "16m", "/scratch": "8m"},
                "cap_drop": ("NET_RAW", "SYS_ADMIN"), "user": "1000:1000"},
               deps_ro=True, pyc_dir="/c/pyc", env_file="/p/env", extra=["-d", "--init"])
    assert got == [
        "box", "pysbx-000000000000", "--image", "host", "--ro", "-v", "/tmp/ws:/workspace",
        "--workdir", "/workspace", "-v", "/tmp/ws/.deps:/workspace/.deps:ro",
        "-v", "/c/pyc:/kern-pyc:ro", "--cap-drop", "NET_RAW", "--cap-drop", "SYS_ADMIN",
        "--user", "1000:1000", "--timeout", "35", "--memory", "256m", "--cpus", "1.5",
        "--pids-limit", "64", "--require-limits", "--security-profile", "untrusted",
        "--apparmor", "kern-box", "--egress-allow", "pypi.org", "vcpu:small",
        "-v", "%s:/data:ro" % src, "--tmpfs", "/tmp:16m", "--tmpfs", "/scratch:8m",
        "--env-file", "/p/env", "-d", "--init", "--", "python3", "-u", "/workspace/.run-x.py"]


def test_network_and_uncapped():
    got = argv({"image": "host", "network": True, "memory_mb": None, "pids": None,
                "tmpfs": {}, "cap_drop": ()})
    assert "--net" in got and "--memory" not in got and "--pids-limit" not in got
    assert "--tmpfs" not in got and "--cap-drop" not in got
    # Without --cap-drop ALL a range map is kern's call, not forced off.
    assert "--no-uid-range" not in got


def test_setup_box_overrides():
    got = argv({"image": "host", "egress_allow": ["pypi.org"]}, network="host", read_only=False,
               tmpfs=False, command=["sh", "-c", "true"])
    assert "--net" in got and "--egress-allow" not in got
    assert "--ro" not in got and "--tmpfs" not in got


def test_paths_with_colon_or_comma_use_mount(tmp_path):
    odd = tmp_path / "a:b,c"
    odd.mkdir()
    got = argv({"image": "host", "mounts": {str(odd): ("/x", "ro")}}, ws=str(odd))
    assert got[5:7] == ["--mount", 'type=bind,"src=%s",dst=/workspace' % odd]
    i = got.index('type=bind,"src=%s",dst=/x,ro' % odd)
    assert got[i - 1] == "--mount"


def test_names_and_backstop():
    assert box_name().startswith("pysbx-") and len(box_name()) == 18
    assert box_name() != box_name()
    assert deadline_backstop(30) == 35 and deadline_backstop(0.5) == 5
    assert deadline_backstop(2.9) == 7


@pytest.mark.parametrize("cpus,text", [(2, "2"), (0.5, "0.5"), (1.25, "1.25")])
def test_cpus_format(cpus, text):
    got = argv({"image": "host", "cpus": cpus})
    assert got[got.index("--cpus") + 1] == text
