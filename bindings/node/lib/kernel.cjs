"use strict";
// kernel(): one warm python3 in a long-lived box (python-binding.md §12;
// the Python package's kernel.py). Cells share one interpreter, so
// in-memory state persists and a cell costs a fraction of a millisecond
// instead of a CPython start; that is the trade: they share one process and
// one box. A fault (the deadline, the memory cap, a blocked system call)
// tears the whole kernel down; that cell's result says so and every later
// call raises SandboxError. Workspace files survive, and /tmp until the
// kernel ends.

const { SandboxError, throwIfAborted } = require("./errors.cjs");
const { asyncDispose } = require("./dispose.cjs");
const { ExecutionResult, Result, SandboxFault } = require("./results.cjs");
const { splitStderr, fmtSeconds, EXEC_FAILURE_RE, strip } = require("./faults.cjs");
const { checkTimeout } = require("./rules.cjs");
const { Capture } = require("./spawn.cjs");
const { classifyDeath } = require("./driverbox.cjs");
const { changes } = require("./workspace.cjs");

// close(): how long the driver gets to exit after its stdin closes.
const CLOSE_GRACE_MS = 3000;
const HELLO_TIMEOUT_S = 120;

/**
 * @typedef {object} KernelContext what the Sandbox hands its kernel
 * @property {import("./driverbox.cjs").DriverBox} box
 * @property {import("./workspace.cjs").Workspace} ws
 * @property {string} image
 * @property {number} timeoutS the default deadline per cell
 * @property {boolean} trackFiles
 * @property {number} maxOutputBytes
 * @property {((chunk: Buffer) => unknown) | null} onStdout
 * @property {((chunk: Buffer) => unknown) | null} onStderr
 * @property {() => void} onClose tells the Sandbox it need not close it
 */

/** @param {Buffer} b */
const text = (b) => b.toString("utf8");

/**
 * Why a kernel box did not say hello, in words.
 * @param {import("./driverbox.cjs").DriverBox} box @param {string} failure @param {string} image
 */
async function startFailure(box, failure, image) {
	if (failure === "timeout") {
		await box.stop();
		await box.reapKilled();
		return `the box did not start within ${HELLO_TIMEOUT_S} s`;
	}
	if (failure === "malformed") await box.stop();
	const obs = await box.observe();
	const stderr = /** @type {string} */ (obs.stderr);
	const found = EXEC_FAILURE_RE.exec(stderr);
	if (found) return `'${found[1]}' could not be started in image '${image}' (${found[2]})`;
	const death = classifyDeath(obs, { oneCall: false });
	const t = strip(splitStderr(stderr).codeStderr);
	if (death.fault && death.fault.type === "startup_failed") return death.fault.message;
	const why = death.fault ? death.fault.message : death.note;
	return `${why} (kern exit ${obs.exitCode})${t ? `: ${Array.from(t).slice(-500).join("")}` : ""}`;
}

class Kernel {
	/** @type {KernelContext} */
	#ctx;
	/** @type {string | null} why it is dead */
	#dead = null;
	#closed = false;
	#running = false;
	/** @type {Promise<unknown>} cells run one after another */
	#queue = Promise.resolve();

	/** @param {KernelContext} ctx (made by Sandbox.kernel()) */
	constructor(ctx) {
		this.#ctx = ctx;
	}

	/** The box's name, as `kern ps` shows it. */
	get name() {
		return this.#ctx.box.name;
	}

	/** True until a fault tore the kernel down or it was closed. */
	get alive() {
		return !this.#closed && this.#dead === null;
	}

	/**
	 * Run `code` as the next cell of this interpreter; calls queue, one cell
	 * at a time. timeoutS overrides the deadline for this cell (past it the
	 * kernel is killed: fault timeout). An aborted signal kills the kernel
	 * (its state is lost) and the call rejects with the signal's reason.
	 * Rejects with SandboxError once the kernel is dead or closed.
	 * @param {string} code
	 * @param {{timeoutS?: number, onStdout?: (chunk: Buffer) => unknown, onStderr?: (chunk: Buffer) => unknown, signal?: AbortSignal}} [opts]
	 * @returns {Promise<ExecutionResult>}
	 */
	runCode(code, opts = {}) {
		const next = this.#queue.then(() => this.#cell(code, opts));
		this.#queue = next.catch(() => undefined);
		return next;
	}

	/**
	 * @param {string} code
	 * @param {{timeoutS?: number, onStdout?: (chunk: Buffer) => unknown, onStderr?: (chunk: Buffer) => unknown, signal?: AbortSignal}} opts
	 */
	async #cell(code, opts) {
		if (typeof code !== "string") throw new SandboxError(`code must be a string, not ${typeof code}`);
		const ctx = this.#ctx;
		const limit = opts.timeoutS === undefined ? ctx.timeoutS : checkTimeout(opts.timeoutS);
		if (this.#closed) throw new SandboxError("this kernel is closed; open a new one with Sandbox.kernel()");
		if (this.#dead !== null) {
			throw new SandboxError(`kernel is dead (${this.#dead}); only workspace files survive: open a new one with Sandbox.kernel()`);
		}
		throwIfAborted(opts.signal);
		const before = ctx.trackFiles ? ctx.ws.stamps() : null;
		const out = new Capture(ctx.maxOutputBytes, opts.onStdout ?? ctx.onStdout);
		const err = new Capture(ctx.maxOutputBytes, opts.onStderr ?? ctx.onStderr);
		const onAbort = () => {
			ctx.box.stop();
		};
		opts.signal?.addEventListener("abort", onAbort, { once: true });
		let cell;
		this.#running = true;
		try {
			cell = await ctx.box.call(code, limit, out, err);
		} finally {
			this.#running = false;
			opts.signal?.removeEventListener("abort", onAbort);
		}
		if (opts.signal?.aborted) {
			if (!cell.reply) await this.#fault(cell, limit);
			throwIfAborted(opts.signal);
		}
		const result = cell.reply ? fromReply(cell) : await this.#fault(cell, limit);
		if (before) Object.assign(result, { files: changes(before, ctx.ws.stamps()) });
		return result;
	}

	/**
	 * The cell got no reply: the kernel is torn down, and why is the cell's
	 * result (or, for a box that never started, SandboxError).
	 * @param {import("./driverbox.cjs").Cell} cell @param {number} limit
	 */
	async #fault(cell, limit) {
		const box = this.#ctx.box;
		/** @type {import("./driverbox.cjs").Death} */
		let death;
		if (cell.failure === "eof") death = classifyDeath(await box.observe(), { oneCall: false });
		else {
			await box.stop();
			await box.reapKilled();
			death =
				cell.failure === "timeout"
					? { fault: new SandboxFault("timeout", `exceeded the ${fmtSeconds(limit)}s time limit (killed by the binding)`), raises: false, exitCode: 137, note: "" }
					: { fault: new SandboxFault("killed", `the kernel sent a reply the binding refuses (${cell.detail}); it was killed`), raises: false, exitCode: 137, note: "" };
		}
		this.#dead = death.fault ? death.fault.type : "its python3 crashed";
		if (death.raises) throw new SandboxError(`kernel is dead: ${/** @type {SandboxFault} */ (death.fault).message}`);
		return fromDeath(cell, death, box.kernStderr());
	}

	/**
	 * End the kernel: its stdin closes, it gets 3 s to exit, then `kern
	 * stop` and SIGKILL. A cell still running is stopped first (it returns
	 * with a killed fault); cells queued behind it reject. Idempotent.
	 */
	async close() {
		if (this.#closed) return;
		this.#closed = true;
		this.#ctx.onClose();
		if (this.#running) await this.#ctx.box.stop();
		await this.#queue;
		if (this.#dead === null) await this.#ctx.box.end(CLOSE_GRACE_MS);
	}

	async [asyncDispose]() {
		await this.close();
	}
}

/** @param {import("./driverbox.cjs").Cell} cell */
function fromReply(cell) {
	const r = /** @type {import("./frames.cjs").Reply} */ (cell.reply);
	const split = splitStderr(r.stderr);
	return new ExecutionResult({
		stdout: r.stdout,
		stderr: r.stderr,
		exitCode: r.rc,
		durationMs: cell.durationMs,
		results: r.results.map((b) => new Result(b)),
		truncated: r.trunc,
		codeStderr: split.codeStderr,
		runtimeNotes: split.runtimeNotes,
	});
}

/**
 * What the cell printed before the end, then kern's lines and a note.
 * @param {import("./driverbox.cjs").Cell} cell @param {import("./driverbox.cjs").Death} death @param {string} kernStderr
 */
function fromDeath(cell, death, kernStderr) {
	let stderr = text(cell.stderr);
	for (const extra of [kernStderr, death.note]) {
		if (!extra) continue;
		if (stderr && !stderr.endsWith("\n")) stderr += "\n";
		stderr += extra.endsWith("\n") ? extra : `${extra}\n`;
	}
	const split = splitStderr(stderr);
	return new ExecutionResult({
		stdout: text(cell.stdout),
		stderr,
		exitCode: death.exitCode,
		durationMs: cell.durationMs,
		fault: death.fault,
		truncated: cell.streamedCut,
		codeStderr: split.codeStderr,
		runtimeNotes: split.runtimeNotes,
	});
}

module.exports = { Kernel, startFailure, fromReply, fromDeath, HELLO_TIMEOUT_S };
