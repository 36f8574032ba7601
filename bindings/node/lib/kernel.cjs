"use strict";
// Kernel: one warm python3 in one long-lived box (python-binding.md §12).
// Cells share the interpreter, its memory and the box; per-cell cost is a
// frame each way. A fault tears the kernel down and is returned on that
// cell; the next call raises "kernel is dead"; only workspace files
// survive.

const { SandboxError } = require("./errors.cjs");
const { asyncDispose } = require("./dispose.cjs");
const { ExecutionResult, Result, SandboxFault } = require("./results.cjs");
const { splitStderr, fmtSeconds } = require("./faults.cjs");
const { Capture } = require("./spawn.cjs");
const { DriverBox, classifyDeath } = require("./driverbox.cjs");
const { changes } = require("./workspace.cjs");

const CLOSE_GRACE_MS = 3000;

/**
 * @typedef {object} KernelContext what the Sandbox hands its kernel
 * @property {DriverBox} box
 * @property {import("./workspace.cjs").Workspace} ws
 * @property {number} timeoutS the default deadline per cell
 * @property {boolean} trackFiles
 * @property {number} maxOutputBytes
 * @property {((chunk: Buffer) => unknown) | null} onStdout
 * @property {((chunk: Buffer) => unknown) | null} onStderr
 * @property {() => void} cleanup removes the driver script and env-file
 */

class Kernel {
	/** @type {KernelContext} */
	#ctx;
	/** @type {string | null} why it is dead */
	#dead = null;
	/** @type {Promise<unknown>} cells run one after another */
	#queue = Promise.resolve();
	#closed = false;

	/** @param {KernelContext} ctx (made by Sandbox.kernel()) */
	constructor(ctx) {
		this.#ctx = ctx;
	}

	/** The box's name, as `kern ps` shows it. */
	get name() {
		return this.#ctx.box.name;
	}

	/** False once a fault killed it or close() ended it. */
	get alive() {
		return this.#dead === null && !this.#closed;
	}

	/**
	 * Run a cell in the warm interpreter. Calls queue: one cell at a time.
	 * @param {string} code
	 * @param {{timeoutS?: number, onStdout?: (chunk: Buffer) => unknown, onStderr?: (chunk: Buffer) => unknown}} [opts]
	 * @returns {Promise<ExecutionResult>}
	 */
	runCode(code, opts = {}) {
		if (typeof code !== "string") return Promise.reject(new SandboxError("code must be a string"));
		const t = opts.timeoutS;
		if (t !== undefined && (typeof t !== "number" || !Number.isFinite(t) || t <= 0)) {
			return Promise.reject(new SandboxError(`timeoutS must be a finite number > 0, not ${JSON.stringify(t)}`));
		}
		const next = this.#queue.then(() => this.#cell(code, opts));
		this.#queue = next.catch(() => undefined);
		return next;
	}

	/**
	 * @param {string} code
	 * @param {{timeoutS?: number, onStdout?: (chunk: Buffer) => unknown, onStderr?: (chunk: Buffer) => unknown}} opts
	 */
	async #cell(code, opts) {
		if (this.#closed) throw new SandboxError("kernel is closed");
		if (this.#dead !== null) throw new SandboxError(`kernel is dead (${this.#dead}); open a new one with sandbox.kernel()`);
		const ctx = this.#ctx;
		const timeoutS = opts.timeoutS ?? ctx.timeoutS;
		const before = ctx.trackFiles ? ctx.ws.stamps() : null;
		const out = new Capture(ctx.maxOutputBytes, opts.onStdout ?? ctx.onStdout);
		const err = new Capture(ctx.maxOutputBytes, opts.onStderr ?? ctx.onStderr);
		const cell = await ctx.box.call(code, timeoutS, out, err);
		const files = () => (before ? changes(before, ctx.ws.stamps()) : []);
		if (cell.reply) {
			const r = cell.reply;
			const split = splitStderr(r.stderr);
			return new ExecutionResult({
				stdout: r.stdout,
				stderr: r.stderr,
				exitCode: r.rc,
				durationMs: cell.durationMs,
				fault: null,
				files: files(),
				results: r.results.map((b) => new Result(b)),
				truncated: r.trunc || cell.streamedCut,
				codeStderr: split.codeStderr,
				runtimeNotes: split.runtimeNotes,
			});
		}
		/** @type {SandboxFault | null} */
		let fault;
		let exitCode = 137;
		let note = "";
		if (cell.failure === "timeout") {
			ctx.box.kill();
			await ctx.box.reapKilled();
			fault = new SandboxFault("timeout", `exceeded the ${fmtSeconds(timeoutS)}s time limit (killed by the binding)`);
		} else if (cell.failure === "eof") {
			const death = classifyDeath(await ctx.box.observe(), { oneCall: false });
			if (death.raises) {
				this.#die("it never started");
				throw new SandboxError(`the kernel box did not start: ${death.fault ? death.fault.message : ""}`);
			}
			fault = death.fault;
			exitCode = death.exitCode;
			note = death.note;
		} else {
			ctx.box.kill();
			await ctx.box.reapKilled();
			fault = new SandboxFault("killed", `the kernel's reply was refused and the kernel killed: ${cell.detail}`);
		}
		this.#die(fault ? fault.type : note || "it ended");
		const stdout = cell.stdout.toString("utf8");
		const stderr = cell.stderr.toString("utf8") + (note ? `${note}\n` : "");
		const split = splitStderr(stderr);
		return new ExecutionResult({
			stdout,
			stderr,
			exitCode,
			durationMs: cell.durationMs,
			fault,
			files: files(),
			results: [],
			truncated: cell.streamedCut,
			codeStderr: split.codeStderr,
			runtimeNotes: split.runtimeNotes,
		});
	}

	/** @param {string} why */
	#die(why) {
		if (this.#dead === null) this.#dead = why;
		this.#ctx.cleanup();
	}

	/**
	 * End the kernel: close its stdin, wait up to 3 s, then stop and kill the
	 * box. Idempotent.
	 */
	async close() {
		if (this.#closed) return;
		this.#closed = true;
		await this.#queue;
		await this.#ctx.box.end(CLOSE_GRACE_MS);
		this.#ctx.cleanup();
	}

	async [asyncDispose]() {
		await this.close();
	}
}

module.exports = { Kernel };
