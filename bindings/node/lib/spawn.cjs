"use strict";
// Running one kern process to its end (python-binding.md §9): the argv, a
// session of its own (so the whole group can be killed), stdout and stderr
// read into buffers capped at maxOutputBytes each, the outcome bytes of
// KERN_STARTED_FD and the readiness byte of KERN_ALIVE_FD, and the
// binding's own deadline, which stops the box from outside.

const net = require("node:net");
const os = require("node:os");
const { spawn, execFile } = require("node:child_process");
const { pipe, closeQuietly } = require("./pipes.cjs");
const { SandboxError } = require("./errors.cjs");

// Descriptor numbers in the kern process.
const STARTED_FD = 3;
const ALIVE_FD = 4;
const STOP_BUDGET_MS = 5000;
const JOIN_MS = 8000;
// Chunks held for a callback that is still busy with an earlier one
// (it returned a promise); beyond this they are dropped for it.
const CALLBACK_BACKLOG = 256;

/**
 * One output stream: bytes up to the cap, the rest read and thrown away,
 * and a best-effort feed to a callback.
 */
class Capture {
	/** @param {number} cap @param {((chunk: Buffer) => unknown) | undefined} callback */
	constructor(cap, callback) {
		this.cap = cap;
		this.size = 0;
		/** @type {Buffer[]} */
		this.chunks = [];
		this.truncated = false;
		this.callback = callback;
		/** @type {Buffer[]} */
		this.backlog = [];
		this.busy = false;
		this.dropped = 0;
	}

	/** @param {Buffer} chunk */
	add(chunk) {
		const room = this.cap - this.size;
		if (chunk.length > room) {
			this.truncated = true;
			chunk = chunk.subarray(0, Math.max(room, 0));
		}
		if (chunk.length === 0) return;
		this.chunks.push(chunk);
		this.size += chunk.length;
		if (this.callback) this.feed(Buffer.from(chunk));
	}

	/** @param {Buffer} chunk */
	feed(chunk) {
		if (this.busy) {
			if (this.backlog.length < CALLBACK_BACKLOG) this.backlog.push(chunk);
			else this.dropped++;
			return;
		}
		let ret;
		try {
			ret = /** @type {(chunk: Buffer) => unknown} */ (this.callback)(chunk);
		} catch {
			return; // a failing callback never fails the call
		}
		if (ret && typeof (/** @type {{then?: unknown}} */ (ret).then) === "function") {
			this.busy = true;
			const next = () => {
				this.busy = false;
				const queued = this.backlog.shift();
				if (queued) this.feed(queued);
			};
			/** @type {Promise<unknown>} */ (ret).then(next, next);
		}
	}

	bytes() {
		return Buffer.concat(this.chunks, this.size);
	}
}

/** @param {string | null} signal @param {number | null} code */
function exitStatus(code, signal) {
	if (code !== null) return code;
	const n = signal ? os.constants.signals[/** @type {NodeJS.Signals} */ (signal)] : undefined;
	return n ? 128 + n : 137;
}

/** @param {number} ms */
const sleep = (ms) => new Promise((r) => setTimeout(r, ms).unref());

/**
 * `kern stop NAME`, its result ignored.
 * @param {string} kern @param {string} name @param {Record<string, string | undefined>} env
 */
function kernStop(kern, name, env) {
	return new Promise((resolve) => {
		execFile(kern, ["stop", name], { timeout: STOP_BUDGET_MS, env, killSignal: "SIGKILL" }, () => resolve(undefined));
	});
}

/**
 * @typedef {object} RunOptions
 * @property {string} kern path of the kern binary
 * @property {string[]} argv arguments after the binary
 * @property {Record<string, string | undefined>} env environment of the kern process
 * @property {string | null} name box to `kern stop` when the deadline fires
 * @property {number} timeoutS the binding's deadline, seconds
 * @property {number} maxOutputBytes cap of each captured stream
 * @property {boolean} [alive] pass KERN_ALIVE_FD
 * @property {((chunk: Buffer) => unknown)} [onStdout]
 * @property {((chunk: Buffer) => unknown)} [onStderr]
 * @property {AbortSignal} [signal]
 */

/**
 * @typedef {object} RunOutcome
 * @property {number} exitCode 128+N for a signal
 * @property {Buffer} stdout
 * @property {Buffer} stderr
 * @property {boolean} truncated
 * @property {Buffer} started the outcome bytes (0 to 4)
 * @property {string} aliveBytes what the alive pipe carried
 * @property {boolean} aliveOpen the alive pipe was still open when the deadline fired
 * @property {boolean} deadlineFired
 * @property {boolean} aborted
 * @property {number} durationMs
 */

/**
 * Run kern and wait for it, its readers and its outcome bytes.
 * @param {RunOptions} o
 * @returns {Promise<RunOutcome>}
 */
async function runKern(o) {
	const t0 = process.hrtime.bigint();
	const out = pipe();
	const err = pipe();
	const env = { ...o.env, KERN_STARTED_FD: String(STARTED_FD) };
	if (o.alive) env.KERN_ALIVE_FD = String(ALIVE_FD);
	else delete env.KERN_ALIVE_FD;
	/** @type {import("node:child_process").ChildProcess} */
	let child;
	try {
		child = spawn(o.kern, o.argv, {
			stdio: ["ignore", out.w, err.w, "pipe", o.alive ? "pipe" : "ignore"],
			env,
			detached: true, // a session and process group of its own
		});
	} catch (e) {
		for (const fd of [out.r, out.w, err.r, err.w]) closeQuietly(fd);
		throw new SandboxError(`spawn ${o.kern}: ${/** @type {Error} */ (e).message}`);
	}
	closeQuietly(out.w);
	closeQuietly(err.w);

	const stdout = new Capture(o.maxOutputBytes, o.onStdout);
	const stderr = new Capture(o.maxOutputBytes, o.onStderr);
	const started = new Capture(4, undefined);
	const alive = { bytes: "", ended: !o.alive };

	/** @param {number} fd @param {Capture} cap */
	const reader = (fd, cap) => {
		const s = new net.Socket({ fd, readable: true, writable: false });
		s.on("data", (d) => cap.add(d));
		const done = new Promise((resolve) => {
			s.on("close", resolve);
			s.on("error", () => s.destroy());
		});
		return { s, done };
	};
	const readers = [reader(out.r, stdout), reader(err.r, stderr)];

	const side = /** @type {import("node:stream").Readable[]} */ (child.stdio.slice(STARTED_FD));
	const sideDone = [
		new Promise((resolve) => {
			const s = side[0];
			s.on("data", (d) => started.add(d));
			s.on("close", resolve);
			s.on("error", () => s.destroy());
		}),
	];
	if (o.alive && side[1]) {
		const s = side[1];
		sideDone.push(
			new Promise((resolve) => {
				s.on("data", (d) => {
					alive.bytes += d.toString("latin1");
				});
				s.on("close", () => {
					alive.ended = true;
					resolve(undefined);
				});
				s.on("error", () => s.destroy());
			}),
		);
	}

	/** @type {Promise<{code: number | null, signal: string | null}>} */
	const exited = new Promise((resolve, reject) => {
		child.on("exit", (code, signal) => resolve({ code, signal }));
		child.on("error", (e) => reject(new SandboxError(`spawn ${o.kern}: ${e.message}`)));
	});

	let deadlineFired = false;
	let aborted = false;
	let aliveOpen = false;
	let aliveAtDeadline = "";
	/** @type {Promise<void> | null} */
	let stopping = null;
	const stop = () => {
		if (stopping) return stopping;
		aliveOpen = !alive.ended;
		aliveAtDeadline = alive.bytes;
		stopping = (async () => {
			if (o.name) await kernStop(o.kern, o.name, o.env);
			const pid = /** @type {number} */ (child.pid);
			for (const target of [-pid, pid]) {
				try {
					process.kill(target, "SIGKILL");
				} catch {
					// already gone
				}
			}
		})();
		return stopping;
	};
	const timer = setTimeout(() => {
		deadlineFired = true;
		stop();
	}, Math.max(1, Math.round(o.timeoutS * 1000)));
	const onAbort = () => {
		aborted = true;
		stop();
	};
	if (o.signal) {
		if (o.signal.aborted) onAbort();
		else o.signal.addEventListener("abort", onAbort, { once: true });
	}

	let status;
	try {
		status = await exited;
	} catch (e) {
		clearTimeout(timer);
		o.signal?.removeEventListener("abort", onAbort);
		for (const r of readers) r.s.destroy();
		throw e;
	}
	clearTimeout(timer);
	o.signal?.removeEventListener("abort", onAbort);
	if (stopping) await stopping;
	// The readers get EOF once the box's last process is gone; bounded in
	// case something outside the box still holds a write end.
	const all = Promise.all([...readers.map((r) => r.done), ...sideDone]);
	const joined = await Promise.race([all.then(() => true), sleep(JOIN_MS).then(() => false)]);
	if (!joined) {
		for (const r of readers) r.s.destroy();
		for (const s of side) s?.destroy();
	}

	const exitCode = exitStatus(status.code, status.signal);
	return {
		exitCode,
		stdout: stdout.bytes(),
		stderr: stderr.bytes(),
		truncated: stdout.truncated || stderr.truncated,
		started: started.bytes(),
		aliveBytes: deadlineFired || aborted ? aliveAtDeadline : alive.bytes,
		aliveOpen,
		deadlineFired,
		aborted,
		durationMs: Number((process.hrtime.bigint() - t0) / 1000000n),
	};
}

module.exports = { runKern, kernStop, Capture, exitStatus, STARTED_FD, ALIVE_FD };
