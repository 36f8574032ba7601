// kern starts go through `kern spawner` (lib/spawner.cjs, man
// kern-spawner) when the binary has it, and through child_process.spawn
// when it has not or the spawner dies: the results are the same.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync, readFileSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { kern, require, KERN, PKG, assertNothingLeft } from "./helpers.mjs";

const { Sandbox, SandboxError } = kern;
const { spawnerFor } = require("../lib/spawner.cjs");
const { locateKern } = require("../lib/locate.cjs");

/** Our children running `kern spawner`. */
function spawnerPids() {
	const found = [];
	for (const d of readdirSync("/proc")) {
		if (!/^\d+$/.test(d)) continue;
		try {
			const stat = readFileSync(`/proc/${d}/stat`, "latin1");
			const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
			const argv = readFileSync(`/proc/${d}/cmdline`, "latin1").split("\0");
			if (ppid === process.pid && argv[1] === "spawner") found.push(Number(d));
		} catch {
			// gone meanwhile
		}
	}
	return found;
}

const tmp = mkdtempSync(path.join(os.tmpdir(), "nodesbx-spawner-"));
after(() => rmSync(tmp, { recursive: true, force: true }));

test("this kern has the spawner, and a call's kern is started by it", async () => {
	const bin = locateKern().path;
	assert.notEqual(await spawnerFor(bin), null, `${bin} spawner did not greet`);
	const sbx = await Sandbox.create({ image: "host", timeoutS: 60 });
	try {
		const r = await sbx.run(["sh", "-c", "echo out; echo err >&2; exit 3"]);
		assert.equal(r.stdout, "out\n");
		assert.equal(r.stderr, "err\n");
		assert.equal(r.exitCode, 3);
		assert.equal(spawnerPids().length, 1);
	} finally {
		await sbx.close();
	}
	await assertNothingLeft(assert);
});

test("a kern without the spawner: the same results through child_process.spawn", () => {
	const fake = path.join(tmp, "kern");
	// Says what a kern without the command says; everything else is the real one.
	writeFileSync(fake, `#!/bin/sh\n[ "$1" = spawner ] && { echo "error: box: unknown command 'spawner'" >&2; exit 1; }\nexec '${path.resolve(locateKern().path)}' "$@"\n`, { mode: 0o755 });
	const script = `
		const k = require(${JSON.stringify(PKG)});
		const { spawnerFor } = require(${JSON.stringify(path.join(PKG, "lib", "spawner.cjs"))});
		(async () => {
			const s = await k.Sandbox.create({ image: "host", timeoutS: 60 });
			const r = await s.runCode("print(6 * 7)");
			const d = await s.run(["sleep", "30"], { timeoutS: 1 });
			await s.close();
			console.log(JSON.stringify({ spawner: await spawnerFor(process.env.KERN_BIN), out: r.stdout, fault: d.fault && d.fault.type }));
		})();`;
	const out = execFileSync(process.execPath, ["-e", script], { env: { ...process.env, KERN_BIN: fake }, encoding: "utf8", timeout: 60000 });
	assert.deepEqual(JSON.parse(out), { spawner: null, out: "42\n", fault: "timeout" });
});

test("the spawner killed under a running call: that call fails saying so, nothing is left, the next call falls back", async () => {
	const sbx = await Sandbox.create({ image: "host", timeoutS: 60 });
	try {
		const [pid] = spawnerPids();
		assert.ok(pid, "no spawner running");
		const p = sbx.run(["sh", "-c", "echo started; sleep 1"], {
			onStdout: () => process.kill(pid, "SIGKILL"),
		});
		await assert.rejects(p, (e) => e instanceof SandboxError && /kern spawner exited/.test(e.message));
		await assertNothingLeft(assert);
		const r = await sbx.run(["echo", "again"]);
		assert.equal(r.stdout, "again\n");
		assert.deepEqual(spawnerPids(), []);
	} finally {
		await sbx.close();
	}
	await assertNothingLeft(assert);
});
