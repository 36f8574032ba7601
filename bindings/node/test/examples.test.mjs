// examples/node-*.mjs run as an application runs them: from a directory
// whose node_modules holds kern-sandbox (a link to this package, as
// `npm install /path/to/bindings/node` makes it).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, mkdirSync, symlinkSync, copyFileSync, rmSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import path from "node:path";
import { PKG, TOP, assertNothingLeft } from "./helpers.mjs";

let app;
before(() => {
	app = mkdtempSync(path.join(tmpdir(), "kern-node-app-"));
	mkdirSync(path.join(app, "node_modules"));
	symlinkSync(PKG, path.join(app, "node_modules", "kern-sandbox"));
});
after(() => rmSync(app, { recursive: true, force: true }));

/** @param {string} name */
function run(name) {
	copyFileSync(path.join(TOP, "examples", name), path.join(app, name));
	return spawnSync(process.execPath, [path.join(app, name)], { cwd: app, encoding: "utf8", env: { ...process.env, NODE_PATH: "" } });
}

test("examples/node-hello.mjs prints 42", () => {
	const r = run("node-hello.mjs");
	assert.equal(r.status, 0, r.stderr);
	assert.equal(r.stdout, "42\n");
});

test("examples/node-session.mjs: files, a fault, a kernel", async () => {
	const r = run("node-session.mjs");
	assert.equal(r.status, 0, r.stderr);
	assert.equal(r.stdout, "rows: 2\ncreated: out.csv\nread back: sum,10\nfault: timeout\nkernel total: 6\n");
	await assertNothingLeft(assert);
});
