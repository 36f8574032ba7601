// examples/node-*.mjs run as an application runs them: from a directory
// whose node_modules holds kern-sandbox (a link to this package, as
// `npm install /path/to/bindings/node` makes it).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, mkdirSync, symlinkSync, copyFileSync, rmSync, readFileSync, existsSync, lstatSync } from "node:fs";
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

// The README's first Node example, verbatim: its `npm install` of the
// checkout (a link, offline) into a new project, then its `node -e`.
const README = path.join(TOP, "README.md");
test("the README's Node example runs as written: npm install of the checkout, then node -e prints 42", { skip: existsSync(README) ? false : "README.md is not in this tree" }, () => {
	const section = readFileSync(README, "utf8").split(/^## /m).find((s) => s.startsWith("Node and TypeScript"));
	assert.ok(section, "README has no 'Node and TypeScript' section");
	const block = /```sh\n([\s\S]*?)```/.exec(section);
	assert.ok(block, "the Node section has no sh block");
	const lines = block[1].split("\n").map((l) => l.replace(/\s+#.*$/, "")).filter(Boolean);
	assert.equal(lines.length, 2, block[1]);
	assert.match(lines[0], /^npm install \/path\/to\/kern\/bindings\/node$/);
	const project = mkdtempSync(path.join(tmpdir(), "kern-node-readme-"));
	try {
		const env = { ...process.env, NODE_PATH: "", npm_config_cache: path.join(project, ".npm"), npm_config_offline: "true", npm_config_update_notifier: "false" };
		const sh = (line) => spawnSync("sh", ["-c", line.replace("/path/to/kern", TOP)], { cwd: project, encoding: "utf8", env });
		const inst = sh(lines[0]);
		assert.equal(inst.status, 0, inst.stderr);
		assert.ok(lstatSync(path.join(project, "node_modules", "kern-sandbox")).isSymbolicLink());
		const r = sh(lines[1]);
		assert.equal(r.status, 0, r.stderr);
		assert.equal(r.stdout, "42\n");
	} finally {
		rmSync(project, { recursive: true, force: true });
	}
});
