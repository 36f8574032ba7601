// Options the binding refuses before any box starts (python-binding.md §3,
// §7): every relaxation of isolation is explicit, and some are refused
// even when asked for.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, mkdirSync, symlinkSync, rmSync, readdirSync } from "node:fs";
import { tmpdir, homedir } from "node:os";
import path from "node:path";
import { kern, boxes, boxesStartedSince } from "./helpers.mjs";

const { Sandbox, SandboxError, MountRefused } = kern;
const refused = (opts, re) => assert.throws(() => new Sandbox({ image: "host", ...opts }), (e) => e instanceof MountRefused && (!re || re.test(e.message)), JSON.stringify(opts));
const invalid = (opts) => assert.throws(() => new Sandbox({ image: "host", ...opts }), (e) => e instanceof SandboxError && !(e instanceof MountRefused), JSON.stringify(opts));

test("host system paths are refused as mount sources, even when asked for", () => {
	for (const src of ["/", "/etc", "/etc/ssl", "/root", "/boot", "/proc", "/proc/1", "/sys", "/dev", "/var/run/docker.sock", "/run/docker.sock", "//etc/", "/usr/../etc"]) {
		refused({ mounts: { [src]: "/x" } });
	}
});

test("$HOME and anything that contains it are refused; a directory below it is not", () => {
	// A home outside the system trees (root's own, /root, is one anyway).
	const saved = process.env.HOME;
	process.env.HOME = "/srv/kern-node-test-home/user";
	try {
		refused({ mounts: { "/srv/kern-node-test-home/user": "/x" } }, /your home directory \(\$HOME\)/);
		refused({ mounts: { "/srv/kern-node-test-home/user/": "/x" } }, /your home directory \(\$HOME\)/);
		refused({ mounts: { "/srv/kern-node-test-home": "/x" } }, /contains your home directory/);
		refused({ mounts: { "~": "/x" } }, /your home directory/);
		assert.doesNotThrow(() => new Sandbox({ image: "host", mounts: { "/srv/kern-node-test-home/user/project": "/x" } }));
	} finally {
		process.env.HOME = saved;
	}
});

test("every credential path component is refused; .cargo, .m2 and .gem are not", () => {
	for (const c of [".ssh", ".aws", ".gnupg", ".kube", ".docker", ".azure", ".oci", ".terraform.d", ".password-store", ".netrc", ".git-credentials", ".pypirc", ".npmrc", ".databrickscfg", ".boto", ".s3cfg", ".rclone.conf"]) {
		refused({ mounts: { [`/srv/u/${c}`]: "/x" } }, /credential/);
		refused({ mounts: { [`/srv/u/${c}/inner`]: "/x" } }, /credential/);
	}
	for (const c of ["gcloud", "gh", "doctl", "rclone"]) refused({ mounts: { [`/srv/u/.config/${c}`]: "/x" } }, /credential/);
	for (const c of [".cargo", ".m2", ".gem", ".config/other"]) assert.doesNotThrow(() => new Sandbox({ image: "host", mounts: { [`/srv/u/${c}`]: "/x" } }));
});

test("a symlink to a refused path is refused by what it points at", () => {
	const d = mkdtempSync(path.join(tmpdir(), "kern-node-rules-"));
	try {
		symlinkSync("/etc", path.join(d, "innocent"));
		refused({ mounts: { [path.join(d, "innocent")]: "/x" } });
		mkdirSync(path.join(d, "keys"));
		symlinkSync(path.join(d, "keys"), path.join(d, ".ssh"));
		refused({ mounts: { [path.join(d, ".ssh")]: "/x" } }, /credential/);
	} finally {
		rmSync(d, { recursive: true });
	}
});

test("kern's own state directories, their parents and their insides are refused", () => {
	const home = process.env.HOME || homedir();
	for (const src of [path.join(home, ".cache", "kern"), path.join(home, ".cache", "kern", "images"), path.join(home, ".config", "kern"), path.join(home, ".local", "share", "kern")]) {
		refused({ mounts: { [src]: "/x" } });
	}
	refused({ mounts: { [`/tmp/kern-${process.getuid()}`]: "/x" } }, /kern's own state/);
	refused({ mounts: { "/tmp": "/x" } }, /kern's own state/);
	const xdg = mkdtempSync(path.join(tmpdir(), "kern-node-xdg-"));
	const saved = process.env.XDG_RUNTIME_DIR;
	process.env.XDG_RUNTIME_DIR = xdg;
	try {
		refused({ mounts: { [path.join(xdg, "kern")]: "/x" } }, /kern's own state/);
		refused({ mounts: { [xdg]: "/x" } }, /kern's own state/);
	} finally {
		if (saved === undefined) delete process.env.XDG_RUNTIME_DIR;
		else process.env.XDG_RUNTIME_DIR = saved;
		rmSync(xdg, { recursive: true });
	}
});

test("bad mount targets and sources are refused", () => {
	for (const dst of ["/", "/proc", "/proc/sys", "/sys", "/sys/fs", "/dev", "//dev/", "/workspace", "relative", "/a/../b", "/a/./b", "/a\nb", "/a\0b"]) {
		refused({ mounts: { "/srv/data": dst } });
	}
	for (const src of ["/srv/a\nb", "/srv/a\0b"]) refused({ mounts: { [src]: "/x" } });
	// A relative source is taken from the current directory, as Python's os.path.abspath does.
	refused({ mounts: { "../../../../../../../etc": "/x" } }, /host system path/);
	refused({ mounts: { "/srv/a": "/x", "/srv/b": "/x/" } }, /share one target/);
	assert.doesNotThrow(() => new Sandbox({ image: "host", mounts: { "/srv/data": "/dev/shm" } }));
	invalid({ mounts: { "/srv/data": ["/x", "rwx"] } });
	invalid({ mounts: ["/srv/data"] });
});

test("tmpfs: refused targets, sizes without a unit or above memoryMb, and covering a bind", () => {
	for (const t of ["/", "/proc", "/sys", "/dev", "/dev/shm", "/workspace", "/a:b", "rel"]) refused({ tmpfs: { [t]: "16m" } });
	for (const size of ["64", "0", "0m", "1x", "", "-1m"]) refused({ tmpfs: { "/tmp": size } });
	refused({ memoryMb: 128, tmpfs: { "/tmp": "129m" } });
	refused({ memoryMb: 128, tmpfs: { "/tmp": "1g" } });
	refused({ mounts: { "/srv/data": "/data/in" }, tmpfs: { "/data": "16m" } }, /cover/);
	refused({ mounts: { "/srv/data": "/data" }, tmpfs: { "/data": "16m" } }, /cover/);
	assert.doesNotThrow(() => new Sandbox({ image: "host", mounts: { "/srv/data": "/data" }, tmpfs: { "/data/scratch": "16m" } }));
	assert.doesNotThrow(() => new Sandbox({ image: "host", memoryMb: null, tmpfs: { "/tmp": "2g" } }));
});

test("network, egress, profiles, security profile, AppArmor, caps, env and user are checked", () => {
	invalid({ network: true, egressAllow: ["pypi.org"] });
	for (const d of ["localhost", "pypi", "-a.org", "a-.org", "a..org", "1.2.3.4", "x.123", "a_b.org", "", "a.org/x"]) invalid({ egressAllow: [d] });
	invalid({ egressAllow: [] });
	assert.doesNotThrow(() => new Sandbox({ image: "host", egressAllow: ["pypi.org", "files.pythonhosted.org"] }));
	for (const p of ["cpu:x", "vcpu:", "vcpu:-x", "vcpu:a b", "vdisk"]) invalid({ profiles: [p] });
	assert.doesNotThrow(() => new Sandbox({ image: "host", profiles: ["vcpu:heavy", "vgpio:leds", "vdisk:s.1"] }));
	invalid({ securityProfile: "trusted" });
	for (const a of ["-x", "a b", "x".repeat(129), "a/b"]) invalid({ apparmor: a });
	invalid({ capDrop: ["NOT A CAP"] });
	invalid({ env: { "1X": "y" } });
	invalid({ env: { X: "a\nb" } });
	invalid({ user: "a b" });
});

test("numbers must be in range, the deadline finite, and unknown options are TypeErrors", () => {
	for (const t of [0, -1, Infinity, NaN, "5", null]) invalid({ timeoutS: t });
	for (const m of [0, 1.5, -5]) invalid({ memoryMb: m });
	invalid({ cpus: 0 });
	invalid({ pids: 0 });
	invalid({ maxOutputBytes: 0 });
	invalid({ prewarm: -1 });
	invalid({ network: "yes" });
	assert.throws(() => new Sandbox({ image: "host", timeout: 5 }), TypeError);
	assert.throws(() => new Sandbox({ image: "host", memory_mb: 5 }), TypeError);
});

test("a refused option starts no box", () => {
	const before = boxes();
	refused({ mounts: { "/etc": "/etc" } });
	assert.deepEqual(boxesStartedSince(before), []);
});

test("a refused workspace path: the workspace is bound into every box, and nothing is created for it", () => {
	refused({ workspace: "/etc" });
	const d = mkdtempSync(path.join(tmpdir(), "kern-node-rules-"));
	try {
		refused({ workspace: path.join(d, ".aws", "ws") });
		assert.throws(() => readdirSync(path.join(d, ".aws")), { code: "ENOENT" });
	} finally {
		rmSync(d, { recursive: true });
	}
});
