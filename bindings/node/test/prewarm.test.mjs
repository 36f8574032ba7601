// prewarm=N (python-binding.md §13): boxes started before the calls that
// use them, each serving exactly one call.
// (Faults through a pooled box and calls that go cold: the shared table,
// cases.test.mjs, which the Python package runs too.)
import { test } from "node:test";
import assert from "node:assert/strict";
import { kern, boxes, until, assertNothingLeft, require } from "./helpers.mjs";

const { Sandbox } = kern;
const { poolOf } = require("../lib/sandbox.cjs");
const ours = () => new Set(boxes().filter((n) => n.startsWith("nodesbx-")));

test("a call takes a ready box, which serves it once and is destroyed; the pool refills", async () => {
	const sbx = await Sandbox.create({ image: "host", prewarm: 2, timeoutS: 20 });
	try {
		assert.ok(await until(() => sbx.prewarmed === 2, 60000), "the pool never filled");
		const pooled = ours();
		assert.equal(pooled.size, 2);
		const r = await sbx.runCode("import os\nprint(os.getcwd())\n6 * 7");
		assert.equal(poolOf(sbx).served, 1);
		assert.equal(r.stdout, "/workspace\n");
		assert.equal(r.results[0].text, "42");
		assert.equal(r.success, true);
		// One of the two served it and is gone; the other is still waiting.
		await until(() => [...pooled].filter((n) => ours().has(n)).length === 1, 10000);
		assert.equal([...pooled].filter((n) => ours().has(n)).length, 1);
		assert.ok(await until(() => sbx.prewarmed === 2, 60000), "the pool did not refill");
		// Each call gets a fresh interpreter: nothing of the last call is left.
		const again = await sbx.runCode("print('x' in dir())\nx = 1");
		assert.equal(again.stdout, "False\n");
		assert.equal((await sbx.runCode("print('x' in dir())")).stdout, "False\n");
	} finally {
		await sbx.close();
	}
	await assertNothingLeft(assert);
});

test("a box built for another configuration is never served (the key)", async () => {
	const saved = process.env.KERN_QUIET;
	const sbx = await Sandbox.create({ image: "host", prewarm: 1, timeoutS: 10 });
	try {
		assert.ok(await until(() => sbx.prewarmed === 1, 60000));
		const pooled = ours();
		// A KERN_* variable is part of the key: the pooled box no longer fits.
		process.env.KERN_QUIET = "1";
		assert.equal((await sbx.runCode("print(1)")).stdout, "1\n");
		assert.equal(poolOf(sbx).served, 0);
		await until(() => [...pooled].every((n) => !ours().has(n)), 10000);
		assert.deepEqual([...pooled].filter((n) => ours().has(n)), [], "the mismatched box was not discarded");
	} finally {
		if (saved === undefined) delete process.env.KERN_QUIET;
		else process.env.KERN_QUIET = saved;
		await sbx.close();
	}
	await assertNothingLeft(assert);
});

test("with a profile, kern's own view of it is part of the key: a changed kern.toml sends the call to a cold box", async () => {
	const { mkdtempSync, writeFileSync, rmSync } = await import("node:fs");
	const { tmpdir } = await import("node:os");
	const dir = mkdtempSync(`${tmpdir()}/kern-node-toml-`);
	const toml = `${dir}/kern.toml`;
	writeFileSync(toml, '[[vcpu]]\nname = "small"\nmemory = "256m"\n');
	const saved = process.env.KERN_CONFIG;
	process.env.KERN_CONFIG = toml;
	const sbx = await Sandbox.create({ image: "host", prewarm: 1, profiles: ["vcpu:small"], memoryMb: null, timeoutS: 10 });
	try {
		assert.ok(await until(() => sbx.prewarmed === 1, 60000));
		const limit = "print(open('/sys/fs/cgroup/memory.max').read().strip() if __import__('os').path.exists('/sys/fs/cgroup/memory.max') else 'v1')";
		assert.equal((await sbx.runCode(limit)).exitCode, 0);
		assert.equal(poolOf(sbx).served, 1);
		assert.ok(await until(() => sbx.prewarmed === 1, 60000));
		const pooled = ours();
		writeFileSync(toml, '[[vcpu]]\nname = "small"\nmemory = "300m"\n');
		const r = await sbx.runCode("print('cold')");
		assert.equal(r.stdout, "cold\n");
		assert.equal(poolOf(sbx).served, 1, "the box built under the old kern.toml served the call");
		// The box started under the old kern.toml was discarded, not served:
		// the pool refills with one built under the new one.
		assert.ok(await until(() => sbx.prewarmed === 1 && ![...pooled].some((n) => ours().has(n)), 60000));
	} finally {
		if (saved === undefined) delete process.env.KERN_CONFIG;
		else process.env.KERN_CONFIG = saved;
		await sbx.close();
		rmSync(dir, { recursive: true, force: true });
	}
	await assertNothingLeft(assert);
});

test("CL-11: pool boxes killed by killpg are gone from kern ps -q within 10 s and never serve a call", async () => {
	const sbx = await Sandbox.create({ image: "host", prewarm: 2, timeoutS: 20 });
	try {
		assert.ok(await until(() => sbx.prewarmed === 2, 60000), "the pool never filled");
		const pooled = ours();
		assert.equal(pooled.size, 2);
		// Each pooled box's kern leads a process group of its own: kill the
		// groups from outside, as a supervisor cleaning up would.
		for (const b of poolOf(sbx).ready) process.kill(-b.box.box.child.pid, "SIGKILL");
		assert.ok(await until(() => [...pooled].every((n) => !ours().has(n)), 10000), "killed pool boxes still listed after 10 s");
		// The dead boxes are dropped: the call runs in a cold box (its code
		// ran, no fault), not in a dead one.
		const r = await sbx.runCode("print(6 * 7)");
		assert.deepEqual([r.stdout, r.fault, poolOf(sbx).served], ["42\n", null, 0], JSON.stringify(r));
		assert.ok(await until(() => sbx.prewarmed === 2, 60000), "the pool did not refill");
		assert.ok([...pooled].every((n) => !ours().has(n)));
		const again = await sbx.runCode("print(7)");
		assert.deepEqual([again.stdout, poolOf(sbx).served], ["7\n", 1]);
	} finally {
		await sbx.close();
	}
	await assertNothingLeft(assert);
});
