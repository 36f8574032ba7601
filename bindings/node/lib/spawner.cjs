"use strict";
// Starting kern without forking Node: `kern spawner` (man kern-spawner).
//
// child_process.spawn fork()s the whole Node process and blocks the event
// loop until the child has exec'd, about 4 ms per start here against 1 ms
// for Python's vfork (README, Measured). kern >= 0.31 has a resident
// spawner: one small process per kern binary, started once, that
// posix_spawn()s what we ask for on its stdin and answers on its stdout.
// The event loop only writes a request. A kern without it (it does not
// greet) and any failure of the spawner itself fall back to
// child_process.spawn, with the same behaviour.
//
// The child's descriptors 0-4 are given as paths the spawner opens:
// /proc/<our pid>/fd/<n> for a pipe end we hold (a new open of the same
// pipe), or "-" for /dev/null (0-2) or closed (3-4). Our copies stay open
// until the spawner says the child runs ("S"), then the caller closes them.
// The child gets a session of its own, as with `detached: true`.

const os = require("node:os");
const { spawn } = require("node:child_process");
const { EventEmitter } = require("node:events");

const GREETING = "kern-spawner 1";
// Set to 0 to start every kern with child_process.spawn (a comparison run).
const DISABLED = process.env.KERN_SANDBOX_SPAWNER === "0";

/**
 * A process the spawner started: the part of ChildProcess that BoxProcess
 * uses (pid, ref/unref, "spawn", "exit" and "error" events).
 */
class SpawnedChild extends EventEmitter {
	/** @param {Spawner} owner */
	constructor(owner) {
		super();
		this.owner = owner;
		/** @type {number | undefined} */
		this.pid = undefined;
		this.referenced = true;
		// Counted in the owner's refs until it is reported (exit or error).
		this.live = true;
		/** @type {(() => void) | null} our copies of its descriptors may close now */
		this.onRunning = null;
		/** @type {ReturnType<typeof setInterval> | null} after the spawner died: polls its pid */
		this.watch = null;
	}

	ref() {
		if (!this.referenced) {
			this.referenced = true;
			if (this.live) this.owner.adjust(1);
			this.watch?.ref();
		}
	}

	unref() {
		if (this.referenced) {
			this.referenced = false;
			if (this.live) this.owner.adjust(-1);
			this.watch?.unref();
		}
	}

	/** Its descriptors are the child's now (or it never ran): let ours go, once. */
	release() {
		const f = this.onRunning;
		this.onRunning = null;
		f?.();
	}
}

class Spawner {
	/** @param {string} kern */
	constructor(kern) {
		this.kern = kern;
		this.proc = spawn(kern, ["spawner"], { stdio: ["pipe", "pipe", "ignore"] });
		this.seq = 0;
		/** @type {Map<string, SpawnedChild>} */
		this.children = new Map();
		this.refs = 0;
		this.dead = false;
		this.greeted = false;
		this.buf = "";
		/** @type {(ok: boolean) => void} */
		let settle = () => undefined;
		/** @type {Promise<boolean>} it greeted: the binary has the spawner */
		this.ready = new Promise((resolve) => {
			settle = resolve;
		});
		this.settle = settle;
		const out = /** @type {import("node:stream").Readable} */ (this.proc.stdout);
		out.setEncoding("latin1");
		out.on("data", (d) => this.data(d));
		out.on("error", () => undefined);
		out.on("close", () => this.died());
		/** @type {import("node:stream").Writable} */ (this.proc.stdin).on("error", () => undefined);
		this.proc.on("error", () => this.died());
		this.proc.on("exit", () => this.died());
		// Its own exit never keeps us alive; its stdout does while we wait
		// for the greeting, and while any referenced child lives: the
		// answers we wait for (started, exited) come only through it. A
		// child is referenced unless its owner unref'd it (an idle kernel
		// or pooled box, a background build) and nobody awaits its end
		// (BoxProcess refs it for every wait()). With no child left, or
		// only idle ones, it is unref'd and the process may end.
		this.proc.unref();
		this.adjust(1);
		this.ready.then(() => this.adjust(-1));
	}

	/** @param {number} d */
	adjust(d) {
		this.refs += d;
		if (this.dead) return;
		const out = /** @type {import("node:net").Socket} */ (/** @type {unknown} */ (this.proc.stdout));
		const inp = /** @type {import("node:net").Socket} */ (/** @type {unknown} */ (this.proc.stdin));
		if (this.refs > 0) out.ref();
		else {
			out.unref();
			inp.unref();
		}
	}

	/** @param {string} d */
	data(d) {
		this.buf += d;
		for (let nl = this.buf.indexOf("\n"); nl !== -1; nl = this.buf.indexOf("\n")) {
			const line = Buffer.from(this.buf.slice(0, nl), "latin1").toString("utf8");
			this.buf = this.buf.slice(nl + 1);
			this.line(line);
		}
	}

	/** @param {string} line */
	line(line) {
		if (!this.greeted) {
			this.greeted = line === GREETING;
			this.settle(this.greeted);
			if (!this.greeted) this.proc.kill("SIGKILL");
			return;
		}
		const [kind, id, ...rest] = line.split(" ");
		const c = this.children.get(id);
		if (!c) return;
		if (kind === "S") {
			c.pid = Number(rest[0]);
			c.release();
			c.emit("spawn");
		} else if (kind === "X") {
			const n = Number(rest[1]);
			this.finish(id, c, rest[0] === "exit" ? n : null, rest[0] === "signal" ? signalName(n) : null);
		} else if (kind === "F") {
			this.forget(id, c);
			c.emit("error", new Error(rest.join(" ")));
		}
	}

	/** @param {string} id @param {SpawnedChild} c */
	forget(id, c) {
		c.release();
		this.children.delete(id);
		if (c.live && c.referenced) this.adjust(-1);
		c.live = false;
	}

	/** @param {string} id @param {SpawnedChild} c @param {number | null} code @param {string | null} signal */
	finish(id, c, code, signal) {
		this.forget(id, c);
		c.emit("exit", code, signal);
	}

	/**
	 * The spawner is gone (killed from outside: by itself it ends only
	 * after we close its stdin). Later starts fall back to
	 * child_process.spawn. The children it started run on, reparented,
	 * and their exit status is lost with it: each is watched until its
	 * pid is gone, then fails with an error that says so (never a made-up
	 * status, which would be classified as a fault of the code).
	 */
	died() {
		if (this.dead) return;
		this.dead = true;
		this.settle(false);
		if (spawners.get(this.kern) === this) spawners.set(this.kern, null);
		for (const [id, c] of this.children) {
			const pid = c.pid;
			const lost = () => {
				this.forget(id, c);
				c.emit("error", new Error(pid === undefined ? "kern spawner exited before it started it" : `kern spawner exited; the exit status of pid ${pid} went with it`));
			};
			if (pid === undefined) {
				lost();
				continue;
			}
			c.release();
			// Referenced as the child is (a waiting caller refs it): the
			// spawner's stdout, which carried that, is gone.
			c.watch = setInterval(() => {
				try {
					process.kill(pid, 0);
				} catch {
					if (c.watch) clearInterval(c.watch);
					c.watch = null;
					lost();
				}
			}, 100);
			if (!c.referenced) c.watch.unref();
		}
	}

	/**
	 * Ask for one process; throws (as child_process.spawn does) for a NUL
	 * in an argument or the environment.
	 * @param {string} file @param {string[]} args after argv[0] (= file)
	 * @param {Record<string, string | undefined>} env
	 * @param {(number | null)[]} fds ours, for its descriptors 0-4 (null: /dev/null or closed)
	 * @param {string | null} cwd
	 * @param {() => void} onRunning our copies of fds may close now
	 */
	start(file, args, env, fds, cwd, onRunning) {
		const envList = [];
		for (const [k, v] of Object.entries(env)) if (v !== undefined && k !== "" && !k.includes("=")) envList.push(`${k}=${v}`);
		const argv = [file, ...args];
		for (const s of [...argv, ...envList, cwd || ""])
			if (s.includes("\0")) throw new TypeError("arguments, environment and cwd must not contain NUL bytes");
		const id = String(this.seq++);
		const c = new SpawnedChild(this);
		c.onRunning = onRunning;
		this.children.set(id, c);
		this.adjust(1);
		const paths = fds.map((fd) => (fd === null ? "-" : `/proc/${process.pid}/fd/${fd}`));
		const fields = ["spawn", id, ...paths, cwd || "-", String(argv.length), String(envList.length), file, ...argv, ...envList];
		const body = Buffer.from(fields.map((f) => `${f}\0`).join(""), "utf8");
		/** @type {import("node:stream").Writable} */ (this.proc.stdin).write(Buffer.concat([Buffer.from(`${body.length}\n`), body]));
		return c;
	}
}

/** @param {number} n */
function signalName(n) {
	const found = Object.entries(os.constants.signals).find(([, v]) => v === n);
	return found ? found[0] : "SIGKILL";
}

/** @type {Map<string, Spawner | null>} kern path -> its spawner (null: it has none) */
const spawners = new Map();

/**
 * The spawner of this kern binary, started on first use; null when the
 * binary has none (probed once per path) or it died.
 * @param {string} kern @returns {Promise<Spawner | null>}
 */
async function spawnerFor(kern) {
	if (DISABLED || !kern.startsWith("/")) return null;
	let s = spawners.get(kern);
	if (s === null) return null;
	if (s === undefined) {
		try {
			s = new Spawner(kern);
		} catch {
			spawners.set(kern, null);
			return null;
		}
		spawners.set(kern, s);
	}
	if (!(await s.ready) || s.dead) {
		spawners.set(kern, null);
		return null;
	}
	return s;
}

/**
 * What spawnerFor() would answer, known now: the spawner when it has
 * greeted, null when there is none; undefined while that is not known yet
 * (ask spawnerFor()).
 * @param {string} kern @returns {Spawner | null | undefined}
 */
function spawnerNow(kern) {
	if (DISABLED || !kern.startsWith("/")) return null;
	const s = spawners.get(kern);
	if (s === null) return null;
	if (s && s.greeted && !s.dead) return s;
	return undefined;
}

module.exports = { spawnerFor, spawnerNow, SpawnedChild, Spawner };
