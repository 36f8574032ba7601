// The option rules (python-binding.md §3, §7) against the Python package's
// own kern_sandbox/rules.py: the same hostile inputs go through both, in
// the same environment ($HOME, XDG_*, working directory: a fixture tree
// with credential directories, kern state and symlinks), and the verdict
// (the value, or the error class and message) must match, so the two
// rule sets cannot drift. Python runs in Debian's /usr/bin/python3 from
// this checkout. Python's option names in messages (memory_mb) are
// compared as their camelCase spelling (memoryMb).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, mkdirSync, symlinkSync, writeFileSync, rmSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import path from "node:path";
import { PKG, TOP } from "./helpers.mjs";

const PYDIR = process.env.KERN_MODEL_TEXT_PY || path.join(TOP, "bindings", "python");
const missing = existsSync(path.join(PYDIR, "kern_sandbox", "rules.py")) ? false : `the Python package's rules.py is not in this checkout (${PYDIR})`;

// Both harnesses read [[fn, ...args], ...] and print one verdict per op:
// {ok: value} or {err: class name, msg: message}.
const PY = `
import json, sys
from kern_sandbox import rules
from kern_sandbox.errors import SandboxError
def mounts(m):
    return {k: tuple(v) if isinstance(v, list) else v for k, v in m.items()}
out = []
for fn, *args in json.load(sys.stdin):
    try:
        if fn == "credentialNames":
            v = sorted(rules.CREDENTIAL_NAMES) + sorted(".config/" + c for c in rules.CREDENTIAL_CONFIG)
        elif fn == "checkSource":
            v = rules.check_source(*args)
        elif fn == "checkTarget":
            v = rules.check_target(*args)
        elif fn == "checkMounts":
            v = [[m.src, m.dst, m.read_only] for m in rules.check_mounts(mounts(args[0]))]
        elif fn == "checkTmpfs":
            v = [list(t) for t in rules.check_tmpfs(args[0], args[1], rules.check_mounts(mounts(args[2])))]
        elif fn == "checkDomain":
            v = rules.check_domain(*args)
        elif fn == "kernStateDirs":
            v = rules.kern_state_dirs()
        out.append({"ok": v})
    except SandboxError as e:
        out.append({"err": type(e).__name__, "msg": str(e)})
json.dump(out, sys.stdout)
`;
const NODE = `
const rules = require(${JSON.stringify(path.join(PKG, "lib", "rules.cjs"))});
const ops = JSON.parse(require("node:fs").readFileSync(0, "utf8"));
const out = ops.map(([fn, ...args]) => {
	try {
		let v;
		if (fn === "checkMounts") v = rules.checkMounts(args[0]).map((m) => [m.src, m.dst, m.readOnly]);
		else if (fn === "checkTmpfs") v = rules.checkTmpfs(args[0], args[1], rules.checkMounts(args[2]));
		else if (fn === "kernStateDirs") v = rules.kernStateDirs();
		else v = rules[fn](...args);
		return { ok: v };
	} catch (e) {
		return { err: e.constructor.name, msg: e.message };
	}
});
process.stdout.write(JSON.stringify(out));
`;

let top;
let env;
before(() => {
	top = mkdtempSync(path.join(tmpdir(), "kern-node-rules-"));
	const d = (p) => mkdirSync(path.join(top, p), { recursive: true });
	for (const p of ["home/u/proj", "home/u/.cache/kern/images", "xdg-cache/kern/inner", "xdg-data", "proj/.config/gh", "proj/.config/other", "proj/.cargo", "proj/.aws/sub", "work"]) d(p);
	writeFileSync(path.join(top, "proj", "file"), "x");
	symlinkSync(path.join(top, "proj", ".aws"), path.join(top, "proj", "innocent"));
	symlinkSync("/etc", path.join(top, "proj", "to-etc"));
	symlinkSync(path.join(top, "home", "u"), path.join(top, "proj", "to-home"));
	symlinkSync(path.join(top, "xdg-cache", "kern"), path.join(top, "work", "to-state"));
	env = {
		PATH: process.env.PATH,
		HOME: path.join(top, "home", "u"),
		XDG_CACHE_HOME: path.join(top, "xdg-cache"),
		XDG_DATA_HOME: path.join(top, "xdg-data"),
		PYTHONPATH: PYDIR,
		PYTHONDONTWRITEBYTECODE: "1",
	};
});
after(() => rmSync(top, { recursive: true, force: true }));

function run(cmd, args, ops) {
	const r = spawnSync(cmd, args, { input: JSON.stringify(ops), encoding: "utf8", env, cwd: path.join(top, "work"), maxBuffer: 1 << 26 });
	assert.equal(r.status, 0, r.stderr);
	return JSON.parse(r.stdout);
}

const camel = (s) => s.replace(/\bmemory_mb\b/g, "memoryMb").replace(/\begress_allow\b/g, "egressAllow");

// Where the two differ on purpose, and what must hold instead (each
// checked, so a case cannot silently change):
const KNOWN = new Map([
	// POSIX keeps a leading "//" (Python's abspath does, Node's resolve
	// does not): both refuse, Python's message names the home directory.
	[JSON.stringify(["checkSource", "//"]), (py, js) => py.err === "MountRefused" && js.err === "MountRefused"],
	// A JavaScript caller writes [path, mode], a Python caller (path, mode):
	// each message shows the caller's own spelling.
	[null, (py, js) => py.err === "SandboxError" && js.err === "SandboxError" && /must be a box path or \[path, 'ro'\|'rw'\], not \[/.test(js.msg)],
	// Python's re `$` also matches before a final newline, so rules.py takes
	// "a.org\n" (kern refuses it later); Node refuses it here. Reported.
	[JSON.stringify(["checkDomain", "a.org\n"]), (py, js) => js.err === "SandboxError"],
]);
const knownCheck = (op) => KNOWN.get(JSON.stringify(op)) || (op[0] === "checkMounts" && Object.values(op[1]).some((v) => Array.isArray(v) && v[1] !== "ro" && v[1] !== "rw") ? KNOWN.get(null) : null);

function compare(ops) {
	const py = run("/usr/bin/python3", ["-c", PY], ops);
	const js = run(process.execPath, ["-e", NODE], ops);
	const diff = [];
	ops.forEach((op, i) => {
		const p = py[i].err ? { err: py[i].err, msg: camel(py[i].msg) } : py[i];
		const known = knownCheck(op);
		if (known) {
			if (!known(p, js[i])) diff.push(`${JSON.stringify(op)} (a known difference, no longer as described)\n  python: ${JSON.stringify(p)}\n  node:   ${JSON.stringify(js[i])}`);
			return;
		}
		try {
			assert.deepEqual(js[i], p);
		} catch {
			diff.push(`${JSON.stringify(op)}\n  python: ${JSON.stringify(p)}\n  node:   ${JSON.stringify(js[i])}`);
		}
	});
	assert.equal(diff.length, 0, `${diff.length} of ${ops.length} differ:\n${diff.slice(0, 12).join("\n")}`);
	return py;
}

test("mount sources: the same verdict and message as kern_sandbox/rules.py for every refused and allowed kind", { skip: missing }, () => {
	const [{ ok: creds }] = run("/usr/bin/python3", ["-c", PY], [["credentialNames"]]);
	assert.ok(creds.length >= 20, creds.join());
	const p = (...s) => path.join(top, ...s);
	const sources = [
		"/", "//", "/etc", "/etc/", "//etc/", "/usr/../etc", "/etc/ssl", "/root", "/boot", "/proc", "/proc/1", "/sys", "/dev", "/dev/shm",
		"/var/run/docker.sock", "/run/docker.sock", "/var/run", "/run", "/usr", "/tmp", "/home",
		"~", "~/", "~/proj", "~/.cache", "~/.cache/kern", "~/.cache/kern/images", "~/../u", "~nobody/x", "~root", "~root/.ssh", "~root//x", "~nosuchuser/x", "~nosuchuser",
		p("home"), p("home", "u"), p("home", "u", "proj"), p("home", "u", "proj", "..", "..", "u"),
		p("xdg-cache"), p("xdg-cache", "kern"), p("xdg-cache", "kern", "inner"), p("xdg-data"),
		p("proj"), p("proj", "file"), p("proj", "innocent"), p("proj", "to-etc"), p("proj", "to-home"), p("work", "to-state"),
		p("proj", ".config"), p("proj", ".config", "other"), p("proj", ".cargo"), p("proj", "does", "not", "exist"),
		".", "..", "proj", "to-state", "", "a\nb", "a\0b", `/run/user/${process.getuid()}/kern`, `/tmp/kern-${process.getuid()}`, `/tmp/kern-cache-${process.getuid()}/x`,
		`/dev/shm/kern-${process.getuid()}`, "/run/kern", "~/.local/state", "~/.local/state/kern/run",
		...creds.map((c) => p("proj", c, "sub")),
		...creds.map((c) => `/nonexistent/${c}`),
		...[".cargo", ".m2", ".gem", ".sshx", "ssh", ".aws2", ".config/ghx", "config/gh"].map((c) => p("proj", c)),
	];
	compare([["kernStateDirs"], ...sources.map((s) => ["checkSource", s])]);
});

test("targets, mount maps and tmpfs: the same verdict and message as rules.py", { skip: missing }, () => {
	const proj = path.join(top, "proj");
	const targets = ["/", "/dev", "/dev/shm", "/workspace", "/workspace/x", "/proc", "/proc/1", "/sys/fs", "/x", "/x/", "//x//y", "/x/./y", "/x/../y", "x", "", "/a:b", "/a,b", "/a\nb", "/opt/data"];
	const ops = targets.map((t) => ["checkTarget", t]);
	for (const m of [
		{ [proj]: "/data" },
		{ [proj]: ["/data", "ro"] },
		{ [proj]: ["/data", "rw"] },
		{ [proj]: ["/data", "rx"] },
		{ [proj]: "/data", [path.join(top, "proj", ".cargo")]: "/data" },
		{ [proj]: "/data", [path.join(top, "proj", ".config", "other")]: "/data/sub" },
		{ [path.join(top, "proj", "to-etc")]: "/data" },
		{ [proj]: "/workspace" },
	]) ops.push(["checkMounts", m]);
	const sizes = ["64m", "1k", "1K", "2g", "1t", "64", "0", "0m", "-1m", "1.5m", "m", "64mb", " 64m", "9999999g"];
	for (const s of sizes) for (const mem of [null, 128]) ops.push(["checkTmpfs", { "/tmp": s }, mem, {}]);
	for (const t of ["/", "/workspace", "/dev/shm", "/proc/x", "/sys", "/dev", "/a:b", "relative", "/x/../y", "/data", "/data/sub", "/da"]) ops.push(["checkTmpfs", { [t]: "8m" }, 256, { [proj]: "/data/sub" }]);
	for (const mem of [null, 1, 2, 3, 127, 128, 129, 100000]) ops.push(["checkTmpfs", null, mem, {}]);
	ops.push(["checkTmpfs", { "/tmp": "8m", "/var/tmp": "300m" }, 256, {}]);
	compare(ops);
});

test("egress domains: the same verdict and message as rules.py", { skip: missing }, () => {
	const domains = ["pypi.org", "PyPI.org", "files.pythonhosted.org", "a.b.c.d.example", "xn--bcher-kva.example", "localhost", "pypi", "-a.org", "a-.org", "a..org", ".a.org", "a.org.", "1.2.3.4", "x.123", "a_b.org", "", "a.org/x", "a.org:443", "a .org", "ünï.org", `${"a".repeat(63)}.org`, `${"a".repeat(64)}.org`, `${"a.".repeat(126)}org`, `${"ab.".repeat(84)}org`, "a.o", "a.org\n"];
	compare(domains.map((d) => ["checkDomain", d]));
});
