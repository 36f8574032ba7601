// 100 concurrent runCode calls via Promise.all on one Sandbox: all
// succeed, and nothing of any box is left (listed box, record, scratch,
// cgroup).
import { test } from "node:test";
import assert from "node:assert/strict";
import { kern, assertNothingLeft } from "./helpers.mjs";

const { Sandbox } = kern;

test("100 concurrent runCode calls all succeed and leave nothing behind", async () => {
	const sbx = await Sandbox.create({ image: "host", timeoutS: 120 });
	try {
		const rs = await Promise.all(Array.from({ length: 100 }, (_, i) => sbx.runCode(`print(${i} * 2)`)));
		const bad = rs.map((r, i) => [i, r]).filter(([i, r]) => !r.success || r.stdout !== `${i * 2}\n`);
		assert.deepEqual(bad.map(([i, r]) => `${i}: exit ${r.exitCode} ${r.fault?.type ?? ""} ${r.stderr.slice(0, 200)}`), []);
	} finally {
		await sbx.close();
	}
	await assertNothingLeft(assert);
});

test("concurrent calls of every kind on one workspace, each its own box", async () => {
	const sbx = await Sandbox.create({ image: "host", timeoutS: 120 });
	try {
		const jobs = [];
		for (let i = 0; i < 10; i++) {
			jobs.push(sbx.run(["sh", "-c", `echo ${i} > f${i}.txt`]));
			jobs.push(sbx.runCode(`print(${i})`));
			jobs.push(sbx.writeFile(`w${i}.txt`, String(i)));
		}
		await Promise.all(jobs);
		const names = (await sbx.listFiles()).map((f) => f.path);
		for (let i = 0; i < 10; i++) assert.ok(names.includes(`f${i}.txt`) && names.includes(`w${i}.txt`), names.join());
	} finally {
		await sbx.close();
	}
	await assertNothingLeft(assert);
});
