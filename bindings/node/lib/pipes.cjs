"use strict";
// Real pipes for a box's stdio.
//
// Node gives a child UNIX socket pairs for `stdio: "pipe"`, and a workload
// whose stdout is a socket cannot open /dev/stdout (ENXIO), so `tee
// /dev/stderr` or Python's open("/dev/stdout") would fail here and work
// under the Python binding. kern passes fds 0-2 through untouched
// (box-cli.md §2), so the pipe has to be made here. Node has no pipe(2);
// a FIFO opened at both ends and unlinked at once is the same object: an
// anonymous pipe. FIFOs are made in batches (one `mkfifo` run) in a private
// 0700 directory that is removed again before the batch is used, so no
// name outlives the batch and nothing of it is left on disk. The next batch
// is made in the background while the last one is used, so a call seldom
// waits for `mkfifo`.

const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { spawn } = require("node:child_process");
const { SandboxError } = require("./errors.cjs");

const BATCH = 64;
const LOW = 24;
// The largest batch: one mkfifo argv, twice as many descriptors held.
const BATCH_MAX = 512;
const { O_RDONLY, O_WRONLY, O_RDWR } = fs.constants;

/** @type {{r: number, w: number}[]} */
const spare = [];
/** @type {Promise<void> | null} */
let filling = null;
/** Pipes asked for by the callers waiting for a batch. */
let wanted = 0;

function mkfifoBin() {
	for (const p of ["/usr/bin/mkfifo", "/bin/mkfifo"]) if (fs.existsSync(p)) return p;
	return "mkfifo";
}

// Where the batches are made: tmpfs first. A FIFO is an inode created and
// unlinked again; on a disk filesystem (an ext4 /tmp) that is journal work,
// about 1 ms a FIFO on a busy host (a batch of 64 took 76 ms in /tmp and
// 12 ms in /dev/shm), which is 4 FIFOs of every call. Nothing is kept
// there: the name goes as soon as both ends are open.
/** @type {string | null} */
let batchBase = null;

/** @returns {string} a fresh private (0700) directory */
function batchDir() {
	const bases = batchBase ? [batchBase] : ["/dev/shm", os.tmpdir()];
	let last;
	for (const base of bases) {
		try {
			const dir = fs.mkdtempSync(path.join(base, "kern-node-pipes-"));
			batchBase = base;
			return dir;
		} catch (e) {
			last = e;
		}
	}
	batchBase = null;
	throw last;
}

/** @param {number} n @returns {[string, string[]]} a fresh private directory and the FIFO names to make in it */
function batchNames(n) {
	const dir = batchDir();
	return [dir, Array.from({ length: n }, (_, i) => path.join(dir, String(i)))];
}

/**
 * Open both ends of each FIFO, unlink it, and keep the pair. Holding it
 * open read-write first lets both single-ended opens return at once, and
 * neither end carries O_NONBLOCK: the box must see ordinary blocking
 * descriptors (libuv makes only our own end non-blocking, and each open is
 * its own open file description).
 * @param {string} dir @param {string[]} names
 */
function openBatch(dir, names) {
	try {
		for (const name of names) {
			const t = fs.openSync(name, O_RDWR);
			const rd = fs.openSync(name, O_RDONLY);
			const wr = fs.openSync(name, O_WRONLY);
			fs.closeSync(t);
			fs.unlinkSync(name);
			spare.push({ r: rd, w: wr });
		}
	} finally {
		fs.rmSync(dir, { recursive: true, force: true });
	}
}

/** The directory of a batch being made, removed if the process exits first. */
const pendingDirs = new Set();
process.on("exit", () => {
	for (const d of pendingDirs) fs.rmSync(d, { recursive: true, force: true });
});

/**
 * Make `n` more pipes with one `mkfifo` run (through kern's spawner when
 * there is one: no fork of this process); concurrent callers share the
 * batch in flight.
 * @param {number} n @param {import("./spawner.cjs").Spawner | null} spawner
 * @returns {Promise<void>}
 */
function refill(n, spawner) {
	if (filling) return filling;
	const [dir, names] = batchNames(n);
	pendingDirs.add(dir);
	filling = new Promise((resolve, reject) => {
		const done = (/** @type {Error | null} */ e) => {
			filling = null;
			pendingDirs.delete(dir);
			if (e) {
				fs.rmSync(dir, { recursive: true, force: true });
				reject(e);
				return;
			}
			try {
				openBatch(dir, names);
				resolve();
			} catch (o) {
				reject(o);
			}
		};
		const argv = ["-m", "600", "--", ...names];
		const forked = () => {
			for (const name of names) fs.rmSync(name, { force: true }); // what a failed run made
			const p = spawn(mkfifoBin(), argv, { stdio: ["ignore", "ignore", "pipe"] });
			/** @type {Buffer[]} */
			const err = [];
			p.stderr.on("data", (d) => err.push(d));
			p.on("error", (e) => done(new SandboxError(`mkfifo in ${dir}: ${e.message}`)));
			p.on("close", (code) => done(code === 0 ? null : new SandboxError(`mkfifo in ${dir}: ${Buffer.concat(err).toString().trim() || `exit ${code}`}`)));
		};
		const bin = mkfifoBin();
		if (!spawner || !bin.startsWith("/")) return forked();
		// Its stderr goes nowhere: a failure is run again the forked way,
		// which says why.
		try {
			const c = spawner.start(bin, argv, process.env, [null, null, null, null, null], null, () => undefined);
			c.on("exit", (code) => (code === 0 ? done(null) : forked()));
			c.on("error", forked);
		} catch {
			forked();
		}
	});
	return filling;
}

/**
 * Fresh pipes: `{r, w}` descriptor pairs, both close-on-exec (libuv opens
 * everything O_CLOEXEC), so only the child they are handed to gets one. The
 * next batch is started in the background when few are left.
 * @param {number} n @param {import("./spawner.cjs").Spawner | null} [spawner] makes the batches
 * @returns {Promise<{r: number, w: number}[]>}
 */
async function pipes(n, spawner = null) {
	if (spare.length < n) {
		// Callers waiting for a batch (a burst: Promise.all of 100 calls,
		// the first ones served from the spare pipes at once) get the next
		// batch sized for all of them, not one 64-pipe mkfifo run after
		// another with 16 calls started per run.
		wanted += n;
		try {
			while (spare.length < n) await refill(Math.min(BATCH_MAX, Math.max(BATCH, wanted - spare.length)), spawner);
		} finally {
			wanted -= n;
		}
	}
	return /** @type {{r: number, w: number}[]} */ (pipesNow(n, spawner));
}

/**
 * `n` pipes from the spare ones, now; null when there are fewer (ask
 * pipes()). Starts the next batch when few are left, as pipes() does.
 * @param {number} n @param {import("./spawner.cjs").Spawner | null} [spawner]
 * @returns {{r: number, w: number}[] | null}
 */
function pipesNow(n, spawner = null) {
	if (spare.length < n) return null;
	const got = spare.splice(spare.length - n, n);
	if (spare.length < LOW) refill(BATCH, spawner).catch(() => undefined);
	return got;
}

/** @param {number | null | undefined} fd */
function closeQuietly(fd) {
	if (fd == null || fd < 0) return;
	try {
		fs.closeSync(fd);
	} catch {
		// already closed
	}
}

module.exports = { pipes, pipesNow, closeQuietly };
