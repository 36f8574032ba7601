// One-shot calls on real boxes (python-binding.md §8-§11): languages, real
// pipes, a kill from outside, the registry's startup failures, a mount
// kern refuses at run time, slow callbacks, host memory under a flood.
// The fault types, the stderr split, streaming order and truncation are
// cases of the shared table (cases.test.mjs), which the Python package
// runs too.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, rmdirSync, symlinkSync, writeFileSync } from "node:fs";
import { execFile } from "node:child_process";
import { tmpdir } from "node:os";
import path from "node:path";
import { kern, KERN, boxes, until, startRegistry, assertNothingLeft } from "./helpers.mjs";

const { Sandbox, SandboxError, MountRefused, runCode } = kern;
let sbx;
let reg;
let dir;
before(async () => {
	dir = mkdtempSync(path.join(tmpdir(), "kern-node-run-"));
	// A private image cache: the registry's port changes every run.
	process.env.XDG_CACHE_HOME = path.join(dir, "cache");
	sbx = await Sandbox.create({ image: "host", memoryMb: 128, timeoutS: 20 });
	reg = startRegistry(path.join(dir, "reg"));
});
after(async () => {
	await sbx.close();
	if (reg && reg.stop) reg.stop();
	rmSync(dir, { recursive: true, force: true });
});

test("python, bash, sh and node, each in a fresh box on the workspace", async () => {
	const py = await sbx.runCode("import os; print(6*7, os.getcwd())");
	assert.equal(py.stdout, "42 /workspace\n");
	assert.equal(py.success, true);
	const bash = await sbx.runCode("a=(x y); echo ${a[1]} $$", { language: "bash" });
	assert.equal(bash.stdout.split(" ")[0], "y");
	const sh = await sbx.runCode("echo $0 > shell.txt; cat shell.txt", { language: "sh" });
	assert.equal(sh.stdout, "sh\n");
	const node = await sbx.runCode("console.log([1,2].map(x => x * 21).join())", { language: "node" });
	assert.ok(node.stdout === "21,42\n" || node.fault?.type === "exec_failed", JSON.stringify(node));
	// State is the workspace's, processes are not: each call is a new box.
	assert.equal((await sbx.runCode("x = 40")).success, true);
	const again = await sbx.runCode("print(x)");
	assert.equal(again.exitCode, 1);
	assert.equal(again.fault, null);
	assert.match(again.stderr, /NameError/);
});

test("code over 128 KiB runs from a file, and the file is gone after", async () => {
	const big = `x=0\n${"x=$((x+1))\n".repeat(13000)}echo $x`;
	const r = await sbx.runCode(big, { language: "sh" });
	assert.equal(r.stdout, "13000\n");
	assert.deepEqual((await sbx.listFiles()).filter((f) => f.path.startsWith(".cell-")), []);
	assert.equal((await sbx.run(["sh", "-c", "ls -A | grep -c '^\\.cell-' || true"])).stdout, "0\n");
});

test("stdout and stderr are real pipes: /dev/stdout and /dev/stderr open", async () => {
	const r = await sbx.run(["sh", "-c", "echo out > /dev/stdout; echo err > /dev/stderr; python3 -c \"import os,stat;print(stat.S_ISFIFO(os.fstat(1).st_mode))\""]);
	assert.equal(r.stdout, "out\nTrue\n");
	assert.equal(r.stderr, "err\n");
});

test("killed: a SIGKILL from outside the box", async () => {
	const p = sbx.run(["sh", "-c", "echo started; sleep 30"]);
	const name = await until(() => boxes().find((n) => n.startsWith("nodesbx-")), 10000);
	assert.ok(name, "the box never showed up in kern ps");
	await new Promise((r) => execFile(KERN, ["stop", "--stop-signal", "KILL", name], () => r()));
	const r = await p;
	assert.equal(r.fault?.type, "killed", JSON.stringify(r));
	assert.equal(r.exitCode, 137);
});

test("CL-7 (typo'd tag): startup_failed, exit 1, kern's error: registry: ... manifest unknown, as data", async (t) => {
	if (reg.skip) return t.skip(reg.skip);
	const s = new Sandbox({ image: reg.ref("no-such-tag"), timeoutS: 60 });
	try {
		const r = await s.run(["true"]);
		assert.equal(r.fault?.type, "startup_failed", JSON.stringify(r));
		assert.equal(r.exitCode, 1);
		assert.match(r.fault.message, /error: registry: .*manifest unknown/);
		assert.ok(r.fault.message.length <= 500);
	} finally {
		await s.close();
	}
});

test("exec_failed names the image: no python3 in busybox", async (t) => {
	if (reg.skip) return t.skip(reg.skip);
	const s = await Sandbox.create({ image: reg.ref(), timeoutS: 60 });
	try {
		const r = await s.runCode("print(1)");
		assert.equal(r.fault?.type, "exec_failed", JSON.stringify(r));
		assert.match(r.fault.message, new RegExp(`'python3' was not found in image '127\\.0\\.0\\.1:${reg.port}/busybox:1'`));
		assert.equal((await s.runCode("echo hi from busybox", { language: "sh" })).stdout, "hi from busybox\n");
	} finally {
		await s.close();
	}
});

test("CL-9 (alpine stand-in: the busybox image): bash is exec_failed 127, a non-executable script 126, a shell's command not found no fault", async (t) => {
	// alpine:3.19 is not reachable here (no Docker Hub); the busybox
	// fixture is what it stands for: a busybox userland with no bash.
	if (reg.skip) return t.skip(reg.skip);
	const s = await Sandbox.create({ image: reg.ref(), timeoutS: 60 });
	try {
		const bash = await s.runCode("echo hi", { language: "bash" });
		assert.equal(bash.fault?.type, "exec_failed", JSON.stringify(bash));
		assert.equal(bash.exitCode, 127);
		assert.match(bash.fault.message, new RegExp(`'bash' was not found in image '127\\.0\\.0\\.1:${reg.port}/busybox:1'`));
		await s.writeFile("script.sh", "#!/bin/sh\necho ran\n");
		const noexec = await s.run(["./script.sh"]);
		assert.equal(noexec.fault?.type, "exec_failed", JSON.stringify(noexec));
		assert.equal(noexec.exitCode, 126);
		// Positive control: the same script through sh runs.
		assert.equal((await s.run(["sh", "script.sh"])).stdout, "ran\n");
		const missing = await s.runCode("no-such-command-here", { language: "sh" });
		assert.deepEqual([missing.exitCode, missing.fault], [127, null], JSON.stringify(missing));
	} finally {
		await s.close();
	}
});

test("user: a non-root account is probed when the Sandbox opens, and the box runs as it", async (t) => {
	// An account the image lacks is a case of the shared table (it fails at open).
	let s;
	try {
		s = await Sandbox.create({ image: "host", user: "nobody" });
	} catch (e) {
		if (e instanceof SandboxError && /cannot be mapped/.test(e.message)) {
			t.skip(`no subordinate id range for this user: ${e.message}`);
			return;
		}
		throw e;
	}
	try {
		const r = await s.run(["id", "-u"]);
		assert.equal(r.stdout, "65534\n", JSON.stringify(r));
	} finally {
		await s.close();
	}
});

test("exit 125 (a box kern cannot set up) raises SandboxError", async () => {
	const s = await Sandbox.create({ image: "host", apparmor: "kern-no-such-profile" });
	try {
		await assert.rejects(s.run(["true"]), (e) => e instanceof SandboxError && /kern-no-such-profile/.test(e.message));
	} finally {
		await s.close();
	}
});

test("CL-7 (mount refused at run time): kern's exit 125 raises SandboxError, not MountRefused", async () => {
	const base = mkdtempSync(path.join(tmpdir(), "kern-node-mnt-"));
	const decoy = path.join(base, "decoy");
	const data = path.join(base, "data");
	const odd = path.join(base, "a,b");
	mkdirSync(decoy);
	writeFileSync(path.join(decoy, "secret"), "host secret\n");
	mkdirSync(data);
	mkdirSync(odd);
	const refused = (prefix) => (e) => e instanceof SandboxError && !(e instanceof MountRefused) && e.message.startsWith(prefix);
	try {
		const s = await Sandbox.create({ image: "host", mounts: { [data]: "/data" } });
		try {
			// Positive control: the mount the package accepted works.
			assert.equal((await s.run(["ls", "/data"])).success, true);
			// Swapped for a link to another directory after the package's
			// check: kern re-walks the source without following links.
			rmdirSync(data);
			symlinkSync(decoy, data);
			await assert.rejects(s.run(["cat", "/data/secret"]), refused(`kern: sandbox setup failed: bind source ${data}: `));
		} finally {
			await s.close();
		}
		// --mount (a path with a comma) refuses a source gone since the check.
		const o = await Sandbox.create({ image: "host", mounts: { [odd]: "/odd" } });
		try {
			assert.equal((await o.run(["ls", "/odd"])).success, true);
			rmdirSync(odd);
			await assert.rejects(o.run(["ls", "/odd"]), refused(`kern: sandbox setup failed: --mount source ${odd}: `));
		} finally {
			await o.close();
		}
		assert.equal(readFileSync(path.join(decoy, "secret"), "utf8"), "host secret\n");
	} finally {
		rmSync(base, { recursive: true, force: true });
	}
});

test("a slow or failing callback never stalls the box nor loses the result", async () => {
	let calls = 0;
	const r = await sbx.run(["sh", "-c", "seq 1 20000"], {
		onStdout: () => {
			calls++;
			return new Promise((res) => setTimeout(res, 200));
		},
		onStderr: () => {
			throw new Error("callback bug");
		},
	});
	assert.equal(r.stdout.split("\n").length, 20001);
	assert.ok(calls >= 1);
});

test("output over maxOutputBytes is read and discarded: truncated, host memory bounded", async () => {
	const s = new Sandbox({ image: "host", maxOutputBytes: 1 << 20 });
	try {
		const rss0 = process.memoryUsage().rss;
		const r = await s.run(["sh", "-c", "head -c 300000000 /dev/zero; echo done >&2"]);
		assert.equal(r.truncated, true);
		assert.equal(Buffer.byteLength(r.stdout, "utf8"), 1 << 20);
		assert.equal(r.stderr, "done\n");
		assert.equal(r.exitCode, 0);
		assert.ok(process.memoryUsage().rss - rss0 < 100 * (1 << 20), "host RSS grew by the flood");
	} finally {
		await s.close();
	}
});

test("the one-shot runCode() leaves no workspace and no box", async () => {
	const r = await runCode("echo one-shot", { image: "host", language: "sh" });
	assert.equal(r.stdout, "one-shot\n");
	await assertNothingLeft(assert);
});
