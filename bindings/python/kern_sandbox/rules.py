"""The mount, tmpfs, network and profile rules (spec §7), checked here
before kern runs: a refused request raises before any box starts.

kern refuses the worst of these itself too (its own state, bad targets);
the package refuses more (the host's system directories, credential
directories, $HOME) because a binding that hands them to a box on request
defeats the box.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from .errors import MountRefused, SandboxError

WORKSPACE = "/workspace"

# Sources refused together with everything below them.
SYSTEM_TREES = ("/etc", "/root", "/boot", "/proc", "/sys", "/dev")
DOCKER_SOCKETS = ("/var/run/docker.sock", "/run/docker.sock")
# A path with one of these components (or component pairs) holds credentials.
CREDENTIAL_NAMES = frozenset((
    ".ssh", ".aws", ".gnupg", ".kube", ".docker", ".azure", ".oci", ".terraform.d",
    ".password-store", ".netrc", ".git-credentials", ".pypirc", ".npmrc", ".databrickscfg",
    ".boto", ".s3cfg", ".rclone.conf"))
CREDENTIAL_CONFIG = frozenset(("gcloud", "gh", "doctl", "rclone"))

PROFILE = re.compile(r"^(vcpu|vgpio|vdisk):[A-Za-z0-9][A-Za-z0-9._-]*$")
APPARMOR = re.compile(r"^[A-Za-z0-9_.][A-Za-z0-9_.-]{0,127}$")
LABEL = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$")
TLD = re.compile(r"^[A-Za-z]{2,63}$")
TMPFS_SIZE = re.compile(r"^([1-9][0-9]*)([kKmMgGtT])$")
ENV_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
UNIT_MIB = {"k": 1 / 1024, "m": 1, "g": 1024, "t": 1024 * 1024}

MountSpec = Union[str, Tuple[str, str]]


@dataclass(frozen=True)
class Mount:
    """A checked bind: host ``src`` (resolved), box ``dst``, read-only or not."""

    src: str
    dst: str
    read_only: bool

    def argv(self) -> List[str]:
        """``-v SRC:DST[:ro]``, or ``--mount`` when a path holds ``:`` or ``,``
        (fields quoted as box-cli.md §2.1 describes)."""
        if any(c in p for p in (self.src, self.dst) for c in ":,"):
            fields = ["type=bind", _quote("src=" + self.src), _quote("dst=" + self.dst)]
            if self.read_only:
                fields.append("ro")
            return ["--mount", ",".join(fields)]
        return ["-v", "%s:%s%s" % (self.src, self.dst, ":ro" if self.read_only else "")]


def _quote(field: str) -> str:
    if "," in field or ":" in field or '"' in field:
        return '"' + field.replace('"', '""') + '"'
    return field


def _under(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


def _home() -> str:
    home = os.environ.get("HOME", "")
    return os.path.realpath(home) if home else ""


def kern_state_dirs() -> List[str]:
    """kern's runtime, cache, config and data directories, from the
    environment and their defaults (every runtime candidate of kern box's
    ENVIRONMENT section, man kern-box)."""
    uid = os.getuid()
    home = os.environ.get("HOME", "")
    dirs = ["/run/user/%d/kern" % uid, "/dev/shm/kern-%d" % uid, "/tmp/kern-%d" % uid,
            "/tmp/kern-cache-%d" % uid]
    if uid == 0:
        dirs.append("/run/kern")
    state_home = os.environ.get("XDG_STATE_HOME", "")
    if state_home:
        dirs.append(os.path.join(state_home, "kern", "run"))
    elif home:
        dirs.append(os.path.join(home, ".local", "state", "kern", "run"))
    for var, default in (("XDG_RUNTIME_DIR", ""), ("XDG_CACHE_HOME", ".cache"),
                         ("XDG_CONFIG_HOME", ".config"), ("XDG_DATA_HOME", ".local/share")):
        value = os.environ.get(var, "")
        if value:
            dirs.append(os.path.join(value, "kern"))
        if default and home:
            dirs.append(os.path.join(home, default, "kern"))
    return [os.path.realpath(d) for d in dirs]


def _credential_component(path: str) -> Optional[str]:
    parts = [p for p in path.split("/") if p]
    for i, part in enumerate(parts):
        if part in CREDENTIAL_NAMES:
            return part
        if part == ".config" and i + 1 < len(parts) and parts[i + 1] in CREDENTIAL_CONFIG:
            return ".config/" + parts[i + 1]
    return None


def _check_clean(value: object, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise SandboxError("%s must be a non-empty string, not %r" % (what, value))
    if "\0" in value or "\n" in value:
        raise MountRefused("%s %r contains a NUL or newline" % (what, value))
    return value


def check_source(src: str, what: str = "mount source") -> str:
    """The resolved host path of a bind source, or MountRefused.

    Refused: ``/``, ``$HOME`` and any directory that contains one of the
    paths below; the host's system trees (/etc, /root, /boot, /proc, /sys,
    /dev) and everything in them; the docker socket; kern's own state; any
    path with a credential component (.ssh, .aws, .config/gcloud, ...).
    The path as given and its resolved form are both checked.
    """
    _check_clean(src, what)
    given = os.path.abspath(os.path.expanduser(src))
    real = os.path.realpath(given)
    home = _home()
    sockets = [os.path.realpath(s) for s in DOCKER_SOCKETS] + list(DOCKER_SOCKETS)
    state = kern_state_dirs()
    for path in dict.fromkeys((given, real)):
        cred = _credential_component(path)
        if cred:
            raise MountRefused("refusing to mount %s: it is inside a credential directory (%s)"
                               % (src, cred))
        if path == "/" or (home and path == home):
            raise MountRefused("refusing to mount %s: it is %s" % (
                src, "the host's root" if path == "/" else "your home directory ($HOME)"))
        if home and _under(home, path):
            raise MountRefused("refusing to mount %s: it contains your home directory (%s)"
                               % (src, home))
        for top in SYSTEM_TREES:
            if _under(path, top):
                raise MountRefused("refusing to mount %s: %s is a host system path" % (src, top))
        for guarded in sockets + state:
            if _under(path, guarded) or _under(guarded, path):
                what = "the docker socket" if guarded in sockets else "kern's own state"
                raise MountRefused("refusing to mount %s: it %s %s (%s)" % (
                    src, "is" if _under(path, guarded) else "contains", what, guarded))
    return real


def _normal_target(dst: object, what: str) -> str:
    _check_clean(dst, what)
    assert isinstance(dst, str)
    if not dst.startswith("/"):
        raise MountRefused("%s %r must be an absolute path" % (what, dst))
    parts = [p for p in dst.split("/") if p]
    if any(p in (".", "..") for p in parts):
        raise MountRefused("%s %r has a '.' or '..' component" % (what, dst))
    return "/" + "/".join(parts)


def check_target(dst: object) -> str:
    """A bind target: absolute, clean, not /, /proc, /sys, /dev, nothing
    under /proc or /sys, not /workspace (the session's own bind)."""
    target = _normal_target(dst, "mount target")
    if target in ("/", "/dev", WORKSPACE) or _under(target, "/proc") or _under(target, "/sys"):
        raise MountRefused("refusing mount target %s" % target)
    return target


def check_mounts(mounts: Optional[Mapping[str, MountSpec]]) -> List[Mount]:
    """``{host_src: box_dst}`` or ``{host_src: (box_dst, "ro"|"rw")}``."""
    if mounts is None:
        return []
    if not isinstance(mounts, Mapping):
        raise SandboxError("mounts must be a dict {host_src: box_dst}, not %r" % type(mounts))
    out: List[Mount] = []
    for src, spec in mounts.items():
        mode = "rw"
        if isinstance(spec, (tuple, list)):
            if len(spec) != 2 or spec[1] not in ("ro", "rw"):
                raise SandboxError("mounts[%r] must be a box path or (path, 'ro'|'rw'), not %r"
                                   % (src, spec))
            spec, mode = spec[0], spec[1]
        out.append(Mount(check_source(src), check_target(spec), mode == "ro"))
    targets = [m.dst for m in out]
    if len(set(targets)) != len(targets):
        raise MountRefused("two mounts share one target: %s" % sorted(targets))
    return out


def tmpfs_mib(size: str) -> float:
    m = TMPFS_SIZE.fullmatch(size)
    if not m:
        raise MountRefused("tmpfs size %r must be a number with a unit (k, m, g, t), e.g. '64m';"
                           " bare numbers are bytes to kern and 0 is unlimited" % size)
    return int(m.group(1)) * UNIT_MIB[m.group(2).lower()]


def default_tmpfs(memory_mb: Optional[int]) -> Dict[str, str]:
    """``/tmp`` of min(64, memory_mb // 2) MiB (at least 1; 64 uncapped)."""
    size = 64 if memory_mb is None else max(1, min(64, memory_mb // 2))
    return {"/tmp": "%dm" % size}


def check_tmpfs(tmpfs: Optional[Mapping[str, str]], memory_mb: Optional[int],
                mounts: Sequence[Mount]) -> List[Tuple[str, str]]:
    """The (path, size) pairs to pass as ``--tmpfs PATH:SIZE``."""
    if tmpfs is None:
        tmpfs = default_tmpfs(memory_mb)
    if not isinstance(tmpfs, Mapping):
        raise SandboxError("tmpfs must be a dict {path: size}, not %r" % type(tmpfs))
    out = []
    for path, size in tmpfs.items():
        target = _normal_target(path, "tmpfs target")
        if ":" in target:
            raise MountRefused("tmpfs target %r contains ':'" % path)
        if target in ("/", WORKSPACE) or any(_under(target, t) for t in ("/proc", "/sys", "/dev")):
            raise MountRefused("refusing a tmpfs at %s%s" % (
                target, " (/dev/shm cannot be resized)" if target == "/dev/shm" else ""))
        for m in mounts:
            if _under(m.dst, target):
                raise MountRefused("a tmpfs at %s would cover the mount at %s" % (target, m.dst))
        if not isinstance(size, str):
            raise MountRefused("tmpfs size for %s must be a string like '64m', not %r"
                               % (target, size))
        mib = tmpfs_mib(size)
        if memory_mb is not None and mib > memory_mb:
            raise MountRefused("tmpfs %s of %s is larger than memory_mb=%d (it is charged to "
                               "the box's memory)" % (target, size, memory_mb))
        out.append((target, size))
    return out


def check_profiles(profiles: Optional[Iterable[str]]) -> List[str]:
    if profiles is None:
        return []
    if isinstance(profiles, str):
        raise SandboxError("profiles must be a list of tokens, not a string")
    out = list(profiles)
    for token in out:
        if not isinstance(token, str) or not PROFILE.fullmatch(token):
            raise SandboxError("profile %r must look like vcpu:NAME, vgpio:NAME or vdisk:NAME"
                               % (token,))
    return out


def check_domain(domain: object) -> str:
    """An LDH domain with at least one dot and an alphabetic TLD."""
    if not isinstance(domain, str) or not domain or len(domain) > 253:
        raise SandboxError("egress_allow entry %r is not a domain name" % (domain,))
    labels = domain.split(".")
    if len(labels) < 2 or not all(LABEL.fullmatch(label) for label in labels) \
            or not TLD.fullmatch(labels[-1]):
        raise SandboxError("egress_allow entry %r is not a domain name (letters, digits and "
                           "hyphens, at least one dot, an alphabetic top-level domain)" % domain)
    return domain.lower()


def check_network(network: object, egress_allow: Optional[Iterable[str]]) -> List[str]:
    if not isinstance(network, bool):
        raise SandboxError("network must be True or False, not %r" % (network,))
    if egress_allow is None:
        return []
    if isinstance(egress_allow, str):
        raise SandboxError("egress_allow must be a list of domains, not a string")
    domains = [check_domain(d) for d in egress_allow]
    if network and domains:
        raise SandboxError("network=True and egress_allow exclude each other: network=True "
                           "shares the host network, egress_allow allows only the listed domains")
    if not domains:
        raise SandboxError("egress_allow must list at least one domain (use network=False for none)")
    return domains


def check_apparmor(name: Optional[str]) -> Optional[str]:
    if name is not None and (not isinstance(name, str) or not APPARMOR.fullmatch(name)):
        raise SandboxError("apparmor profile name %r is not valid" % (name,))
    return name


def check_security_profile(value: Optional[str]) -> Optional[str]:
    if value is not None and value != "untrusted":
        raise SandboxError("security_profile must be None or 'untrusted', not %r" % (value,))
    return value


def check_env(env: Optional[Mapping[str, str]]) -> Dict[str, str]:
    """Extra box environment: names of letters, digits and _, values
    without NUL or newline (the env-file is one KEY=VALUE per line)."""
    if env is None:
        return {}
    if not isinstance(env, Mapping):
        raise SandboxError("env must be a dict {name: value}")
    out = {}
    for key, value in env.items():
        if not isinstance(key, str) or not ENV_KEY.fullmatch(key):
            raise SandboxError("env name %r is not valid" % (key,))
        if not isinstance(value, str) or "\n" in value or "\0" in value:
            raise SandboxError("env[%r] must be a string without NUL or newline" % key)
        out[key] = value
    return out
