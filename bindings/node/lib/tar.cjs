"use strict";
// USTAR, the little of it snapshot and restore need: headers written for
// directories and regular files, and a streaming reader that reports every
// member's kind and name so restore can refuse the hostile ones. A
// hand-written reader rather than a library because the point of restore
// is the refusal rules, which a general extractor would have to be talked
// out of; the format itself is 512-byte blocks.

const BLOCK = 512;
// Limits on what a hostile archive can make the reader buffer.
const MAX_META = 1 << 20; // a pax or GNU long-name record

/** @param {Buffer} b @param {number} off @param {number} len @param {string} s */
function putString(b, off, len, s) {
	b.write(s, off, len, "utf8");
}

/** @param {Buffer} b @param {number} off @param {number} len @param {number} n */
function putOctal(b, off, len, n) {
	const s = n.toString(8);
	if (s.length > len - 1) throw new RangeError(`tar: ${n} does not fit ${len - 1} octal digits`);
	b.write(s.padStart(len - 1, "0") + "\0", off, len, "ascii");
}

/**
 * Split a member name into USTAR's prefix and name fields.
 * @param {string} name @returns {[string, string]}
 */
function splitName(name) {
	const bytes = Buffer.byteLength(name);
	if (bytes <= 100) return ["", name];
	for (let i = name.indexOf("/"); i !== -1; i = name.indexOf("/", i + 1)) {
		const prefix = name.slice(0, i);
		const rest = name.slice(i + 1);
		if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(rest) <= 100 && rest) return [prefix, rest];
	}
	throw new RangeError(`tar: the name ${JSON.stringify(name)} is too long for USTAR`);
}

/**
 * One USTAR header block.
 * @param {{name: string, type: "0" | "5", size: number, mode: number, mtime: number}} h
 */
function header(h) {
	const b = Buffer.alloc(BLOCK);
	const [prefix, name] = splitName(h.name);
	putString(b, 0, 100, name);
	putOctal(b, 100, 8, h.mode & 0o7777);
	putOctal(b, 108, 8, 0);
	putOctal(b, 116, 8, 0);
	putOctal(b, 124, 12, h.size);
	putOctal(b, 136, 12, Math.max(0, Math.floor(h.mtime)));
	b.fill(0x20, 148, 156); // the checksum counts its own field as spaces
	b.write(h.type, 156, 1, "ascii");
	b.write("ustar\0", 257, 6, "ascii");
	b.write("00", 263, 2, "ascii");
	putString(b, 345, 155, prefix);
	let sum = 0;
	for (const x of b) sum += x;
	b.write(sum.toString(8).padStart(6, "0") + "\0 ", 148, 8, "ascii");
	return b;
}

/** Zero padding after `size` bytes of data. @param {number} size */
function padding(size) {
	const r = size % BLOCK;
	return r ? Buffer.alloc(BLOCK - r) : Buffer.alloc(0);
}

/** The two zero blocks that end an archive. */
const END = Buffer.alloc(2 * BLOCK);

/** @param {Buffer} b @param {number} off @param {number} len */
function getString(b, off, len) {
	const f = b.subarray(off, off + len);
	const z = f.indexOf(0);
	return (z === -1 ? f : f.subarray(0, z)).toString("utf8");
}

/** @param {Buffer} b @param {number} off @param {number} len @returns {number} */
function getNumber(b, off, len) {
	const f = b.subarray(off, off + len);
	if (f[0] & 0x80) {
		// GNU base-256: big-endian, the top bit of the first byte a marker.
		if (f[0] & 0x40) return NaN; // negative
		let n = f[0] & 0x3f;
		for (let i = 1; i < f.length; i++) n = n * 256 + f[i];
		return n;
	}
	const s = f.toString("ascii").replace(/\0.*$/s, "").trim();
	if (s === "") return 0;
	if (!/^[0-7]+$/.test(s)) return NaN;
	return parseInt(s, 8);
}

/** @param {Buffer} b */
function checksumOk(b) {
	const want = getNumber(b, 148, 8);
	let sum = 0;
	for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : b[i];
	return sum === want;
}

/**
 * pax records: "LEN key=value\n" repeated.
 * @param {Buffer} data @returns {Record<string, string>}
 */
function parsePax(data) {
	/** @type {Record<string, string>} */
	const out = {};
	let i = 0;
	while (i < data.length) {
		const sp = data.indexOf(0x20, i);
		if (sp === -1) throw new Error("malformed pax record");
		const len = Number(data.toString("ascii", i, sp));
		if (!Number.isInteger(len) || len <= sp - i || i + len > data.length) throw new Error("malformed pax record");
		const rec = data.subarray(sp + 1, i + len - 1).toString("utf8");
		const eq = rec.indexOf("=");
		if (eq === -1) throw new Error("malformed pax record");
		out[rec.slice(0, eq)] = rec.slice(eq + 1);
		i += len;
	}
	return out;
}

/**
 * @typedef {object} Member
 * @property {string} name
 * @property {string} type USTAR type flag: "0" file, "5" directory, "1" hard link, "2" symlink, "3"/"4" devices, "6" FIFO, ...
 * @property {number} size
 * @property {number} mode
 * @property {number} mtime
 * @property {string} linkname
 * @property {boolean} sparse a GNU sparse file: type "S", or pax GNU.sparse.* records
 */

/**
 * A push parser: feed() it the decompressed stream, end() it at EOF. For
 * each member it calls onMember(member) and then onData(chunk) for the
 * member's bytes; onData may be null to skip them.
 */
class TarReader {
	/**
	 * @param {(m: Member) => void} onMember
	 * @param {((chunk: Buffer) => void) | null} onData
	 */
	constructor(onMember, onData) {
		this.onMember = onMember;
		this.onData = onData;
		/** @type {Buffer} */
		this.buf = Buffer.alloc(0);
		this.state = "header";
		this.left = 0; // data bytes left of the current member
		this.pad = 0; // padding bytes after them
		/** @type {Record<string, string>} */
		this.pax = {};
		/** @type {Record<string, string>} */
		this.globalPax = {};
		/** @type {string | null} */
		this.longName = null;
		/** @type {string | null} */
		this.longLink = null;
		/** @type {{kind: string, chunks: Buffer[]} | null} */
		this.meta = null;
		this.done = false;
	}

	/** @param {Buffer} chunk */
	feed(chunk) {
		this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
		for (;;) {
			if (this.done) return;
			if (this.state === "data") {
				if (this.left > 0) {
					if (this.buf.length === 0) return;
					const n = Math.min(this.left, this.buf.length);
					const part = this.buf.subarray(0, n);
					this.buf = this.buf.subarray(n);
					this.left -= n;
					if (this.meta) this.meta.chunks.push(part);
					else if (this.onData) this.onData(part);
					continue;
				}
				if (this.buf.length < this.pad) {
					this.pad -= this.buf.length;
					this.buf = Buffer.alloc(0);
					return;
				}
				this.buf = this.buf.subarray(this.pad);
				this.pad = 0;
				this.state = "header";
				if (this.meta) this.finishMeta();
				continue;
			}
			if (this.buf.length < BLOCK) return;
			const h = this.buf.subarray(0, BLOCK);
			this.buf = this.buf.subarray(BLOCK);
			this.header(h);
		}
	}

	end() {
		if (!this.done && (this.state === "data" || this.buf.length || this.meta)) {
			throw new Error("truncated archive");
		}
	}

	/** @param {Buffer} h */
	header(h) {
		if (h.every((x) => x === 0)) {
			// The first zero block ends the archive; anything after it is ignored.
			this.done = true;
			return;
		}
		if (!checksumOk(h)) throw new Error("bad header checksum");
		const type = String.fromCharCode(h[156] || 0x30);
		const size = getNumber(h, 124, 12);
		if (!Number.isSafeInteger(size) || size < 0) throw new Error("bad member size");
		const magic = h.toString("ascii", 257, 262);
		const prefix = magic === "ustar" ? getString(h, 345, 155) : "";
		let name = getString(h, 0, 100);
		if (prefix) name = `${prefix}/${name}`;
		if (type === "x" || type === "g" || type === "L" || type === "K") {
			if (size > MAX_META) throw new Error(`oversized ${type} record`);
			this.meta = { kind: type, chunks: [] };
			this.enterData(size);
			return;
		}
		const pax = { ...this.globalPax, ...this.pax };
		// GNU tar's pax sparse forms (0.0, 0.1, 1.0) keep the real name in
		// GNU.sparse.name, as Python's tarfile reads it.
		const sparse = type === "S" || Object.keys(pax).some((k) => k.startsWith("GNU.sparse."));
		/** @type {Member} */
		const m = {
			name: this.longName ?? pax["GNU.sparse.name"] ?? pax.path ?? name,
			type: type === "\0" ? "0" : type === "7" ? "0" : type,
			size: pax.size !== undefined ? Number(pax.size) : size,
			mode: getNumber(h, 100, 8) || 0,
			mtime: pax.mtime !== undefined ? Math.floor(Number(pax.mtime)) : getNumber(h, 136, 12) || 0,
			linkname: this.longLink ?? pax.linkpath ?? getString(h, 157, 100),
			sparse,
		};
		if (!Number.isSafeInteger(m.size) || m.size < 0) throw new Error("bad member size");
		this.pax = {};
		this.longName = null;
		this.longLink = null;
		// Links, devices and directories carry no data whatever size they claim.
		const carries = !"123456".includes(m.type);
		this.onMember(m);
		this.enterData(carries ? m.size : 0);
	}

	/** @param {number} size */
	enterData(size) {
		this.left = size;
		this.pad = size % BLOCK ? BLOCK - (size % BLOCK) : 0;
		this.state = "data";
	}

	finishMeta() {
		const meta = /** @type {{kind: string, chunks: Buffer[]}} */ (this.meta);
		this.meta = null;
		const data = Buffer.concat(meta.chunks);
		if (meta.kind === "x") this.pax = parsePax(data);
		else if (meta.kind === "g") this.globalPax = { ...this.globalPax, ...parsePax(data) };
		else {
			const z = data.indexOf(0);
			const s = (z === -1 ? data : data.subarray(0, z)).toString("utf8");
			if (meta.kind === "L") this.longName = s;
			else this.longLink = s;
		}
	}
}

module.exports = { header, padding, END, TarReader, BLOCK };
