"use strict";
// Kernel frames, the host side (python-binding.md §15.2; the Python
// package's _frames.py): a frame is the ASCII decimal length of its body,
// "\n", then the body. The host sends a cell's UTF-8 source; the box
// answers with UTF-8 JSON objects: {"hello": 1} once ready (pool boxes),
// {"o": text} / {"e": text} while a cell runs, then one reply {"stdout",
// "stderr", "rc", "results", "trunc"}. Everything read here comes from a
// box: lengths are bounded before anything is buffered, every field is
// checked.

// Digits of a declared length plus its newline: far more than any cap needs.
const HEADER_MAX = 32;

class FrameError extends Error {
	/** @param {string} kind "eof" | "timeout" | "oversize" | "malformed" @param {string} message */
	constructor(kind, message) {
		super(message);
		this.kind = kind;
	}
}

/** @param {Buffer} body */
function encode(body) {
	return Buffer.concat([Buffer.from(`${body.length}\n`, "ascii"), body]);
}

/** The largest reply the driver can send for these caps (§13). @param {number} maxOutputBytes @param {number} resultsCap */
function replyCap(maxOutputBytes, resultsCap) {
	return 2 * maxOutputBytes + resultsCap + 64 * 1024;
}

/**
 * Whole frames from a readable stream, each within a deadline and a cap.
 */
class FrameReader {
	/** @param {import("node:stream").Readable} stream @param {number} cap */
	constructor(stream, cap) {
		this.cap = cap;
		/** @type {Buffer[]} */
		this.chunks = [];
		this.size = 0;
		this.eof = false;
		/** @type {(() => void) | null} */
		this.wake = null;
		stream.on("data", (d) => {
			this.chunks.push(d);
			this.size += d.length;
			// A frame past the cap is refused before all of it is held.
			if (this.size > this.cap + HEADER_MAX) stream.pause();
			this.notify();
		});
		stream.on("close", () => {
			this.eof = true;
			this.notify();
		});
		stream.on("error", () => stream.destroy());
		this.stream = stream;
	}

	notify() {
		const w = this.wake;
		this.wake = null;
		if (w) w();
	}

	/** @returns {Buffer} everything buffered, as one buffer */
	flat() {
		if (this.chunks.length > 1) this.chunks = [Buffer.concat(this.chunks, this.size)];
		return this.chunks[0] || Buffer.alloc(0);
	}

	/** @param {number} n drop the first n buffered bytes */
	consume(n) {
		const b = this.flat().subarray(n);
		this.chunks = b.length ? [b] : [];
		this.size = b.length;
		if (this.stream.isPaused() && this.size <= this.cap + HEADER_MAX) this.stream.resume();
	}

	/**
	 * Wait for more bytes, EOF or the deadline.
	 * @param {number} deadline a performance.now() value, or Infinity
	 */
	async more(deadline) {
		if (this.eof) throw new FrameError("eof", "the kernel closed its output");
		const left = deadline - performance.now();
		if (left <= 0) throw new FrameError("timeout", "no reply before the deadline");
		/** @type {ReturnType<typeof setTimeout> | undefined} */
		let timer;
		const arrived = await new Promise((resolve) => {
			this.wake = () => resolve(true);
			if (Number.isFinite(left)) timer = setTimeout(() => resolve(false), Math.ceil(left));
		});
		clearTimeout(timer);
		this.wake = null;
		if (!arrived) throw new FrameError("timeout", "no reply before the deadline");
	}

	/**
	 * One frame's body.
	 * @param {number} [deadline] a performance.now() value
	 * @returns {Promise<Buffer>}
	 */
	async read(deadline = Infinity) {
		let nl;
		for (;;) {
			const b = this.flat();
			nl = b.subarray(0, HEADER_MAX).indexOf(0x0a);
			if (nl >= 0) break;
			if (b.length >= HEADER_MAX) throw new FrameError("malformed", `frame header over ${HEADER_MAX} bytes`);
			await this.more(deadline);
		}
		const head = this.flat().toString("latin1", 0, nl);
		if (!/^[0-9]+$/.test(head)) throw new FrameError("malformed", `frame header ${JSON.stringify(head)} is not a length`);
		const size = Number(head);
		if (size > this.cap) throw new FrameError("oversize", `reply of ${size} bytes is over the ${this.cap}-byte cap`);
		while (this.size < nl + 1 + size) await this.more(deadline);
		const body = Buffer.from(this.flat().subarray(nl + 1, nl + 1 + size));
		this.consume(nl + 1 + size);
		return body;
	}
}

/**
 * A box message: a JSON object.
 * @param {Buffer} body @returns {Record<string, unknown>}
 */
function decode(body) {
	let msg;
	try {
		msg = JSON.parse(body.toString("utf8"));
	} catch (e) {
		throw new FrameError("malformed", `reply is not JSON: ${/** @type {Error} */ (e).message}`);
	}
	if (msg === null || typeof msg !== "object" || Array.isArray(msg)) throw new FrameError("malformed", "reply is not a JSON object");
	return msg;
}

/** ["o"|"e", text] for a streamed output frame, else null. @param {Record<string, unknown>} msg */
function streamText(msg) {
	const keys = Object.keys(msg);
	if (keys.length === 1 && (keys[0] === "o" || keys[0] === "e") && typeof msg[keys[0]] === "string") {
		return /** @type {["o" | "e", string]} */ ([keys[0], msg[keys[0]]]);
	}
	return null;
}

/** @param {Record<string, unknown>} msg */
const isHello = (msg) => msg.hello === 1 && !("rc" in msg);

/**
 * @typedef {{stdout: string, stderr: string, rc: number, results: Record<string, string>[], trunc: boolean}} Reply
 */

/**
 * Check a reply's fields; a FrameError names the first bad one.
 * @param {Record<string, unknown>} msg @returns {Reply}
 */
function parseReply(msg) {
	const rc = msg.rc;
	if (typeof rc !== "number" || !Number.isInteger(rc)) throw new FrameError("malformed", "reply has no integer rc");
	const out = msg.stdout ?? "";
	const err = msg.stderr ?? "";
	if (typeof out !== "string" || typeof err !== "string") throw new FrameError("malformed", "reply stdout/stderr are not strings");
	const raw = msg.results ?? [];
	if (!Array.isArray(raw)) throw new FrameError("malformed", "reply results is not a list");
	/** @type {Record<string, string>[]} */
	const results = [];
	for (const bundle of raw) {
		if (bundle === null || typeof bundle !== "object" || Array.isArray(bundle)) throw new FrameError("malformed", "a result is not an object");
		if (!Object.values(bundle).every((v) => typeof v === "string")) throw new FrameError("malformed", "a result holds a value that is not a string");
		results.push(/** @type {Record<string, string>} */ (bundle));
	}
	return { stdout: out, stderr: err, rc, results, trunc: msg.trunc === true };
}

module.exports = { FrameReader, FrameError, encode, decode, streamText, isHello, parseReply, replyCap, HEADER_MAX };
