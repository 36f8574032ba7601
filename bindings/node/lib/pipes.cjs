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
// name outlives the call that made it and nothing of it is left on disk.

const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { spawnSync } = require("node:child_process");
const { SandboxError } = require("./errors.cjs");

const BATCH = 32;
const { O_RDONLY, O_WRONLY, O_RDWR } = fs.constants;

/** @type {{r: number, w: number}[]} */
const spare = [];

function mkfifoBin() {
	for (const p of ["/usr/bin/mkfifo", "/bin/mkfifo"]) {
		try {
			fs.accessSync(p, fs.constants.X_OK);
			return p;
		} catch {
			// try the next one
		}
	}
	return "mkfifo";
}

function refill() {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kern-node-pipes-"));
	try {
		const names = Array.from({ length: BATCH }, (_, i) => path.join(dir, String(i)));
		const r = spawnSync(mkfifoBin(), ["-m", "600", "--", ...names], { stdio: ["ignore", "ignore", "pipe"] });
		if (r.error || r.status !== 0) {
			throw new SandboxError(`mkfifo ${dir}: ${r.error ? r.error.message : String(r.stderr).trim()}`);
		}
		for (const name of names) {
			// Holding it open read-write first lets both single-ended opens
			// return at once, and neither end carries O_NONBLOCK: the box
			// must see ordinary blocking descriptors (libuv makes only our
			// own end non-blocking, and each open is its own description).
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

/**
 * A fresh pipe: `{r, w}` descriptors, both close-on-exec (libuv opens
 * everything O_CLOEXEC), so only the child they are handed to gets one.
 * @returns {{r: number, w: number}}
 */
function pipe() {
	if (spare.length === 0) refill();
	return /** @type {{r: number, w: number}} */ (spare.pop());
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

module.exports = { pipe, closeQuietly };
