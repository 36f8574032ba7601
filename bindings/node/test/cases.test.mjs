// The shared box-case table (bindings/shared/box-cases.json) on real boxes.
// The Python package runs the same file through its own API
// (bindings/python/tests/test_shared_cases.py), so the two packages cannot
// drift: one case, one set of inputs, one expected outcome in
// language-neutral terms. This file is the Node adapter: it maps the
// table's snake_case steps and option names to this package's camelCase
// API and checks each expectation. An op or an expectation key it does
// not know fails the case (never a silent pass), and the last test checks
// that every case of the table ran here.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync, mkdtempSync, mkdirSync, readdirSync, symlinkSync, rmSync, chmodSync, statSync, truncateSync } from "node:fs";
import { gunzipSync, gzipSync } from "node:zlib";
import { execFileSync } from "node:child_process";
import { tmpdir } from "node:os";
import path from "node:path";
import { kern, boxes, assertNothingLeft, until, require, pyArchive, sparseTar } from "./helpers.mjs";

const { Sandbox, SandboxError, MountRefused } = kern;
const { poolOf } = require("../lib/sandbox.cjs");
const TABLE = JSON.parse(readFileSync(new URL("../../shared/box-cases.json", import.meta.url), "utf8"));
const RAN = new Set();

// Rich result formats, in the order Result.formats() lists them.
const RESULT_KEYS = new Set([
	"exit_code", "fault", "fault_message", "fault_message_matches", "success", "stdout",
	"stderr", "stdout_matches", "stderr_matches", "stdout_excludes", "stderr_excludes",
	"code_stderr", "code_stderr_matches", "runtime_notes", "runtime_notes_match", "truncated",
	"stdout_bytes", "stderr_bytes", "files", "results_text", "results", "results_formats",
	"duration_under_s", "duration_over_s", "stream_stdout", "stream_stderr",
	"stream_interleaved", "stream_sequence", "stream_steps_ordered",
	"stream_first_before_end_s", "kernel_alive", "pool_served", "stderr_split_whole",
]);
const RAISE_KEYS = new Set(["raises", "message_matches"]);
const STEP_KEYS = new Set(["do", "expect", "code", "language", "timeout_s", "stream", "argv", "path", "text", "hex", "max_bytes", "members", "format", "raw_text", "sparse_tar", "cut_tar_to", "cut_gzip_end", "kind", "target", "count", "under_s"]);
const CASE_KEYS = new Set(["id", "category", "rule", "matrix", "sandbox", "steps", "open_expect"]);

/** The table's option name as this package spells it: memory_mb -> memoryMb. */
const camel = (name) => name.replace(/_([a-z])/g, (_, c) => c.toUpperCase());

/** The case's strings with {decoy} replaced by this run's decoy directory. */
function sub(value, decoy) {
	if (typeof value === "string") return value.split("{decoy}").join(decoy);
	if (Array.isArray(value)) return value.map((v) => sub(v, decoy));
	if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, sub(v, decoy)]));
	return value;
}

function options(opts) {
	return Object.fromEntries(Object.entries(opts).map(([k, v]) => [camel(k), v]));
}

function checkRaise(err, want, where) {
	const unknown = Object.keys(want).filter((k) => !RAISE_KEYS.has(k));
	assert.deepEqual(unknown, [], `${where}: unknown expectation keys`);
	const kind = want.raises;
	if (kind === "not_found") assert.equal(err?.code, "ENOENT", `${where}: ${err}`);
	else if (kind === "MountRefused") assert.ok(err instanceof MountRefused, `${where}: ${err}`);
	else if (kind === "SandboxError") assert.ok(err instanceof SandboxError && !(err instanceof MountRefused), `${where}: ${err}`);
	else assert.fail(`${where}: unknown exception kind ${kind}`);
	if (want.message_matches !== undefined) assert.match(String(err.message), new RegExp(want.message_matches), where);
}

/** Run fn; when `want` expects a raise, check it and return undefined. */
async function attempt(fn, want, where) {
	if (want && "raises" in want) {
		let err = null;
		try {
			await fn();
		} catch (e) {
			err = e;
		}
		assert.ok(err, `${where}: did not raise ${want.raises}`);
		checkRaise(err, want, where);
		return undefined;
	}
	return fn();
}

/** A `*_matches` value: one regular expression or a list of them, each found in text. */
const allMatch = (patterns, text) => (typeof patterns === "string" ? [patterns] : patterns).every((p) => new RegExp(p).test(text));
const bytes = (s) => Buffer.byteLength(s, "utf8");

/** Every chunk naming step i (a number in its text) came before any naming step i+1. */
function stepsOrdered(seen, n) {
	const steps = seen.map(([, text]) => new Set((text.match(/\d+/g) || []).map(Number)));
	for (let i = 0; i < n - 1; i++) {
		const last = steps.reduce((m, s, k) => (s.has(i) ? k : m), -1);
		const first = steps.findIndex((s) => s.has(i + 1));
		if (last < 0 || first < 0 || last >= first) return false;
	}
	return true;
}

const FIELDS = ["text", "html", "markdown", "svg", "latex", "json", "png", "jpeg"];

function checkResult(r, want, where, seen, took, extra) {
	const unknown = Object.keys(want).filter((k) => !RESULT_KEYS.has(k));
	assert.deepEqual(unknown, [], `${where}: unknown expectation keys`);
	const fault = r.fault ? r.fault.type : null;
	const checks = {
		exit_code: (v) => r.exitCode === v,
		fault: (v) => fault === v,
		fault_message: (v) => r.fault !== null && r.fault.message === v,
		fault_message_matches: (v) => r.fault !== null && allMatch(v, r.fault.message),
		success: (v) => r.success === v,
		stdout: (v) => r.stdout === v,
		stderr: (v) => r.stderr === v,
		stdout_matches: (v) => allMatch(v, r.stdout),
		stderr_matches: (v) => allMatch(v, r.stderr),
		stdout_excludes: (v) => !r.stdout.includes(v),
		stderr_excludes: (v) => !r.stderr.includes(v),
		code_stderr: (v) => r.codeStderr === v,
		code_stderr_matches: (v) => allMatch(v, r.codeStderr),
		runtime_notes: (v) => JSON.stringify(r.runtimeNotes) === JSON.stringify(v),
		// Each stderr line is a runtime note or a line of codeStderr.
		stderr_split_whole: (v) => r.stderr.split("\n").every((l) => r.runtimeNotes.includes(l) || r.codeStderr.split("\n").includes(l)) === v,
		runtime_notes_match: (v) => r.runtimeNotes.length > 0 && r.runtimeNotes.every((n) => new RegExp(v).test(n) && r.stderr.includes(n)),
		truncated: (v) => r.truncated === v,
		stdout_bytes: (v) => bytes(r.stdout) === v,
		stderr_bytes: (v) => bytes(r.stderr) === v,
		files: (v) => JSON.stringify(r.files.map((f) => [f.path, f.change, f.size]).sort()) === JSON.stringify([...v].sort()),
		results_text: (v) => JSON.stringify(r.results.map((x) => x.text)) === JSON.stringify(v),
		results: (v) => r.results.length === v.length && v.every((w, i) => Object.keys(w).every((k) => FIELDS.includes(k) && (r.results[i][k] ?? null) === w[k])),
		results_formats: (v) => JSON.stringify(r.results.map((x) => x.formats())) === JSON.stringify(v),
		duration_under_s: (v) => took < v,
		duration_over_s: (v) => took >= v,
		stream_stdout: (v) => seen.filter(([k]) => k === "o").map(([, c]) => c).join("") === v,
		stream_stderr: (v) => seen.filter(([k]) => k === "e").map(([, c]) => c).join("") === v,
		stream_interleaved: (v) => /oe.*o/.test(seen.map(([k]) => k).join("")) === v,
		stream_sequence: (v) => JSON.stringify(seen.map(([k, c]) => [k, c])) === JSON.stringify(v),
		stream_steps_ordered: (v) => stepsOrdered(seen, v),
		// The first stdout chunk came at least v seconds before the call returned.
		stream_first_before_end_s: (v) => took - Math.min(...seen.filter(([k]) => k === "o").map(([, , t]) => t)) >= v,
		kernel_alive: (v) => extra.kernel.alive === v,
		pool_served: (v) => extra.served === v,
	};
	for (const [key, value] of Object.entries(want)) {
		assert.ok(checks[key](value), `${where}: ${key} != ${JSON.stringify(value)} (took ${took.toFixed(2)}s) in ${JSON.stringify(r).slice(0, 2000)}`);
	}
}

class Case {
	constructor(c, tmp) {
		this.case = c;
		this.tmp = tmp;
		this.sbx = null;
		this.kernel = null;
		this.archives = 0;
	}

	async step(i, step) {
		const op = step.do;
		const where = `${this.case.id} step ${i} (${op})`;
		const want = step.expect ?? {};
		assert.deepEqual(Object.keys(step).filter((k) => !STEP_KEYS.has(k)), [], `${where}: unknown step keys`);
		const ops = {
			run_code: () => this.call(step, want, where, (o) => this.sbx.runCode(step.code, { language: step.language ?? "python", ...o })),
			run: () => this.call(step, want, where, (o) => this.sbx.run(step.argv, o)),
			kernel_open: async () => {
				this.kernel = await attempt(() => this.sbx.kernel(), want, where);
			},
			kernel_run_code: () => this.call(step, want, where, (o) => this.kernel.runCode(step.code, o)),
			kernel_close: async () => {
				await this.kernel.close();
				this.kernel = null;
			},
			write_file: () => attempt(() => this.sbx.writeFile(step.path, "hex" in step ? Buffer.from(step.hex, "hex") : step.text), want, where),
			read_file: () => this.readFile(step, want, where),
			list_files: () => this.listFiles(step, want, where),
			restore: () => {
				const file = path.join(this.tmp, `case-${this.archives++}.tgz`);
				if ("raw_text" in step) writeFileSync(file, step.raw_text);
				else if ("sparse_tar" in step) sparseTar(file, step.sparse_tar, `${file}.d`);
				else pyArchive(file, step.members, step.format ?? "USTAR_FORMAT");
				if ("cut_tar_to" in step) writeFileSync(file, gzipSync(gunzipSync(readFileSync(file)).subarray(0, step.cut_tar_to), { level: 1 }));
				if ("cut_gzip_end" in step) truncateSync(file, statSync(file).size - step.cut_gzip_end);
				return attempt(() => this.sbx.restore(file), want, where);
			},
			plant: () => {
				const target = path.join(this.sbx.workspace, step.path);
				if (step.kind === "symlink") symlinkSync(step.target, target);
				else if (step.kind === "fifo") execFileSync("mkfifo", [target]);
				else assert.fail(`${where}: unknown plant kind ${step.kind}`);
			},
			decoy_intact: () => {
				const decoy = path.join(this.tmp, "decoy");
				assert.deepEqual(readdirSync(decoy), ["secret"], where);
				assert.equal(readFileSync(path.join(decoy, "secret"), "utf8"), "host secret\n", where);
			},
			wait_prewarmed: async () => {
				assert.ok(await until(() => this.sbx.prewarmed >= step.count, 60000), `${where}: the pool did not fill`);
			},
			residents: () => {
				const names = boxes().filter((n) => n.startsWith("kern-sbx-"));
				assert.deepEqual(Object.keys(want).filter((k) => !["count", "names_match"].includes(k)), [], `${where}: unknown keys`);
				assert.equal(names.length, want.count, `${where}: ${names}`);
				assert.ok(names.every((n) => new RegExp(want.names_match ?? "").test(n)), `${where}: ${names}`);
			},
		};
		assert.ok(Object.hasOwn(ops, op), `${where}: unknown op`);
		const t0 = performance.now();
		await ops[op]();
		if ("under_s" in step) assert.ok(performance.now() - t0 < step.under_s * 1000, `${where}: took too long`);
	}

	async call(step, want, where, fn) {
		const seen = [];
		const o = {};
		if ("timeout_s" in step) o.timeoutS = step.timeout_s;
		const t0 = performance.now();
		if (step.stream) {
			// Node's callbacks get Buffers (Python's: text); times from the call's start.
			o.onStdout = (c) => {
				assert.ok(Buffer.isBuffer(c));
				seen.push(["o", c.toString("utf8"), (performance.now() - t0) / 1000]);
			};
			o.onStderr = (c) => {
				assert.ok(Buffer.isBuffer(c));
				seen.push(["e", c.toString("utf8"), (performance.now() - t0) / 1000]);
			};
		}
		const pool = this.sbx ? poolOf(this.sbx) : null;
		const before = pool ? pool.served : 0;
		const r = await attempt(() => fn(o), want, where);
		if (r !== undefined) {
			const extra = { kernel: this.kernel, served: (pool ? pool.served : 0) === before + 1 };
			checkResult(r, want, where, seen, (performance.now() - t0) / 1000, extra);
		}
	}

	async readFile(step, want, where) {
		const o = "max_bytes" in step ? { maxBytes: step.max_bytes } : undefined;
		const got = await attempt(() => this.sbx.readFile(step.path, o), want, where);
		if (got === undefined) return;
		assert.deepEqual(Object.keys(want).filter((k) => !["text", "hex", "size"].includes(k)), [], `${where}: unknown keys`);
		if ("text" in want) assert.equal(got.toString("utf8"), want.text, where);
		if ("hex" in want) assert.equal(got.toString("hex"), want.hex, where);
		if ("size" in want) assert.equal(got.length, want.size, where);
	}

	async listFiles(step, want, where) {
		const got = await attempt(() => this.sbx.listFiles(step.path ?? ""), want, where);
		if (got === undefined) return;
		assert.deepEqual(Object.keys(want).filter((k) => !["files", "includes", "excludes"].includes(k)), [], `${where}: unknown keys`);
		const paths = got.map((f) => f.path);
		if ("files" in want) assert.deepEqual(got.map((f) => [f.path, f.size, f.change]), want.files, where);
		for (const p of want.includes ?? []) assert.ok(paths.includes(p), `${where}: ${p} not in ${paths}`);
		for (const p of want.excludes ?? []) assert.ok(!paths.some((q) => q === p || q.startsWith(`${p}/`)), `${where}: ${p} in ${paths}`);
	}
}

for (const raw of TABLE.cases) {
	test(`shared case ${raw.id}`, async () => {
		RAN.add(raw.id);
		const tmp = mkdtempSync(path.join(tmpdir(), "kern-node-case-"));
		const decoy = path.join(tmp, "decoy");
		mkdirSync(decoy);
		writeFileSync(path.join(decoy, "secret"), "host secret\n");
		const c = sub(raw, decoy);
		const run = new Case(c, tmp);
		const opts = options(c.sandbox ?? {});
		try {
			if ("open_expect" in c) {
				await attempt(async () => {
					const s = new Sandbox(opts);
					try {
						await s.open();
					} finally {
						await s.close();
					}
				}, c.open_expect, c.id);
			} else {
				run.sbx = new Sandbox(opts);
				await run.sbx.open();
				for (const [i, step] of c.steps.entries()) await run.step(i, step);
			}
		} finally {
			if (run.kernel) await run.kernel.close();
			if (run.sbx) await run.sbx.close();
			chmodSync(decoy, 0o700);
			rmSync(tmp, { recursive: true, force: true });
		}
		await assertNothingLeft(assert);
		await until(() => !boxes().some((n) => n.startsWith("kern-sbx-")), 10000);
		assert.deepEqual(boxes().filter((n) => n.startsWith("kern-sbx-")), [], "a resident box was left behind");
	});
}

test("every case of the shared table ran here", (t) => {
	// A name filter leaves cases out on purpose: nothing to compare then.
	if (process.execArgv.some((a) => a.startsWith("--test-name-pattern") || a.startsWith("--test-skip-pattern"))) {
		return t.skip("a --test-name-pattern run selects only some of the shared cases");
	}
	assert.deepEqual([...RAN].sort(), TABLE.cases.map((c) => c.id).sort());
});

test("the shared table is well formed", () => {
	const ids = TABLE.cases.map((c) => c.id);
	assert.equal(TABLE.format, 1);
	assert.equal(new Set(ids).size, ids.length, "duplicate ids");
	assert.deepEqual([...new Set(TABLE.cases.map((c) => c.category))].sort(), [...TABLE.categories].sort());
	for (const c of TABLE.cases) {
		assert.ok(c.id.startsWith(`${c.category}/`), c.id);
		assert.deepEqual(Object.keys(c).filter((k) => !CASE_KEYS.has(k)), [], c.id);
		assert.notEqual("open_expect" in c, "steps" in c, c.id);
		if ("matrix" in c) {
			assert.ok(Array.isArray(c.matrix) && c.matrix.length > 0, c.id);
			for (const m of c.matrix) assert.match(m, /^[A-Z]+-[0-9]+$/, c.id);
		}
	}
});
