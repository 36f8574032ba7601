// The package as shipped: its version is kern's, both entries export the
// same objects, the .d.ts files pass tsc --strict, and `npm pack` carries
// the Python package's in-box sources byte for byte.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, mkdtempSync, rmSync, readdirSync, accessSync, constants } from "node:fs";
import { execFileSync, spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import path from "node:path";
import { PKG, TOP, DEPS, require, kern } from "./helpers.mjs";
import * as esm from "../index.mjs";

const NAMES = ["ExecutionResult", "FileInfo", "Kernel", "MountRefused", "Result", "Sandbox", "SandboxError", "SandboxFault", "runCode", "version", "withSandbox"];

test("version is kern's (lib/base/version.h)", () => {
	const h = readFileSync(path.join(TOP, "lib", "base", "version.h"), "utf8");
	const v = /KERN_VERSION "([^"]+)"/.exec(h)[1];
	assert.equal(kern.version, v);
	assert.equal(JSON.parse(readFileSync(path.join(PKG, "package.json"), "utf8")).version, v);
});

test("require() and import give the same objects, and only the documented names", () => {
	assert.deepEqual(Object.keys(kern).sort(), NAMES);
	assert.deepEqual(Object.keys(esm).filter((k) => k !== "default").sort(), NAMES);
	for (const n of NAMES) assert.equal(esm[n], kern[n], n);
	assert.ok(new kern.MountRefused("x") instanceof esm.SandboxError);
});

test("the shipped types pass tsc --strict (ESM and CommonJS consumers, the agent subpaths)", (t) => {
	const tsc = path.join(DEPS, "typescript", "bin", "tsc");
	try {
		readFileSync(tsc);
	} catch {
		t.skip("typescript is not installed in test/deps (npm unreachable? see test/run)");
		return;
	}
	// tsconfig.json: the shipped declarations with their libraries checked;
	// tsconfig.tools.json: the agent subpaths and the implementation's own
	// JSDoc types, in one program (a tsc run is mostly start-up).
	for (const config of ["tsconfig.json", "tsconfig.tools.json"]) {
		const r = spawnSync(process.execPath, [tsc, "-p", path.join(PKG, "test", "types", config)], { encoding: "utf8" });
		assert.equal(r.status, 0, `${config}: ${r.stdout}${r.stderr}`);
	}
});

test("npm pack ships the in-box Python sources, equal to the Python package's", (t) => {
	try {
		accessSync(PKG, constants.W_OK);
	} catch {
		t.skip("the package directory is not writable by this user (npm pack writes py/ into it)");
		return;
	}
	const dir = mkdtempSync(path.join(tmpdir(), "kern-node-pack-"));
	try {
		// --ignore-scripts=false: the prepack/postpack hooks copy and remove py/.
		const r = spawnSync("npm", ["pack", "--pack-destination", dir, "--loglevel=error"], { cwd: PKG, encoding: "utf8" });
		if (r.error) {
			t.skip(`npm is not runnable here: ${r.error.message}`);
			return;
		}
		assert.equal(r.status, 0, r.stderr);
		const tgz = readdirSync(dir).find((f) => f.endsWith(".tgz"));
		execFileSync("tar", ["xzf", path.join(dir, tgz), "-C", dir]);
		const { FILES, CHECKOUT } = require("../lib/drivers.cjs");
		for (const f of FILES) {
			assert.equal(readFileSync(path.join(dir, "package", "py", f), "utf8"), readFileSync(path.join(CHECKOUT, f), "utf8"), f);
		}
		const shipped = execFileSync("tar", ["tzf", path.join(dir, tgz)], { encoding: "utf8" }).split("\n").filter(Boolean);
		assert.ok(!shipped.some((f) => f.includes("/test/") || f.includes("node_modules")), shipped.join("\n"));
		// The checkout never keeps the copy (postpack removed it).
		assert.throws(() => readdirSync(path.join(PKG, "py")), { code: "ENOENT" });
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
});
