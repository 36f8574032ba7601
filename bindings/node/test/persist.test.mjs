// persist: true (python-binding.md §14): one resident box per workspace,
// reused through `kern exec`.
// (A resident box shared by calls: the shared table, cases.test.mjs.)
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { tmpdir } from "node:os";
import path from "node:path";
import { kern, KERN, boxes, until } from "./helpers.mjs";

const { Sandbox, SandboxError } = kern;
const residents = () => boxes().filter((n) => n.startsWith("kern-sbx-"));

test("a resident box stopped from outside is started again, with a warning", async () => {
	const sbx = await Sandbox.create({ image: "host", persist: true, timeoutS: 20 });
	const warnings = [];
	const onWarning = (w) => warnings.push(w);
	process.on("warning", onWarning);
	try {
		await sbx.run(["sh", "-c", "echo 1 > /tmp/gen"]);
		const [name] = residents();
		execFileSync(KERN, ["stop", name]);
		const r = await sbx.run(["sh", "-c", "cat /tmp/gen 2>/dev/null || echo fresh"]);
		assert.equal(r.stdout, "fresh\n");
		assert.deepEqual(residents(), [name]);
		await until(() => warnings.length > 0, 2000);
		assert.ok(warnings.some((w) => /was gone/.test(w.message)), warnings.map((w) => w.message).join());
	} finally {
		process.off("warning", onWarning);
		await sbx.close();
	}
});

test("a named workspace keeps its box for the next session with the same configuration; destroy() stops it", async () => {
	const dir = mkdtempSync(path.join(tmpdir(), "kern-node-persist-"));
	try {
		const a = await Sandbox.create({ image: "host", persist: true, workspace: dir });
		await a.run(["sh", "-c", "echo from-a > /tmp/mark"]);
		const [name] = residents();
		await a.close();
		assert.deepEqual(residents(), [name]);
		const b = await Sandbox.create({ image: "host", persist: true, workspace: dir });
		assert.equal((await b.run(["cat", "/tmp/mark"])).stdout, "from-a\n");
		await b.close();
		// Another configuration replaces it.
		const c = await Sandbox.create({ image: "host", persist: true, workspace: dir, memoryMb: 256 });
		assert.equal((await c.run(["sh", "-c", "cat /tmp/mark 2>/dev/null || echo new"])).stdout, "new\n");
		await c.destroy();
		assert.deepEqual(residents(), []);
		await c.close();
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
});

test("persist and prewarm exclude each other", () => {
	assert.throws(() => new Sandbox({ image: "host", persist: true, prewarm: 1 }), SandboxError);
});
