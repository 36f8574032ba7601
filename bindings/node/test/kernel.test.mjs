// kernel(): one warm python3 in one long-lived box (python-binding.md §12,
// §15.2), through the Python package's own driver.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { kern, boxes, until, assertNothingLeft, require, PKG } from "./helpers.mjs";

const { Sandbox, SandboxError, Kernel } = kern;
let sbx;
before(async () => {
	sbx = await Sandbox.create({ image: "host", memoryMb: 128, timeoutS: 20 });
});
after(async () => {
	await sbx.close();
	await assertNothingLeft(assert);
});

// State across cells, files, rich results, streaming, the output cap and
// the faults that end a kernel are cases of the shared table
// (cases.test.mjs), which the Python package runs too.
test("kernel() gives a Kernel whose box kern lists", async () => {
	const k = await sbx.kernel();
	try {
		assert.ok(k instanceof Kernel);
		assert.ok(boxes().includes(k.name));
		assert.equal((await k.runCode("a = 1\na + 1")).results[0].text, "2");
	} finally {
		await k.close();
	}
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
	const s = await Sandbox.create({ image: "host", apparmor: "kern-no-such-profile" });
	try {
		await assert.rejects(s.kernel(), (e) => e instanceof SandboxError && /could not start/.test(e.message));
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

test("IO-4: raw os.write(1) and subprocess output in a cell are captured in the reply frame, no stray bytes on stdout", async () => {
	// Every byte the host reads from the kernel box's stdout: the reader
	// the driver box builds is this package's FrameReader, looked up when
	// the box starts.
	const frames = require("../lib/frames.cjs");
	const Real = frames.FrameReader;
	/** @type {Buffer[]} */
	const wire = [];
	frames.FrameReader = class extends Real {
		constructor(stream, cap) {
			super(stream, cap);
			stream.on("data", (d) => wire.push(d));
		}
	};
	let k;
	try {
		k = await sbx.kernel();
	} finally {
		frames.FrameReader = Real;
	}
	try {
		const r = await k.runCode(
			"import os, subprocess, sys\nprint('p1')\nos.write(1, b'raw\\n')\nsubprocess.run(['echo', 'child'])\n" +
				"os.system('echo system')\nopen('/dev/stdout', 'w').write('devout\\n')\nsys.__stdout__.write('dunder\\n')\n" +
				"os.write(2, b'rawerr\\n')\nsubprocess.Popen(['sh', '-c', 'sleep 0.3; echo late; : > late-done'])\n",
		);
		assert.equal(r.success, true, JSON.stringify(r));
		assert.equal(r.stdout, "p1\nraw\nchild\nsystem\ndevout\ndunder\n");
		assert.equal(r.stderr, "rawerr\n");
		// A process the cell left behind writes between cells.
		assert.ok(await until(() => existsSync(path.join(sbx.workspace, "late-done")), 10000), "the background writer never ran");
		const r2 = await k.runCode("print('next')");
		assert.ok(r2.success && r2.stdout.endsWith("next\n"), JSON.stringify(r2));
		// The wire is frames end to end: length, newline, a JSON body.
		let rest = Buffer.concat(wire);
		const got = [];
		while (rest.length) {
			const nl = rest.indexOf(10);
			const head = nl < 0 ? "" : rest.subarray(0, nl).toString("latin1");
			assert.match(head, /^[0-9]+$/, `stray bytes on the box's stdout: ${JSON.stringify(rest.subarray(0, 200).toString("latin1"))}`);
			got.push(JSON.parse(rest.subarray(nl + 1, nl + 1 + Number(head)).toString("utf8")));
			rest = rest.subarray(nl + 1 + Number(head));
		}
		const replies = got.filter((f) => "rc" in f);
		assert.equal(replies.length, 2);
		assert.equal(replies[0].stdout, r.stdout);
		// The late output is in a frame too (the next cell's), not loose.
		assert.ok(got.some((f) => `${f.o ?? ""}${f.stdout ?? ""}`.includes("late")));
	} finally {
		await k.close();
	}
});

// The rest run a script of their own: what is tested is when its event
// loop ends, which a test inside this process's runner cannot see.
const scratch = mkdtempSync(path.join(os.tmpdir(), "nodesbx-kernel-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * Run `body` (an async function body, the package as `k`) in a new node
 * process; its stdout, and whether it ended by itself within 60 s.
 * @param {string} body @param {Record<string, string>} env
 * @returns {Promise<{stdout: string, stderr: string, code: number | null, hung: boolean}>}
 */
function script(body, env) {
	const source = `const k = require(${JSON.stringify(PKG)});\n(async () => {\n${body}\n})();`;
	return new Promise((resolve) => {
		execFile(process.execPath, ["-e", source], { env: { ...process.env, ...env }, encoding: "utf8", timeout: 60000, killSignal: "SIGKILL" }, (err, stdout, stderr) => {
			const e = /** @type {any} */ (err);
			resolve({ stdout, stderr, code: e ? (e.code ?? null) : 0, hung: Boolean(e && e.killed) });
		});
	});
}

// A kernel's deadline tears its box down while the kernel is idle as far as
// the event loop goes (idle kernels must not keep the process alive), and
// the cell's caller waits for kern's end. That end arrives through kern
// spawner's stdout (or the child's handle, without the spawner): both must
// keep the loop alive while someone waits. The race was lost in make
// check's unprivileged pass (kernel/timeout-tears-the-kernel-down and the
// cases after it: "Promise resolution is still pending but the event loop
// has already resolved"). Here it is lost every time: this kern's `kern
// stop` returns at once and stops the box a moment later.
for (const [how, env] of /** @type {[string, Record<string, string>][]} */ ([
	["through kern spawner", {}],
	["through child_process.spawn", { KERN_SANDBOX_SPAWNER: "0" }],
])) {
	test(`a kernel's deadline teardown is waited for to kern's end when \`kern stop\` returns first, ${how}: the script goes on`, async () => {
		const { locateKern } = require("../lib/locate.cjs");
		const real = path.resolve(locateKern().path);
		const slowStop = path.join(scratch, `kern-slow-stop-${env.KERN_SANDBOX_SPAWNER ?? "1"}`);
		writeFileSync(slowStop, `#!/bin/sh\nif [ "$1" = stop ]; then '${real}' "$@" >/dev/null 2>&1 & exit 0; fi\nexec '${real}' "$@"\n`, { mode: 0o755 });
		const r = await script(`
	const s = await k.Sandbox.create({ image: "host", memoryMb: 128, timeoutS: 20 });
	const kn = await s.kernel();
	const a = await kn.runCode("x = 1");
	const t = await kn.runCode("print('before', flush=True)\\nwhile True: pass", { timeoutS: 1 });
	let dead = "";
	try { await kn.runCode("1"); } catch (e) { dead = e.message; }
	const then = await s.runCode("print(6 * 7)");
	await kn.close();
	await s.close();
	console.log(JSON.stringify({ a: a.success, fault: t.fault && t.fault.type, stdout: t.stdout, dead: /kernel is dead/.test(dead), then: then.stdout }));`, { ...env, KERN_BIN: slowStop });
		assert.equal(r.hung, false, `the script did not end: ${r.stderr}`);
		assert.notEqual(r.stdout, "", `the script ended (exit ${r.code}) before its awaited calls settled: the event loop ran out under them. stderr: ${r.stderr}`);
		assert.deepEqual(JSON.parse(r.stdout), { a: true, fault: "timeout", stdout: "before\n", dead: true, then: "42\n" });
		await assertNothingLeft(assert);
	});
}

test("an idle kernel does not keep the process alive: a script that ends without close() exits, and its box goes with it", async () => {
	const r = await script(`
	const s = await k.Sandbox.create({ image: "host", memoryMb: 128, timeoutS: 20 });
	const kn = await s.kernel();
	console.log((await kn.runCode("x = 6 * 7\\nprint(x)")).stdout.trim(), kn.name);`, {});
	assert.equal(r.hung, false, `an idle kernel kept the script alive: ${r.stderr}`);
	const [out, name] = r.stdout.trim().split(" ");
	assert.equal(out, "42", r.stderr);
	assert.ok(await until(() => !boxes().includes(name), 10000), `${name} still runs`);
	await assertNothingLeft(assert);
});
