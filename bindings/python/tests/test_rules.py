"""python-binding.md §3 (arguments) and §7 (mount, tmpfs and network
rules): every argument is checked, and every refused mount, tmpfs,
network or profile request raises before kern is even run."""

import os
import stat

import pytest

import kern_sandbox as kern
from kern_sandbox import MountRefused, SandboxError
from kern_sandbox.rules import CREDENTIAL_NAMES, default_tmpfs


@pytest.fixture
def no_kern(tmp_path, monkeypatch):
    """A KERN_BIN that records every run: a refusal must never reach it."""
    log = tmp_path / "kern.log"
    fake = tmp_path / "kern"
    fake.write_text("#!/bin/sh\necho \"$@\" >> %s\necho 'kern 0.31.0'\n" % log)
    fake.chmod(0o755)
    monkeypatch.setenv("KERN_BIN", str(fake))
    yield log
    assert not log.exists(), "kern ran: %s" % log.read_text()


def refused(exc=MountRefused, **kwargs):
    with pytest.raises(exc) as info:
        kern.Sandbox(image="host", **kwargs)
    return str(info.value)


@pytest.mark.parametrize("src", ["/", "/etc", "/etc/ssl", "/root", "/boot", "/proc", "/proc/1",
                                 "/sys", "/dev", "/dev/shm", "/var/run/docker.sock",
                                 "/run/docker.sock"])
def test_host_system_sources(no_kern, src):
    assert "refusing to mount" in refused(mounts={src: "/x"})


def test_home_and_what_contains_it(no_kern, tmp_path, monkeypatch):
    home = tmp_path / "home" / "u"
    home.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    assert "home directory" in refused(mounts={str(home): "/x"})
    assert "contains your home directory" in refused(mounts={str(tmp_path / "home"): "/x"})
    # A project below $HOME is what mounts are for.
    (home / "proj").mkdir()
    assert kern.rules.check_source(str(home / "proj")) == str(home / "proj")


@pytest.mark.parametrize("component", sorted(CREDENTIAL_NAMES) + [
    ".config/gcloud", ".config/gh", ".config/doctl", ".config/rclone"])
def test_credential_components(no_kern, tmp_path, component):
    path = tmp_path / "proj" / component / "sub"
    path.mkdir(parents=True)
    assert "credential" in refused(mounts={str(path): "/x"})


def test_credential_reached_through_a_symlink(no_kern, tmp_path):
    (tmp_path / ".aws").mkdir()
    (tmp_path / "innocent").symlink_to(tmp_path / ".aws")
    assert "credential" in refused(mounts={str(tmp_path / "innocent"): "/x"})


@pytest.mark.parametrize("allowed", [".cargo", ".m2", ".gem", ".config/other"])
def test_allowed_dot_dirs(no_kern, tmp_path, allowed):
    path = tmp_path / allowed
    path.mkdir(parents=True)
    assert kern.rules.check_source(str(path)) == str(path)


@pytest.mark.parametrize("var", ["XDG_RUNTIME_DIR", "XDG_CACHE_HOME", "XDG_CONFIG_HOME",
                                 "XDG_DATA_HOME"])
def test_kern_state(no_kern, tmp_path, monkeypatch, var):
    base = tmp_path / var.lower()
    (base / "kern" / "inner").mkdir(parents=True)
    monkeypatch.setenv(var, str(base))
    for src in (base / "kern", base / "kern" / "inner", base):
        assert "kern's own state" in refused(mounts={str(src): "/x"})


def test_kern_state_defaults(no_kern, tmp_path, monkeypatch):
    home = tmp_path / "h"
    (home / ".cache" / "kern").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert "kern's own state" in refused(mounts={str(home / ".cache" / "kern"): "/x"})
    assert "kern's own state" in refused(mounts={str(home / ".cache"): "/x"})


def test_kern_runtime_fallbacks(no_kern, tmp_path, monkeypatch):
    """Every runtime directory kern box may pick without XDG_RUNTIME_DIR
    (issue 16: /dev/shm/kern-<uid> before /tmp/kern-<uid>) is kern's state,
    and so is the home fallback."""
    uid = os.getuid()
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    for path in ("/tmp/kern-%d" % uid, str(tmp_path / ".local" / "state" / "kern" / "run"),
                 str(tmp_path / ".local" / "state")):
        assert "kern's own state" in refused(mounts={path: "/x"})
    # Under /dev, which is refused as a whole.
    refused(mounts={"/dev/shm/kern-%d" % uid: "/x"})
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "st"))
    assert "kern's own state" in refused(mounts={str(tmp_path / "st" / "kern"): "/x"})


def test_workspace_follows_the_same_rules(no_kern, tmp_path):
    assert "credential" in refused(workspace=str(tmp_path / ".ssh"))
    assert "host system path" in refused(workspace="/etc")


@pytest.mark.parametrize("dst", ["/", "/proc", "/proc/sys", "/sys", "/sys/fs", "/dev",
                                 "relative", "/a/../b", "/a/./b", "/x\n", "/x\0", "/workspace"])
def test_refused_targets(no_kern, tmp_path, dst):
    refused(mounts={str(tmp_path): dst})


def test_target_normalised_and_dev_shm_allowed(no_kern, tmp_path):
    m = kern.rules.check_mounts({str(tmp_path): "//dev//shm/"})
    assert m[0].dst == "/dev/shm" and not m[0].read_only


def test_bad_mount_modes(no_kern, tmp_path):
    refused(SandboxError, mounts={str(tmp_path): ("/x", "rx")})
    refused(SandboxError, mounts={str(tmp_path): ("/x",)})
    refused(SandboxError, mounts=[str(tmp_path)])


@pytest.mark.parametrize("tmpfs", [{"/": "1m"}, {"/proc": "1m"}, {"/sys/x": "1m"},
                                   {"/dev": "1m"}, {"/dev/shm": "1m"}, {"/workspace": "1m"},
                                   {"/a:b": "1m"}, {"/tmp": "1024"}, {"/tmp": "0"},
                                   {"/tmp": "0m"}, {"/tmp": "1x"}, {"/tmp": 64},
                                   {"/tmp": "600m"}, {"/tmp": "1g"}, {"tmp": "1m"}])
def test_refused_tmpfs(no_kern, tmpfs):
    refused(tmpfs=tmpfs)


def test_tmpfs_may_not_cover_a_mount(no_kern, tmp_path):
    assert "cover" in refused(mounts={str(tmp_path): "/data/in"}, tmpfs={"/data": "8m"})
    assert "cover" in refused(mounts={str(tmp_path): "/data"}, tmpfs={"/data": "8m"})
    # Below a bound directory is fine.
    kern.rules.check_tmpfs({"/data/scratch": "8m"}, 512,
                           kern.rules.check_mounts({str(tmp_path): "/data"}))


def test_default_tmpfs_size():
    assert default_tmpfs(512) == {"/tmp": "64m"}
    assert default_tmpfs(100) == {"/tmp": "50m"}
    assert default_tmpfs(1) == {"/tmp": "1m"}
    assert default_tmpfs(None) == {"/tmp": "64m"}


def test_tmpfs_above_memory_is_refused_but_uncapped_is_not(no_kern):
    refused(memory_mb=128, tmpfs={"/tmp": "129m"})
    kern.rules.check_tmpfs({"/tmp": "4g"}, None, [])


@pytest.mark.parametrize("kwargs", [
    {"network": True, "egress_allow": ["pypi.org"]},
    {"egress_allow": ["localhost"]}, {"egress_allow": ["a..b.com"]},
    {"egress_allow": ["-a.com"]}, {"egress_allow": ["a.123"]}, {"egress_allow": ["a_b.com"]},
    {"egress_allow": "pypi.org"}, {"egress_allow": []}, {"egress_allow": ["x" * 64 + ".com"]},
    {"network": "yes"},
    {"profiles": ["vcpu"]}, {"profiles": ["cpu:x"]}, {"profiles": ["vcpu:-x"]},
    {"profiles": "vcpu:x"},
    {"security_profile": "strict"}, {"apparmor": "a b"}, {"apparmor": "-x"},
    {"apparmor": "x" * 129},
    {"timeout_s": 0}, {"timeout_s": -1}, {"timeout_s": float("inf")}, {"timeout_s": float("nan")},
    {"timeout_s": True}, {"timeout_s": "30"},
    {"memory_mb": 0}, {"memory_mb": 1.5}, {"pids": 1}, {"cpus": 0}, {"cpus": float("nan")},
    {"max_output_bytes": 0}, {"cap_drop": "ALL"}, {"cap_drop": ("ALL;rm",)},
    {"env": {"A B": "x"}}, {"env": {"A": "x\ny"}}, {"env": {"A": 1}},
    {"user": "a b"}, {"image": ""}, {"image": "--net"}, {"image": "a b"},
    {"setup": ""}, {"deps_readonly": 1}, {"enforce_limits": None},
    # A trailing newline: `$` alone would let each of these through to kern.
    {"env": {"A\n": "x"}}, {"egress_allow": ["pypi.org\n"]}, {"profiles": ["vcpu:x\n"]},
    {"apparmor": "x\n"}, {"tmpfs": {"/scratch": "8m\n"}},
])
def test_bad_arguments(no_kern, kwargs):
    with pytest.raises(SandboxError):
        kern.Sandbox(**{"image": "host", **kwargs})


def test_good_arguments_are_normalised(tmp_path):
    cfg = kern._config.make_config({"image": "host", "egress_allow": ["PyPI.org"],
                                    "cap_drop": ("net_raw",), "cpus": 2, "timeout_s": 5})
    assert cfg.egress_allow == ("pypi.org",)
    assert cfg.cap_drop == ("NET_RAW",)
    assert cfg.cpus == 2.0 and cfg.timeout_s == 5.0


def test_kern_bin_must_be_an_executable_file(tmp_path, monkeypatch):
    monkeypatch.setenv("KERN_BIN", str(tmp_path))
    with pytest.raises(SandboxError, match="is not an executable file"):
        kern.Sandbox(image="host")
    plain = tmp_path / "k"
    plain.write_text("#!/bin/sh\n")
    plain.chmod(0o644)
    monkeypatch.setenv("KERN_BIN", str(plain))
    with pytest.raises(SandboxError, match="is not an executable file"):
        kern.Sandbox(image="host")


def test_kern_bin_must_be_kern(tmp_path, monkeypatch):
    fake = tmp_path / "notkern"
    fake.write_text("#!/bin/sh\necho 'kernel 1.2.3'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("KERN_BIN", str(fake))
    with pytest.raises(SandboxError, match="is not kern"):
        kern.Sandbox(image="host")


def test_kern_replaced_after_construction_is_noticed(tmp_path, monkeypatch):
    fake = tmp_path / "kern"
    fake.write_text("#!/bin/sh\necho 'kern 0.31.0'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("KERN_BIN", str(fake))
    sbx = kern.Sandbox(image="host")
    fake.write_text("#!/bin/sh\necho 'evil 0.0.0 (a different, longer file)'\n")
    with pytest.raises(SandboxError, match="is not kern"):
        sbx.run(["true"])
    sbx.close()


def test_missing_kern(monkeypatch, tmp_path):
    monkeypatch.delenv("KERN_BIN")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SandboxError, match="not found on PATH"):
        kern.Sandbox(image="host")


def test_not_linux(monkeypatch):
    monkeypatch.setattr(kern._locate.sys, "platform", "darwin")
    with pytest.raises(SandboxError, match="Linux-only"):
        kern.Sandbox(image="host")
