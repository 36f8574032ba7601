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
