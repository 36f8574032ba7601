// AbortSignal (python-binding.md has no counterpart: Node's idiom for
// cancelling): an aborted call stops its box and rejects with the
// signal's reason once nothing of the box is left.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { kern, boxes, boxesStartedSince, until, leftovers, assertNothingLeft } from "./helpers.mjs";

const { Sandbox } = kern;
let sbx;
before(async () => {
	sbx = await Sandbox.create({ image: "host", timeoutS: 60 });
});
after(async () => {
	await sbx.close();
});

test("abort during a run: rejects with the reason, the box and its files are gone", async () => {
	const ctl = new AbortController();
	const t0 = Date.now();
	const p = sbx.run(["sh", "-c", "echo started; sleep 50"], { signal: ctl.signal, onStdout: () => ctl.abort(new Error("user cancelled")) });
	await assert.rejects(p, { message: "user cancelled" });
	assert.ok(Date.now() - t0 < 15000);
	// Settled only after the box was torn down: nothing to wait for.
	assert.deepEqual(leftovers(), []);
	assert.deepEqual((await sbx.listFiles()).filter((f) => f.path.startsWith(".")), []);
});

test("abort of a Python cell: the default reason is an AbortError; scratch files removed", async () => {
	const ctl = new AbortController();
	const p = sbx.runCode("import time\nprint('go', flush=True)\ntime.sleep(50)", { signal: ctl.signal, onStdout: () => ctl.abort() });
	await assert.rejects(p, { name: "AbortError" });
	assert.deepEqual(leftovers(), []);
	const out = await sbx.run(["sh", "-c", "ls -A"]);
	assert.doesNotMatch(out.stdout, /\.(cell|run|res)-/);
});

test("AbortSignal.timeout() works as a deadline of the caller's own", async () => {
	const p = sbx.run(["sleep", "50"], { signal: AbortSignal.timeout(300) });
	await assert.rejects(p, { name: "TimeoutError" });
	await assertNothingLeft(assert);
});

test("an already aborted signal starts no box", async () => {
	const before = boxes();
	const ctl = new AbortController();
	ctl.abort();
	await assert.rejects(sbx.runCode("print(1)", { signal: ctl.signal }), { name: "AbortError" });
	await assert.rejects(sbx.run(["true"], { signal: ctl.signal }), { name: "AbortError" });
	assert.deepEqual(boxesStartedSince(before), []);
});

test("an abort after the call finished changes nothing", async () => {
	const ctl = new AbortController();
	const r = await sbx.run(["echo", "done"], { signal: ctl.signal });
	ctl.abort();
	assert.equal(r.stdout, "done\n");
	assert.equal((await sbx.run(["true"])).success, true);
});

test("abort while the box is still starting (an image pull would be here)", async () => {
	const ctl = new AbortController();
	const p = sbx.run(["true"], { signal: ctl.signal });
	ctl.abort();
	await assert.rejects(p, { name: "AbortError" });
	await until(() => leftovers().length === 0, 10000);
	assert.deepEqual(leftovers(), []);
});
