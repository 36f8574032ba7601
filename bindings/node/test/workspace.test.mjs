// The workspace's lifetime (python-binding.md §4). Workspace I/O against
// what a box leaves behind (symlinks out of the workspace, FIFOs,
// directories, `..`, a file swapped for a symlink between two calls),
// listFiles and file tracking are cases of the shared table
// (cases.test.mjs), which the Python package runs too.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, existsSync, rmSync } from "node:fs";
import path from "node:path";
import { kern } from "./helpers.mjs";

const { Sandbox } = kern;

test("a workspace path persists; a temporary one is removed by close()", async () => {
	const tmp = await Sandbox.create({ image: "host" });
	await tmp.run(["sh", "-c", "mkdir -p ro && echo x > ro/f && chmod 000 ro"]);
	const dir = tmp.workspace;
	assert.ok(existsSync(dir));
	await tmp.close();
	assert.equal(existsSync(dir), false);
	const kept = path.join(path.dirname(dir), `kern-node-kept-${process.pid}`);
	const a = await Sandbox.create({ image: "host", workspace: kept });
	await a.runCode("echo persisted > p.txt", { language: "sh" });
	await a.close();
	const b = await Sandbox.create({ image: "host", workspace: kept });
	assert.equal((await b.readFile("p.txt")).toString(), "persisted\n");
	await b.close();
	assert.equal(readFileSync(path.join(kept, "p.txt"), "utf8"), "persisted\n");
	rmSync(kept, { recursive: true }); // the caller's to remove
});
