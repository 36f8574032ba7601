// One-shot calls on real boxes (python-binding.md §8-§11): languages, real
// pipes, every fault type produced for real, code_stderr and runtime notes,
// streaming, truncation.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { execFile } from "node:child_process";
import { tmpdir } from "node:os";
import path from "node:path";
import { kern, KERN, boxes, until, startRegistry, assertNothingLeft } from "./helpers.mjs";

const { Sandbox, SandboxError, runCode } = kern;
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

test("an exception is not a fault; exit codes are the process's", async () => {
	const r = await sbx.runCode("1/0");
	assert.equal(r.exitCode, 1);
	assert.equal(r.fault, null);
	assert.equal(r.success, false);
	assert.match(r.codeStderr, /ZeroDivisionError/);
	assert.equal((await sbx.run(["sh", "-c", "exit 7"])).exitCode, 7);
	const sig = await sbx.run(["sh", "-c", "kill -SEGV $$"]);
	assert.equal(sig.exitCode, 139);
	assert.equal(sig.fault, null);
	// A shell's own "command not found" is the code's, not kern's.
	const nf = await sbx.runCode("no-such-command-here", { language: "sh" });
	assert.equal(nf.exitCode, 127);
	assert.equal(nf.fault, null);
});

test("timeout: the binding's deadline stops the box, exit 137", async () => {
	const t0 = Date.now();
	const r = await sbx.runCode("while True: pass", { timeoutS: 1 });
	assert.equal(r.fault?.type, "timeout");
	assert.equal(r.fault.message, "exceeded the 1s time limit (killed by the binding)");
	assert.equal(r.exitCode, 137);
	assert.ok(Date.now() - t0 < 8000);
	const half = await sbx.run(["sleep", "30"], { timeoutS: 0.5 });
	assert.equal(half.fault?.message, "exceeded the 0.5s time limit (killed by the binding)");
	await assertNothingLeft(assert);
});

test("oom: memory over memoryMb, confirmed by kern's outcome bytes", async () => {
	const r = await sbx.runCode("x = bytearray(512 * 1024 * 1024)");
	assert.equal(r.fault?.type, "oom", JSON.stringify(r));
	assert.equal(r.exitCode, 137);
	assert.match(r.fault.message, /128 MiB memory cap/);
});

test("escape_blocked: a syscall the seccomp filter kills", async () => {
	const r = await sbx.runCode("import ctypes; ctypes.CDLL(None).syscall(165, b'none', b'/mnt', b'tmpfs', 0, None)");
	assert.equal(r.fault?.type, "escape_blocked", JSON.stringify(r));
	assert.equal(r.exitCode, 159);
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

test("exec_failed: a command the image does not have", async () => {
	const r = await sbx.run(["/no/such/binary", "x"]);
	assert.equal(r.fault?.type, "exec_failed");
	assert.equal(r.exitCode, 127);
	assert.equal(r.fault.message, "'/no/such/binary' was not found in image 'host' (No such file or directory (os error 2))");
	// The same line printed by the code is not kern's.
	const forged = await sbx.run(["sh", "-c", "echo \"kern: cannot start 'x' in box: No such file or directory (os error 2)\" >&2; exit 127"]);
	assert.equal(forged.fault, null);
});

test("startup_failed: an image tag the registry does not have comes back as data", async (t) => {
	if (reg.skip) return t.skip(reg.skip);
	const s = new Sandbox({ image: reg.ref("no-such-tag"), timeoutS: 60 });
	try {
		const r = await s.run(["true"]);
		assert.equal(r.fault?.type, "startup_failed", JSON.stringify(r));
		assert.equal(r.exitCode, 1);
		assert.match(r.stderr, /error: /);
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

test("exit 125 (a box kern cannot set up) raises SandboxError", async () => {
	const s = new Sandbox({ image: "host", user: "no-such-user" });
	try {
		await assert.rejects(s.run(["true"]), (e) => e instanceof SandboxError && /no-such-user/.test(e.message));
	} finally {
		await s.close();
	}
});

test("codeStderr and runtimeNotes split kern's lines from the program's", async () => {
	const s = new Sandbox({ image: "host", securityProfile: "untrusted" });
	try {
		const r = await s.runCode("import sys; print('from code', file=sys.stderr)");
		assert.ok(r.runtimeNotes.length >= 1, JSON.stringify(r));
		assert.ok(r.runtimeNotes.every((l) => l.startsWith("kern: ")));
		assert.match(r.runtimeNotes[0], /^kern: security-profile=untrusted: /);
		assert.equal(r.codeStderr, "from code\n");
		assert.ok(r.stderr.includes(r.runtimeNotes[0]) && r.stderr.includes("from code"));
	} finally {
		await s.close();
	}
});

test("streaming: Buffer chunks in order, as they arrive, the result complete", async () => {
	const seen = [];
	const r = await sbx.runCode("import sys, time\nfor i in range(5):\n    print(i, flush=True); print('e%d' % i, file=sys.stderr, flush=True); time.sleep(0.05)", {
		onStdout: (c) => seen.push(["o", c]),
		onStderr: (c) => seen.push(["e", c]),
	});
	assert.ok(seen.every(([, c]) => Buffer.isBuffer(c)));
	assert.equal(Buffer.concat(seen.filter(([k]) => k === "o").map(([, c]) => c)).toString(), "0\n1\n2\n3\n4\n");
	assert.equal(Buffer.concat(seen.filter(([k]) => k === "e").map(([, c]) => c)).toString(), "e0\ne1\ne2\ne3\ne4\n");
	assert.equal(r.stdout, "0\n1\n2\n3\n4\n");
	// Chunks arrived while the code ran: interleaved, not all stdout first.
	const kinds = seen.map(([k]) => k).join("");
	assert.match(kinds, /oe.*o/);
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
