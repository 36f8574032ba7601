// kernel(): one warm python3 in one long-lived box (python-binding.md §12,
// §15.2), through the Python package's own driver.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { kern, boxes, until, assertNothingLeft } from "./helpers.mjs";

const { Sandbox, SandboxError, Kernel } = kern;
let sbx;
before(async () => {
	sbx = await Sandbox.create({ image: "host", memoryMb: 128, timeoutS: 20 });
});
after(async () => {
	await sbx.close();
	await assertNothingLeft(assert);
});

test("state persists across cells; rich results; all output of the cell captured", async () => {
	const k = await sbx.kernel();
	try {
		assert.ok(k instanceof Kernel);
		assert.ok(boxes().includes(k.name));
		assert.equal((await k.runCode("import os, subprocess\na = list(range(10))")).success, true);
		const r = await k.runCode("print(sum(a)); os.write(1, b'raw\\n'); subprocess.run(['echo', 'child']); sum(a) * 2");
		assert.equal(r.stdout, "45\nraw\nchild\n");
		assert.equal(r.results[0].text, "90");
		const err = await k.runCode("a.missing");
		assert.equal(err.exitCode, 1);
		assert.equal(err.fault, null);
		assert.match(err.codeStderr, /AttributeError/);
		// An exception does not end the kernel.
		assert.equal((await k.runCode("len(a)")).results[0].text, "10");
	} finally {
		await k.close();
	}
});

test("/tmp and workspace files persist across cells; files are tracked per cell", async () => {
	const k = await sbx.kernel();
	try {
		await k.runCode("open('/tmp/t', 'w').write('tmp')");
		const r = await k.runCode("open('w.txt', 'w').write(open('/tmp/t').read())");
		assert.deepEqual(r.files.map((f) => [f.path, f.change]), [["w.txt", "created"]]);
		assert.equal((await sbx.readFile("w.txt")).toString(), "tmp");
	} finally {
		await k.close();
	}
});

test("streaming in a kernel: Buffer chunks as the cell prints", async () => {
	const k = await sbx.kernel();
	try {
		const chunks = [];
		const r = await k.runCode("import sys, time\nfor i in range(3):\n    print(i, flush=True); time.sleep(0.05)\nprint('e', file=sys.stderr)", {
			onStdout: (c) => chunks.push(["o", c]),
			onStderr: (c) => chunks.push(["e", c]),
		});
		assert.ok(chunks.every(([, c]) => Buffer.isBuffer(c)));
		assert.equal(Buffer.concat(chunks.filter(([w]) => w === "o").map(([, c]) => c)).toString(), "0\n1\n2\n");
		assert.equal(r.stderr, "e\n");
	} finally {
		await k.close();
	}
});

test("a timeout tears the kernel down; the next call raises 'kernel is dead'", async () => {
	const k = await sbx.kernel();
	await k.runCode("x = 1");
	const r = await k.runCode("while True: pass", { timeoutS: 1 });
	assert.equal(r.fault?.type, "timeout");
	assert.equal(r.exitCode, 137);
	assert.equal(k.alive, false);
	await assert.rejects(k.runCode("x"), (e) => e instanceof SandboxError && /kernel is dead/.test(e.message));
	await k.close();
	await assertNothingLeft(assert);
});

test("an OOM and a blocked system call are faults of the cell that caused them", async () => {
	const k = await sbx.kernel();
	const oom = await k.runCode("b = bytearray(512 * 1024 * 1024)");
	assert.equal(oom.fault?.type, "oom", JSON.stringify(oom));
	await assert.rejects(k.runCode("1"), /kernel is dead/);
	await k.close();
	const k2 = await sbx.kernel();
	const sys = await k2.runCode("import ctypes; ctypes.CDLL(None).syscall(165, b'none', b'/mnt', b'tmpfs', 0, None)");
	assert.equal(sys.fault?.type, "escape_blocked", JSON.stringify(sys));
	assert.equal(sys.exitCode, 159);
	await k2.close();
});

test("python3 crashing is no fault: a note on stderr, exit 128+signal", async () => {
	const k = await sbx.kernel();
	const r = await k.runCode("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)");
	assert.equal(r.fault, null);
	assert.equal(r.exitCode, 139);
	assert.match(r.stderr, /crashed with SIGSEGV/);
	await assert.rejects(k.runCode("1"), /kernel is dead/);
	await k.close();
});

test("a cell that writes to the control channel itself gets the kernel killed, not the host confused", async () => {
	const k = await sbx.kernel();
	// The driver's reply channel is a private descriptor, but a cell can
	// find it: a frame header declaring far more than the reply cap.
	const r = await k.runCode(
		"import os, stat\nfor fd in range(3, 64):\n    try:\n        if stat.S_ISFIFO(os.fstat(fd).st_mode): os.write(fd, b'99999999999999\\n')\n    except OSError: pass",
	);
	assert.equal(r.fault?.type, "killed", JSON.stringify(r));
	assert.match(r.fault.message, /refuses .*over the \d+-byte cap/);
	await assert.rejects(k.runCode("1"), /kernel is dead/);
	await k.close();
	const k2 = await sbx.kernel();
	const bad = await k2.runCode("import os, stat\nfor fd in range(3, 64):\n    try:\n        if stat.S_ISFIFO(os.fstat(fd).st_mode): os.write(fd, b'5\\nnope!')\n    except OSError: pass");
	assert.equal(bad.fault?.type, "killed", JSON.stringify(bad));
	assert.match(bad.fault.message, /not JSON/);
	await k2.close();
});

test("an AbortSignal kills the kernel: the call rejects with its reason, the next call says it is dead", async () => {
	const k = await sbx.kernel();
	await k.runCode("x = 1");
	const ctl = new AbortController();
	const p = k.runCode("import time\nprint('go', flush=True)\ntime.sleep(60)", { signal: ctl.signal, onStdout: () => ctl.abort(new Error("stop it")) });
	await assert.rejects(p, { message: "stop it" });
	assert.equal(k.alive, false);
	await assert.rejects(k.runCode("x"), /kernel is dead/);
	assert.ok(!boxes().includes(k.name));
	await k.close();
});

test("cells queue: concurrent calls on one kernel run one after another", async () => {
	const k = await sbx.kernel();
	try {
		await k.runCode("n = 0");
		const rs = await Promise.all(Array.from({ length: 20 }, () => k.runCode("n += 1\nn")));
		assert.deepEqual(rs.map((r) => Number(r.results[0].text)).sort((a, b) => a - b), Array.from({ length: 20 }, (_, i) => i + 1));
	} finally {
		await k.close();
	}
});

test("close() during a running cell stops it: the cell returns killed, close does not wait for its deadline", async () => {
	const k = await sbx.kernel();
	const started = [];
	const p = k.runCode("import time\nprint('go', flush=True)\ntime.sleep(60)", { timeoutS: 60, onStdout: (c) => started.push(c) });
	await until(() => started.length > 0, 10000);
	const t0 = Date.now();
	await k.close();
	const r = await p;
	assert.equal(r.fault?.type, "killed", JSON.stringify(r));
	assert.ok(Date.now() - t0 < 15000);
	assert.ok(!boxes().includes(k.name));
});

test("a kernel that cannot start raises SandboxError", async () => {
	const s = new Sandbox({ image: "host", user: "no-such-user" });
	try {
		await assert.rejects(s.kernel(), (e) => e instanceof SandboxError && /no-such-user/.test(e.message));
	} finally {
		await s.close();
	}
});

test("close() ends the box and is idempotent; Symbol.asyncDispose (await using) closes too", async () => {
	const d = await sbx.kernel();
	assert.ok(boxes().includes(d.name));
	await d[Symbol.asyncDispose]();
	assert.ok(!boxes().includes(d.name));
	const k = await sbx.kernel();
	await k.close();
	await k.close();
	await assert.rejects(k.runCode("1"), /kernel is closed/);
});
