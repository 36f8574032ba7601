"use strict";
// A box whose workload is the kernel driver, seen from the host
// (python-binding.md §12, §13, §15.2): kernel() keeps one for many cells,
// the prewarm pool starts several and gives each exactly one call. Cell
// frames go to the box's stdin, JSON frames come back on its stdout, kern's
// own lines on its stderr, the outcome bytes on KERN_STARTED_FD once kern
// exits. When the driver stops answering, death() says why, from kern's
// exit status and outcome bytes first.

const { BoxProcess, exitStatus, sleep } = require("./spawn.cjs");
const { spawnerFor } = require("./spawner.cjs");
const { pipes } = require("./pipes.cjs");
const frames = require("./frames.cjs");
const { pySource } = require("./drivers.cjs");
const { SandboxFault } = require("./results.cjs");
const { isOom, kernIsSpeaking, killedFault, oomFault, startupFault, normalise } = require("./faults.cjs");

// Rich results kept per cell, as JSON: the one-shot result file's limit.
const RESULTS_CAP = 64 * 1024 * 1024;
// kern's own stderr kept per box; the rest is read and dropped.
const KERN_STDERR_CAP = 64 * 1024;
// After the channel breaks: how long kern gets to exit, and to hand over
// its outcome bytes (§12: a 2 s select).
const EXIT_WAIT_MS = 5000;
const OUTCOME_WAIT_MS = 2000;
// Signals of a crash of python3 itself: the interpreter died, the sandbox
// did not act.
/** @type {Record<number, string>} */
const CRASH_SIGNALS = { 4: "SIGILL", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE", 11: "SIGSEGV" };
const SIGKILL = 9;
const SIGSYS = 31;

/**
 * The kernel driver's source for `python3 -c` or a script file: the shared
 * cell code, then the driver with its four tokens replaced
 * (bindings/shared/README.md). `oneCall`: a pool box, which after its one
 * reply kills every other process of its box and stops itself.
 * @param {number} outCap @param {number} resCap @param {boolean} hello @param {boolean} [oneCall]
 */
function driverSource(outCap, resCap, hello, oneCall = false) {
	let text = pySource("_kernel_driver.py");
	for (const [token, value] of [
		["__KERN_OUT_CAP__", Math.trunc(outCap)],
		["__KERN_RES_CAP__", Math.trunc(resCap)],
		["__KERN_HELLO__", hello ? 1 : 0],
		["__KERN_ONE_CALL__", oneCall ? 1 : 0],
	]) {
		const n = text.split(String(token)).length - 1;
		if (n !== 1) throw new Error(`kern-sandbox: ${token} appears ${n} times in _kernel_driver.py`);
		text = text.replace(String(token), String(value));
	}
	return `${pySource("_cell.py")}\n${text}`;
}

/**
 * @typedef {object} Cell what one call on a driver box came to
 * @property {import("./frames.cjs").Reply | null} reply set when the driver answered
 * @property {string | null} failure "timeout" | "eof" | "oversize" | "malformed" otherwise
 * @property {string} detail
 * @property {Buffer} stdout streamed before the failure, within the cap
 * @property {Buffer} stderr
 * @property {boolean} streamedCut
 * @property {number} durationMs
 */

/**
 * @typedef {object} Death why a driver box stopped answering
 * @property {SandboxFault | null} fault
 * @property {boolean} raises
 * @property {number} exitCode
 * @property {string} note
 */

class DriverBox {
	/**
	 * @param {object} o
	 * @param {string} o.kern @param {string[]} o.argv @param {string} o.name
	 * @param {Record<string, string | undefined>} o.env
	 * @param {number} o.outCap @param {number} o.replyLimit @param {number | null} o.memoryMb
	 * @param {{r: number, w: number}[]} p stdout, stderr and stdin pipes (and BoxProcess's side pipes)
	 * @param {import("./spawner.cjs").Spawner | null} spawner see BoxProcess
	 */
	constructor(o, p, spawner) {
		this.name = o.name;
		this.outCap = o.outCap;
		this.memoryMb = o.memoryMb;
		/** @type {Buffer[]} */
		this.kernErr = [];
		this.kernErrSize = 0;
		this.box = new BoxProcess({
			kern: o.kern,
			argv: o.argv,
			env: o.env,
			name: o.name,
			stdin: true,
			alive: false,
			onStdout: null, // the frame reader reads it, pausing at its cap
			onStderr: (d) => {
				const room = KERN_STDERR_CAP - this.kernErrSize;
				if (room > 0) {
					this.kernErr.push(d.subarray(0, room));
					this.kernErrSize += Math.min(room, d.length);
				}
			},
		}, p, spawner);
		this.reader = new frames.FrameReader(this.box.readers[0].s, o.replyLimit);
		this.isIdle = false;
		this.startedAt = performance.now();
	}

	/**
	 * Start the box once its pipes are made.
	 * @param {ConstructorParameters<typeof DriverBox>[0]} o
	 */
	static async start(o) {
		const spawner = await spawnerFor(o.kern);
		return new DriverBox(o, await pipes(BoxProcess.pipeCount({ stdin: true, alive: false }, spawner !== null), spawner), spawner);
	}

	/**
	 * An idle driver box does not keep the process alive: a script that
	 * ends without close() exits, the box's stdin closes with it and the
	 * driver ends. A box is busy (keeps it alive) while a cell runs.
	 * @param {boolean} on
	 */
	idle(on) {
		this.isIdle = on;
		if (on) this.box.unref();
		else this.box.ref();
	}

	kernStderr() {
		return Buffer.concat(this.kernErr).toString("utf8");
	}

	/**
	 * Wait for {"hello": 1}: null when it came, else the failure kind.
	 * @param {number} timeoutMs
	 */
	async waitHello(timeoutMs) {
		try {
			const msg = frames.decode(await this.reader.read(performance.now() + timeoutMs));
			return frames.isHello(msg) ? null : "malformed";
		} catch (e) {
			return e instanceof frames.FrameError && (e.kind === "timeout" || e.kind === "eof") ? e.kind : "malformed";
		}
	}

	/**
	 * Send one cell and read until its reply, the deadline or the end.
	 * @param {string} code @param {number} timeoutS
	 * @param {import("./spawn.cjs").Capture} [stdout] streamed {o} frames go here
	 * @param {import("./spawn.cjs").Capture} [stderr]
	 * @returns {Promise<Cell>}
	 */
	async call(code, timeoutS, stdout, stderr) {
		const wasIdle = this.isIdle;
		if (wasIdle) this.idle(false);
		try {
			return await this.#call(code, timeoutS, stdout, stderr);
		} finally {
			if (wasIdle) this.idle(true);
		}
	}

	/**
	 * @param {string} code @param {number} timeoutS
	 * @param {import("./spawn.cjs").Capture} [stdout] @param {import("./spawn.cjs").Capture} [stderr]
	 * @returns {Promise<Cell>}
	 */
	async #call(code, timeoutS, stdout, stderr) {
		const t0 = performance.now();
		const deadline = t0 + timeoutS * 1000;
		/** @type {Cell} */
		const cell = { reply: null, failure: null, detail: "", stdout: Buffer.alloc(0), stderr: Buffer.alloc(0), streamedCut: false, durationMs: 0 };
		/** @type {Buffer[][]} */
		const got = [[], []];
		const size = [0, 0];
		try {
			const stdin = /** @type {import("node:net").Socket} */ (this.box.stdin);
			if (stdin.destroyed || !stdin.writable) throw new frames.FrameError("eof", "the kernel stopped reading");
			stdin.write(frames.encode(Buffer.from(code, "utf8")));
			for (;;) {
				const msg = frames.decode(await this.reader.read(deadline));
				const chunk = frames.streamText(msg);
				if (chunk === null) {
					cell.reply = frames.parseReply(msg);
					break;
				}
				const [kind, text] = chunk;
				const data = Buffer.from(text, "utf8");
				const i = kind === "o" ? 0 : 1;
				const room = this.outCap - size[i];
				if (room < data.length) cell.streamedCut = true;
				if (room > 0) {
					got[i].push(data.subarray(0, room));
					size[i] += Math.min(room, data.length);
				}
				const cap = kind === "o" ? stdout : stderr;
				if (cap && cap.callback) cap.feed(data);
			}
		} catch (e) {
			if (!(e instanceof frames.FrameError)) throw e;
			cell.failure = e.kind;
			cell.detail = e.message;
		}
		cell.stdout = Buffer.concat(got[0]);
		cell.stderr = Buffer.concat(got[1]);
		cell.durationMs = Math.round(performance.now() - t0);
		return cell;
	}

	/** SIGKILL kern's process group: kern drops the box by itself. */
	kill() {
		this.box.killGroup();
	}

	/** `kern stop NAME`, then SIGKILL the process group (see BoxProcess.stop). */
	stop() {
		return this.box.stop();
	}

	/**
	 * Close the box's stdin (the driver exits), wait up to graceMs, then stop
	 * and kill it; reap kern and close every descriptor.
	 * @param {number} graceMs
	 */
	async end(graceMs) {
		this.idle(false);
		// A pipe has no half-close: closing our end is what gives the driver EOF.
		this.box.stdin?.destroy();
		if (!(await this.box.wait(graceMs))) await this.box.stop();
		await this.reapKilled();
	}

	/**
	 * After kill() or stop(): reap kern and close every descriptor. (A
	 * SIGKILLed kern leaves its scratch to `kern recover`: stop() runs it,
	 * the pool runs it once when it closes.)
	 */
	async reapKilled() {
		this.idle(false);
		if (!(await this.box.wait(EXIT_WAIT_MS))) {
			this.box.killGroup();
			await this.box.wait(null);
		}
		await this.box.join();
	}

	/**
	 * The channel broke: let kern finish, read its outcome bytes and exit
	 * status. A kern that does not exit in time is killed (and then reports
	 * no bytes).
	 * @returns {Promise<import("./faults.cjs").Observation>}
	 */
	async observe() {
		this.idle(false);
		if (!(await this.box.wait(EXIT_WAIT_MS))) {
			await this.box.stop();
			if (!(await this.box.wait(EXIT_WAIT_MS))) {
				this.box.killGroup();
				await this.box.wait(null);
			}
		}
		await Promise.race([this.box.sideDone, sleep(OUTCOME_WAIT_MS)]);
		const started = this.box.started.bytes();
		await this.box.join();
		const st = this.box.status;
		return {
			exitCode: st ? exitStatus(st.code, st.signal) : 137,
			started,
			stderr: this.kernStderr(),
			memoryMb: this.memoryMb,
		};
	}
}

/**
 * Why the driver stopped answering (§12), in this order: OOM, a blocked
 * system call, a crash of python3, a box that never started, and otherwise
 * a kill. `oneCall` (a pool box) treats a clean exit as the cell's own
 * exit status, as a one-shot run would report it.
 * @param {import("./faults.cjs").Observation} observation @param {{oneCall: boolean}} opts
 * @returns {Death}
 */
function classifyDeath(observation, { oneCall }) {
	const obs = normalise(observation);
	const started = obs.started;
	const signal = started.length > 3 ? started[3] : null;
	if (isOom(obs)) return { fault: oomFault(obs), raises: false, exitCode: 137, note: "" };
	if (signal === SIGSYS) {
		const msg = "a system call the sandbox forbids was blocked: the seccomp filter killed the kernel with SIGSYS";
		return { fault: new SandboxFault("escape_blocked", msg), raises: false, exitCode: 159, note: "" };
	}
	if (signal !== null && CRASH_SIGNALS[signal]) {
		const note = `kern-sandbox: the kernel's python3 crashed with ${CRASH_SIGNALS[signal]} (signal ${signal}); its in-memory state is lost`;
		return { fault: null, raises: false, exitCode: 128 + signal, note };
	}
	if (started.length === 0 && kernIsSpeaking(obs.stderr)) return { fault: startupFault(obs.stderr), raises: true, exitCode: obs.exitCode, note: "" };
	if (signal === 0 && started.length > 3) {
		if (oneCall) return { fault: null, raises: false, exitCode: obs.exitCode, note: "" };
		const msg =
			`the kernel's python3 exited (status ${obs.exitCode}) while the cell ran: os._exit(), a thread that ended ` +
			"the process, or a fatal interpreter error; its in-memory state is lost";
		return { fault: new SandboxFault("killed", msg), raises: false, exitCode: obs.exitCode, note: "" };
	}
	if (obs.exitCode === 137 || signal === SIGKILL || started.length === 0) return { fault: killedFault(obs), raises: false, exitCode: 137, note: "" };
	// Python prints a missing signal as None.
	const msg = `the kernel ended with exit status ${obs.exitCode} (signal ${signal === null ? "None" : signal}) without answering`;
	return { fault: new SandboxFault("killed", msg), raises: false, exitCode: obs.exitCode, note: "" };
}

module.exports = { DriverBox, classifyDeath, driverSource, RESULTS_CAP, CRASH_SIGNALS };
