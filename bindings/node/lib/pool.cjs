"use strict";
// prewarm=N: boxes started before the calls that use them
// (python-binding.md §13; the Python package's pool.py). Each pooled box
// runs the kernel driver (`python3 -c`, so no cell can rewrite it) and is
// ready once it says {"hello": 1}: a booted interpreter that has run
// nothing. A call takes one, sends its code as the only cell, and the box
// is then destroyed with SIGKILL to kern's process group; kern drops its
// record by itself. Isolation is the one-shot run's: only the moment the
// box is created moves. A background loop keeps the pool full; a call
// that finds it empty starts a cold box rather than wait.
//
// A pooled box is used only when its key (the box's whole configuration,
// kern's environment and, with profiles, kern's resolved view of them)
// matches the call's, the call's deadline fits the budget the box was
// started with, and the box is younger than 300 s.

const fs = require("node:fs");
const { configKey } = require("./boxkey.cjs");
const { DriverBox, classifyDeath, driverSource, RESULTS_CAP } = require("./driverbox.cjs");
const { replyCap } = require("./frames.cjs");
const { kernRecover, sleep } = require("./spawn.cjs");
const { fmtSeconds, splitStderr } = require("./faults.cjs");
const { ExecutionResult, Result, SandboxFault } = require("./results.cjs");

const MAX_AGE_MS = 300 * 1000;
const HELLO_TIMEOUT_MS = 120 * 1000;
// Backoff when boxes fail to start (an image without python3, a kern that
// refuses the configuration): the pool must not spin.
const BACKOFF_FIRST_MS = 1000;
const BACKOFF_MAX_MS = 30 * 1000;

/** kern --timeout of a pooled box: its whole life, then the call's deadline. @param {number} budgetS */
const kernTimeout = (budgetS) => 300 + Math.trunc(budgetS) + 5;

/**
 * @typedef {import("./boxkey.cjs").KeySession & {writeEnvFile: (withPyc: boolean) => string}} PoolSession
 */

/**
 * @typedef {{box: DriverBox, key: string, budgetS: number, born: number}} PoolBox
 */

class Pool {
	/** @param {PoolSession} session @param {number} size */
	constructor(session, size) {
		this.session = session;
		this.size = size;
		/** @type {PoolBox[]} */
		this.ready = [];
		this.starting = 0;
		this.closed = false;
		this.served = 0;
		/** @type {Set<Promise<void>>} used boxes being reaped */
		this.graves = new Set();
		/** @type {(() => void) | null} */
		this.wakeUp = null;
		this.loop = this.fill();
	}

	wake() {
		const w = this.wakeUp;
		this.wakeUp = null;
		if (w) w();
	}

	/** The session's box key (boxkey.cjs). @param {number} budgetS */
	key(budgetS) {
		return configKey(this.session, budgetS);
	}

	/** Keep the pool full until close(). */
	async fill() {
		let backoff = BACKOFF_FIRST_MS;
		while (!this.closed) {
			const now = performance.now();
			// Past their age, or killed from outside while they waited.
			const stale = this.ready.filter((b) => now - b.born >= MAX_AGE_MS || gone(b));
			this.ready = this.ready.filter((b) => !stale.includes(b));
			discard(stale, this.graves);
			const need = this.size - this.ready.length - this.starting;
			if (need <= 0) {
				const wait = this.ready.length ? Math.max(100, this.ready[0].born + MAX_AGE_MS - now) : MAX_AGE_MS;
				await new Promise((resolve) => {
					this.wakeUp = () => resolve(undefined);
					setTimeout(resolve, wait).unref();
				});
				continue;
			}
			this.starting += need;
			let started = [];
			try {
				started = await this.start(need);
			} finally {
				this.starting -= need;
			}
			if (this.closed) {
				discard(started, this.graves);
				return;
			}
			this.ready.push(...started);
			if (!started.length) {
				await sleep(backoff);
				backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
			} else backoff = BACKOFF_FIRST_MS;
		}
	}

	/**
	 * Start n boxes side by side; the ones that said hello.
	 * @param {number} n @returns {Promise<PoolBox[]>}
	 */
	async start(n) {
		const s = this.session;
		const cfg = s.cfg;
		const budget = cfg.timeoutS;
		let key;
		try {
			key = await this.key(budget);
		} catch {
			return []; // the Sandbox is closing under us
		}
		// One-call mode: after its reply the driver kills whatever the cell
		// left running in the box and stops itself, so nothing of the call
		// runs on until the box is killed.
		const source = driverSource(cfg.maxOutputBytes, RESULTS_CAP, true, true);
		/** @type {{box: DriverBox, born: number}[]} */
		const pending = [];
		for (let i = 0; i < n; i++) {
			let envFile;
			try {
				envFile = s.writeEnvFile(s.withPyc());
				const argv = s.argv(["python3", "-c", source], budget, { envFile, kernTimeout: kernTimeout(budget) });
				const name = argv[1];
				const box = await DriverBox.start({
					kern: s.kern().path,
					argv,
					name,
					env: s.kernEnv(),
					outCap: cfg.maxOutputBytes,
					replyLimit: replyCap(cfg.maxOutputBytes, RESULTS_CAP),
					memoryMb: cfg.memoryMb,
				});
				box.idle(true);
				pending.push({ box, born: performance.now() });
			} catch {
				break;
			}
		}
		/** @type {PoolBox[]} */
		const ready = [];
		await Promise.all(
			pending.map(async ({ box, born }) => {
				const failure = await box.waitHello(HELLO_TIMEOUT_MS);
				if (failure === null) ready.push({ box, key, budgetS: budget, born });
				else {
					box.kill();
					await box.reapKilled();
				}
			}),
		);
		return ready;
	}

	/**
	 * A ready box for a call with this deadline, or null (go cold).
	 * @param {number} limitS @returns {Promise<PoolBox | null>}
	 */
	async take(limitS) {
		if (this.closed || !this.ready.length) return null;
		const key = await this.key(this.session.cfg.timeoutS);
		const now = performance.now();
		// A box killed while it waited (a killpg from outside) would fail the
		// call with a fault its code never caused: dropped with the stale.
		const stale = this.ready.filter((b) => b.key !== key || gone(b));
		this.ready = this.ready.filter((b) => !stale.includes(b));
		const found = this.ready.find((b) => limitS <= b.budgetS && now - b.born < MAX_AGE_MS) || null;
		if (found) this.ready = this.ready.filter((b) => b !== found);
		discard(stale, this.graves);
		if (stale.length || found) this.wake();
		return found;
	}

	/**
	 * Run `code` as the only cell of a pooled box and destroy the box.
	 * @param {PoolBox} pooled @param {string} code @param {number} limitS
	 * @param {AbortSignal} [signal] kills the box: the call rejects with its reason
	 */
	async serve(pooled, code, limitS, signal) {
		const box = pooled.box;
		box.idle(false);
		const onAbort = () => box.kill();
		if (signal) signal.addEventListener("abort", onAbort, { once: true });
		let cell;
		try {
			cell = await box.call(code, limitS);
		} finally {
			signal?.removeEventListener("abort", onAbort);
		}
		/** @type {import("./driverbox.cjs").Death | null} */
		let death = null;
		if (cell.reply === null && cell.failure === "eof") death = classifyDeath(await box.observe(), { oneCall: true });
		else {
			box.kill();
			if (cell.failure === "timeout") {
				death = { fault: new SandboxFault("timeout", `exceeded the ${fmtSeconds(limitS)}s time limit (killed by the binding)`), raises: false, exitCode: 137, note: "" };
			} else if (cell.failure !== null) {
				death = { fault: new SandboxFault("killed", `the box sent a reply the binding refuses (${cell.detail}); it was killed`), raises: false, exitCode: 137, note: "" };
			}
		}
		const kernStderr = box.kernStderr();
		if (cell.failure !== "eof") {
			const reaped = box.reapKilled().then(() => {
				this.graves.delete(reaped);
			});
			this.graves.add(reaped);
		}
		this.served++;
		return result(cell, death, kernStderr);
	}

	/** Kill every pooled box, then let `kern recover` sweep what the killed supervisors left. */
	async close() {
		if (this.closed) return;
		this.closed = true;
		const boxes = this.ready;
		this.ready = [];
		this.wake();
		discard(boxes, this.graves);
		await Promise.race([this.loop, sleep(HELLO_TIMEOUT_MS + 10000)]);
		await Promise.all([...this.graves]);
		const s = this.session;
		await kernRecover(s.kern().path, s.kernEnv());
	}

	readyCount() {
		return this.ready.length;
	}
}

/** @param {PoolBox[]} boxes @param {Set<Promise<void>>} graves */
function discard(boxes, graves) {
	for (const b of boxes) {
		b.box.kill();
		const reaped = b.box.reapKilled().then(() => {
			graves.delete(reaped);
		});
		graves.add(reaped);
	}
}

/**
 * A pooled call's result, shaped like a one-shot run's: kern's lines first
 * in stderr, then the program's.
 * @param {import("./driverbox.cjs").Cell} cell @param {import("./driverbox.cjs").Death | null} death @param {string} kernStderr
 */
function result(cell, death, kernStderr) {
	let out;
	let err;
	let rc;
	/** @type {Result[]} */
	let results = [];
	let truncated;
	/** @type {SandboxFault | null} */
	let fault = null;
	if (cell.reply) {
		({ stdout: out, stderr: err, rc } = cell.reply);
		results = cell.reply.results.map((b) => new Result(b));
		truncated = cell.reply.trunc;
	} else {
		const d = /** @type {import("./driverbox.cjs").Death} */ (death);
		out = cell.stdout.toString("utf8");
		err = cell.stderr.toString("utf8");
		rc = d.exitCode;
		truncated = cell.streamedCut;
		fault = d.fault;
		if (d.note) err += `${!err || err.endsWith("\n") ? "" : "\n"}${d.note}\n`;
	}
	if (kernStderr) err = `${kernStderr}${kernStderr.endsWith("\n") ? "" : "\n"}${err}`;
	const split = splitStderr(err);
	return new ExecutionResult({
		stdout: out,
		stderr: err,
		exitCode: rc,
		durationMs: cell.durationMs,
		fault,
		results,
		truncated,
		codeStderr: split.codeStderr,
		runtimeNotes: split.runtimeNotes,
	});
}

/**
 * kern of a pooled box has exited. Node learns of an exit only when its
 * event loop next polls, after the call may have taken the box: an exit
 * it has not reported yet shows as a zombie (state Z) in /proc, unreaped.
 * @param {PoolBox} b
 */
function gone(b) {
	const proc = b.box.box;
	if (proc.exitCode !== null) return true;
	try {
		const stat = fs.readFileSync(`/proc/${proc.child.pid}/stat`, "latin1");
		const state = stat.charAt(stat.lastIndexOf(")") + 2);
		return state === "Z" || state === "X";
	} catch {
		return true;
	}
}

module.exports = { Pool, kernTimeout, MAX_AGE_MS };
