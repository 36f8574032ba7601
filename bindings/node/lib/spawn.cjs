"use strict";
// Running kern (python-binding.md §9): the argv, a session of its own (so
// the whole group can be killed), stdout and stderr on real pipes, the
// outcome bytes of KERN_STARTED_FD and the readiness byte of KERN_ALIVE_FD,
// and, for a one-shot call, output capped at maxOutputBytes per stream and
// the binding's own deadline, which stops the box from outside.

const net = require("node:net");
const os = require("node:os");
const { spawn, execFile } = require("node:child_process");
const { pipes, pipesNow, closeQuietly } = require("./pipes.cjs");
const { spawnerFor, spawnerNow } = require("./spawner.cjs");
const { SandboxError } = require("./errors.cjs");

// Descriptor numbers in the kern process.
const STARTED_FD = 3;
const ALIVE_FD = 4;
const STOP_BUDGET_MS = 5000;
// After `kern stop`, how long kern gets to finish its own teardown (remove
// its record, scratch and cgroups) before SIGTERM and then SIGKILL.
const TEARDOWN_MS = 1000;
const JOIN_MS = 8000;
// Chunks held for a callback that is still busy with an earlier one
// (it returned a promise); beyond this they are dropped for it.
const CALLBACK_BACKLOG = 256;

/**
 * One output stream: bytes up to the cap, the rest read and thrown away,
 * and a best-effort feed to a callback.
 */
class Capture {
	/** @param {number} cap @param {((chunk: Buffer) => unknown) | undefined | null} callback */
	constructor(cap, callback) {
		this.cap = cap;
		this.size = 0;
		/** @type {Buffer[]} */
		this.chunks = [];
		this.truncated = false;
		this.callback = callback || null;
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

	/**
	 * Hand a chunk to the callback. A callback that returns a promise is
	 * busy until it settles; chunks meanwhile wait in a bounded backlog and
	 * are dropped for the callback (never for the result) past it.
	 * @param {Buffer} chunk
	 */
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
 * `kern recover`: reclaim what a SIGKILLed kern left (it never touches a
 * live box). Its result is ignored.
 * @param {string} kern @param {Record<string, string | undefined>} env
 */
function kernRecover(kern, env) {
	return new Promise((resolve) => {
		execFile(kern, ["recover"], { timeout: STOP_BUDGET_MS, env, killSignal: "SIGKILL" }, () => resolve(undefined));
	});
}

/**
 * Read a descriptor we own to its end; with no onData the caller reads it.
 * @param {number} fd @param {((d: Buffer) => void) | null} onData
 */
function readEnd(fd, onData) {
	const s = new net.Socket({ fd, readable: true, writable: false });
	if (onData) s.on("data", onData);
	/** @type {Promise<void>} */
	const done = new Promise((resolve) => {
		s.on("close", () => resolve());
		s.on("error", () => s.destroy());
	});
	return { s, done };
}

/**
 * Read a stream libuv made to its end.
 * @param {import("node:stream").Readable} s @param {(d: Buffer) => void} onData
 */
function readStream(s, onData) {
	s.on("data", onData);
	/** @type {Promise<void>} */
	const done = new Promise((resolve) => {
		s.on("close", () => resolve());
		s.on("error", () => s.destroy());
	});
	return { s, done };
}

/**
 * One kern process: its pipes, its outcome bytes and its end.
 */
class BoxProcess {
	/** unref()'d by its owner */
	#idle = false;
	/** callers in wait() or join() */
	#waiters = 0;
	/** what the handles were last set to */
	#referenced = true;

	/**
	 * @param {object} o
	 * @param {string} o.kern
	 * @param {string[]} o.argv
	 * @param {Record<string, string | undefined>} o.env
	 * @param {string | null} o.name the box, for `kern stop`
	 * @param {boolean} [o.stdin] a pipe on stdin (else /dev/null)
	 * @param {boolean} [o.alive] pass KERN_ALIVE_FD
	 * @param {boolean} [o.execClient] a `kern exec` client: stopping it kills
	 *   its process group only (`kern stop` would end the whole resident box)
	 * @param {((d: Buffer) => void) | null} o.onStdout null: read `readers[0].s` yourself
	 * @param {(d: Buffer) => void} o.onStderr
	 * @param {{r: number, w: number}[]} p pipes for stdout, stderr, (with
	 *   o.stdin) stdin, and with a spawner the outcome and (with o.alive)
	 *   alive pipes: BoxProcess.pipeCount()
	 * @param {import("./spawner.cjs").Spawner | null} [spawner] start kern
	 *   through it (lib/spawner.cjs), else with child_process.spawn
	 */
	constructor(o, p, spawner = null) {
		this.kern = o.kern;
		this.name = o.name;
		this.execClient = Boolean(o.execClient);
		this.env = o.env;
		const [out, err, ...more] = p;
		const inp = o.stdin ? /** @type {{r: number, w: number}} */ (more.shift()) : null;
		// libuv makes the side pipes itself; the spawner is given ours.
		const started = spawner ? /** @type {{r: number, w: number}} */ (more.shift()) : null;
		const alive = spawner && o.alive ? /** @type {{r: number, w: number}} */ (more.shift()) : null;
		/** @type {Record<string, string | undefined>} */
		const env = { ...o.env, KERN_STARTED_FD: String(STARTED_FD) };
		if (o.alive) env.KERN_ALIVE_FD = String(ALIVE_FD);
		else delete env.KERN_ALIVE_FD;
		// The box's ends, which it gets as descriptors 0-2 (and 3-4).
		const given = [inp ? inp.r : null, out.w, err.w];
		const release = () => {
			for (const fd of given) if (fd !== null) closeQuietly(fd);
		};
		try {
			if (spawner) {
				given.push(/** @type {{r: number, w: number}} */ (started).w, alive ? alive.w : null);
				this.child = spawner.start(o.kern, o.argv, env, given, null, release);
			} else {
				this.child = spawn(o.kern, o.argv, {
					stdio: [given[0] === null ? "ignore" : given[0], out.w, err.w, "pipe", o.alive ? "pipe" : "ignore"],
					env,
					detached: true, // a session and process group of its own
				});
				release();
			}
		} catch (e) {
			for (const p of [out, err, inp, started, alive]) if (p) for (const fd of [p.r, p.w]) closeQuietly(fd);
			throw new SandboxError(`spawn ${o.kern}: ${/** @type {Error} */ (e).message}`);
		}
		/** @type {net.Socket | null} */
		this.stdin = null;
		if (inp) {
			this.stdin = new net.Socket({ fd: inp.w, readable: false, writable: true });
			this.stdin.on("error", () => undefined); // a write to a dead box: the reader sees EOF
		}
		this.readers = [readEnd(out.r, o.onStdout), readEnd(err.r, o.onStderr)];
		this.started = new Capture(4, null);
		this.aliveBytes = "";
		this.aliveEnded = !o.alive;
		const onStarted = (/** @type {Buffer} */ d) => this.started.add(d);
		const onAlive = (/** @type {Buffer} */ d) => {
			this.aliveBytes += d.toString("latin1");
		};
		/** @type {{s: import("node:net").Socket | import("node:stream").Readable, done: Promise<void>}[]} */
		const side = [];
		if (started) side.push(readEnd(started.r, onStarted));
		else side.push(readStream(/** @type {import("node:stream").Readable} */ (/** @type {import("node:child_process").ChildProcess} */ (this.child).stdio[STARTED_FD]), onStarted));
		if (alive) side.push(readEnd(alive.r, onAlive));
		else if (o.alive) side.push(readStream(/** @type {import("node:stream").Readable} */ (/** @type {import("node:child_process").ChildProcess} */ (this.child).stdio[ALIVE_FD]), onAlive));
		if (o.alive)
			/** @type {Promise<void>} */ (side[1].done).then(() => {
				this.aliveEnded = true;
			});
		this.side = side.map((r) => r.s);
		this.sideDone = Promise.all(side.map((r) => r.done));
		/** @type {{code: number | null, signal: string | null} | null} */
		this.status = null;
		/** @type {Promise<{code: number | null, signal: string | null}>} */
		this.exited = new Promise((resolve, reject) => {
			this.child.on("exit", (code, signal) => {
				this.status = { code, signal };
				resolve(this.status);
			});
			this.child.on("error", (e) => reject(new SandboxError(`spawn ${o.kern}: ${e.message}`)));
		});
		this.exited.catch(() => undefined);
		/** @type {Promise<void> | null} */
		this.stopping = null;
		this.killed = false;
	}

	/**
	 * Start kern once its pipes are made.
	 * @param {ConstructorParameters<typeof BoxProcess>[0]} o
	 */
	static async start(o) {
		const spawner = await spawnerFor(o.kern);
		return new BoxProcess(o, await pipes(BoxProcess.pipeCount(o, spawner !== null), spawner), spawner);
	}

	/**
	 * Start kern now, without a turn of the event loop, when the spawner
	 * question is settled and spare pipes are there; else null (start()).
	 * @param {ConstructorParameters<typeof BoxProcess>[0]} o
	 */
	static startNow(o) {
		const spawner = spawnerNow(o.kern);
		if (spawner === undefined) return null;
		const p = pipesNow(BoxProcess.pipeCount(o, spawner !== null), spawner);
		return p ? new BoxProcess(o, p, spawner) : null;
	}

	/**
	 * How many pipes a box takes: stdout, stderr, stdin (with o.stdin),
	 * and with a spawner the outcome and alive (with o.alive) pipes too.
	 * @param {{stdin?: boolean, alive?: boolean}} o @param {boolean} spawner
	 */
	static pipeCount(o, spawner) {
		return 2 + (o.stdin ? 1 : 0) + (spawner ? 1 + (o.alive ? 1 : 0) : 0);
	}

	/** kern's exit status, 128+N for a signal; null while it runs. */
	get exitCode() {
		return this.status ? exitStatus(this.status.code, this.status.signal) : null;
	}

	/**
	 * Signal kern's whole process group (the workload has a session of its
	 * own, so this reaches kern only).
	 * @param {NodeJS.Signals} [sig]
	 */
	killGroup(sig = "SIGKILL") {
		const pid = this.child.pid;
		if (this.status !== null) return;
		if (!pid) {
			// Not running yet: the spawner has not answered. On its answer.
			this.child.once("spawn", () => this.killGroup(sig));
			return;
		}
		if (sig === "SIGKILL") this.killed = true;
		for (const target of [-pid, pid]) {
			try {
				process.kill(target, sig);
			} catch {
				// already gone
			}
		}
	}

	/**
	 * Stop the box from outside, once: `kern stop NAME` (5 s); then kern
	 * gets a moment to finish its own teardown, SIGTERM, and finally
	 * SIGKILL. Then `kern recover`, which reclaims whatever a kern stopped
	 * mid-teardown left (its record, scratch directory, cgroups) and never
	 * touches a live box.
	 */
	stop() {
		if (!this.stopping && this.execClient) {
			this.killGroup();
			this.stopping = Promise.resolve();
		}
		if (!this.stopping) {
			this.stopping = (async () => {
				if (this.name && this.status === null) await kernStop(this.kern, this.name, this.env);
				if (!(await this.wait(TEARDOWN_MS))) {
					this.killGroup("SIGTERM");
					if (!(await this.wait(TEARDOWN_MS))) {
						this.killGroup("SIGKILL");
						await this.wait(STOP_BUDGET_MS);
					}
				}
				await kernRecover(this.kern, this.env);
			})();
		}
		return this.stopping;
	}

	/**
	 * Wait for kern's exit, at most `ms` (null: no bound).
	 * @param {number | null} ms @returns {Promise<boolean>} it exited
	 */
	wait(ms) {
		if (ms === null) return this.#awaited(this.exited.then(() => true));
		return this.#awaited(Promise.race([this.exited.then(() => true), sleep(ms).then(() => false)]));
	}

	/**
	 * Wait for the readers and the outcome pipe to reach EOF (the box's last
	 * process is gone), at most JOIN_MS; then let go of them whatever.
	 */
	async join() {
		const all = Promise.all([...this.readers.map((r) => r.done), this.sideDone]);
		const joined = await this.#awaited(Promise.race([all.then(() => true), sleep(JOIN_MS).then(() => false)]));
		if (!joined) this.destroy();
	}

	/**
	 * Keep the process alive until `p` settles, whatever unref() said: a
	 * caller waits for kern's end (or its pipes' EOF), and those arrive
	 * only through the child's handle (through kern spawner's stdout, see
	 * lib/spawner.cjs) and the readers. The timers of wait() and join() are
	 * unref'd, so without this a torn-down idle kernel whose `kern stop`
	 * returned before kern's exit was reported let the event loop end
	 * under the waiting caller.
	 * @template T @param {Promise<T>} p @returns {Promise<T>}
	 */
	async #awaited(p) {
		this.#waiters++;
		this.#applyRef();
		try {
			return await p;
		} finally {
			this.#waiters--;
			this.#applyRef();
		}
	}

	/** Let the process exit while this box runs and nobody waits for its end (a background build, an idle kernel). */
	unref() {
		this.#idle = true;
		this.#applyRef();
	}

	/** Keep the process alive while this box runs (the default). */
	ref() {
		this.#idle = false;
		this.#applyRef();
	}

	/** Referenced unless unref()'d with no caller in wait() or join(). */
	#applyRef() {
		const want = !this.#idle || this.#waiters > 0;
		if (want === this.#referenced) return;
		this.#referenced = want;
		const handles = [this.child, ...this.readers.map((r) => r.s), ...this.side, ...(this.stdin ? [this.stdin] : [])];
		for (const h of handles) {
			const s = /** @type {{ref(): void, unref(): void, destroyed?: boolean}} */ (/** @type {unknown} */ (h));
			// (a destroyed socket would queue the call for a connect that never comes)
			if (s.destroyed) continue;
			if (want) s.ref();
			else s.unref();
		}
	}

	/** Close every descriptor we hold. */
	destroy() {
		for (const r of this.readers) r.s.destroy();
		for (const s of this.side) s.destroy();
		if (this.stdin) this.stdin.destroy();
	}
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
 * @property {boolean} [execClient] see BoxProcess
 * @property {((chunk: Buffer) => unknown) | null} [onStdout]
 * @property {((chunk: Buffer) => unknown) | null} [onStderr]
 * @property {AbortSignal} [signal]
 */

/**
 * @typedef {object} RunOutcome
 * @property {number} exitCode 128+N for a signal
 * @property {Buffer} stdout
 * @property {Buffer} stderr
 * @property {boolean} truncated
 * @property {Buffer} started the outcome bytes (0 to 4)
 * @property {string} aliveBytes what the alive pipe carried (at the deadline, if it fired)
 * @property {boolean} aliveOpen the alive pipe was still open when the deadline fired
 * @property {boolean} deadlineFired
 * @property {boolean} aborted
 * @property {number} durationMs
 */

/**
 * Run one kern process to its end: deadline, readers, outcome bytes.
 * @param {RunOptions} o
 * @returns {Promise<RunOutcome>}
 */
async function runKern(o) {
	const t0 = process.hrtime.bigint();
	const stdout = new Capture(o.maxOutputBytes, o.onStdout);
	const stderr = new Capture(o.maxOutputBytes, o.onStderr);
	/** @type {ConstructorParameters<typeof BoxProcess>[0]} */
	const bo = {
		kern: o.kern,
		argv: o.argv,
		env: o.env,
		name: o.name,
		alive: o.alive,
		execClient: o.execClient,
		onStdout: (d) => stdout.add(d),
		onStderr: (d) => stderr.add(d),
	};
	// Started in this turn when it can be (see Sandbox #openWorkspace).
	const box = BoxProcess.startNow(bo) ?? (await BoxProcess.start(bo));
	let deadlineFired = false;
	let aborted = false;
	let aliveOpen = false;
	let aliveAtStop = "";
	const stop = () => {
		if (!box.stopping) {
			aliveOpen = !box.aliveEnded;
			aliveAtStop = box.aliveBytes;
		}
		return box.stop();
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
		status = await box.exited;
	} catch (e) {
		box.destroy();
		throw e;
	} finally {
		clearTimeout(timer);
		o.signal?.removeEventListener("abort", onAbort);
	}
	if (box.stopping) await box.stopping;
	await box.join();
	const stopped = deadlineFired || aborted;
	return {
		exitCode: exitStatus(status.code, status.signal),
		stdout: stdout.bytes(),
		stderr: stderr.bytes(),
		truncated: stdout.truncated || stderr.truncated,
		started: box.started.bytes(),
		aliveBytes: stopped ? aliveAtStop : box.aliveBytes,
		aliveOpen,
		deadlineFired,
		aborted,
		durationMs: Number((process.hrtime.bigint() - t0) / 1000000n),
	};
}

module.exports = { runKern, kernStop, kernRecover, BoxProcess, Capture, exitStatus, sleep, STARTED_FD, ALIVE_FD };
