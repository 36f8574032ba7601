// The shared fault table (bindings/shared/fault-cases.json), run against
// this package's classifier: the Python binding runs the same file.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, existsSync } from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { classify, splitStderr } = require("../lib/faults.cjs");
const TABLE = new URL("../../shared/fault-cases.json", import.meta.url);

const table = existsSync(TABLE) ? JSON.parse(readFileSync(TABLE, "utf8")) : null;
const why = "bindings/shared/fault-cases.json is not on this branch yet";

/** The table's snake_case input, as this package's Observation. */
function observation(i) {
	return {
		exitCode: i.exit_code,
		started: i.started ?? [],
		stdout: i.stdout ?? "",
		stderr: i.stderr ?? "",
		deadlineFired: i.deadline_fired ?? false,
		alive: i.alive ?? null,
		aliveOpen: i.alive_open ?? false,
		residentExec: i.resident_exec ?? false,
		execReportsStart: i.exec_reports_start ?? true,
		memoryMb: i.memory_mb ?? null,
		timeoutS: i.timeout_s ?? 0,
		image: i.image ?? "",
	};
}

test("shared fault table: format 1 with classify and split_stderr cases", { skip: table ? false : why }, () => {
	assert.equal(table.format, 1);
	assert.ok(table.classify.length > 10);
	assert.ok(table.split_stderr.length > 0);
});

test("shared fault table: every classify case", { skip: table ? false : why }, () => {
	const failures = [];
	for (const c of table.classify) {
		const v = classify(observation(c.input));
		const e = c.expect;
		const got = { fault: v.fault ? v.fault.type : null, raises: v.raises, exit_code: v.exitCode };
		const want = { fault: e.fault, raises: e.raises, exit_code: e.exit_code };
		try {
			assert.deepEqual(got, want);
			for (const s of e.message_contains ?? []) assert.ok(v.fault && v.fault.message.includes(s), `message lacks ${JSON.stringify(s)}: ${v.fault?.message}`);
			if (e.message_equals !== undefined) assert.equal(v.fault?.message, e.message_equals);
		} catch (err) {
			failures.push(`${c.name}: ${err.message}`);
		}
	}
	assert.deepEqual(failures, []);
});

test("shared fault table: every split_stderr case", { skip: table ? false : why }, () => {
	for (const c of table.split_stderr) {
		const s = splitStderr(c.stderr);
		assert.deepEqual({ code: s.codeStderr, notes: s.runtimeNotes }, { code: c.code_stderr, notes: c.runtime_notes }, c.name);
	}
});

// Why a kernel or a prewarmed box stopped answering (python-binding.md §12,
// kernel()), the table the Python package's test_kernel_death.py runs.
const { classifyDeath } = require("../lib/driverbox.cjs");
const DEATH = new URL("../../shared/kernel-death-cases.json", import.meta.url);
const death = existsSync(DEATH) ? JSON.parse(readFileSync(DEATH, "utf8")) : null;

test("shared kernel-death table: every case", { skip: death ? false : "bindings/shared/kernel-death-cases.json is not on this branch" }, () => {
	assert.equal(death.format, 1);
	assert.ok(death.death.length > 5);
	const failures = [];
	for (const c of death.death) {
		const i = c.input;
		const d = classifyDeath(
			{ exitCode: i.exit_code, started: i.started ?? [], stderr: i.stderr ?? "", memoryMb: i.memory_mb ?? null },
			{ oneCall: i.one_call ?? false },
		);
		const e = c.expect;
		try {
			assert.deepEqual({ fault: d.fault ? d.fault.type : null, raises: d.raises, exit_code: d.exitCode }, { fault: e.fault, raises: e.raises, exit_code: e.exit_code });
			for (const s of e.message_contains ?? []) assert.ok(d.fault && d.fault.message.includes(s), `message lacks ${JSON.stringify(s)}: ${d.fault?.message}`);
			for (const s of e.note_contains ?? []) assert.ok(d.note.includes(s), `note lacks ${JSON.stringify(s)}: ${d.note}`);
		} catch (err) {
			failures.push(`${c.name}: ${err.message}`);
		}
	}
	assert.deepEqual(failures, []);
});
