"use strict";
// The session workspace on the host (python-binding.md §4, §6): confined
// file I/O, file tracking, the package's scratch files.
//
// Every box can write the workspace, so every name in it is hostile: a box
// can leave a symlink to /etc/shadow, a FIFO that blocks a reader forever,
// or swap a directory for a symlink between two calls. The host holds the
// workspace open and opens each component relative to its parent with
// O_NOFOLLOW, the final one O_NONBLOCK, and refuses anything that is not a
// regular file (or, on the way, a directory). Node has no openat(): a
// component is opened as "/proc/self/fd/N/name", which resolves `name`
// inside the directory held as N (O_NOFOLLOW applies to `name`).

const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { promisify } = require("node:util");
const { SandboxError } = require("./errors.cjs");
const { FileInfo } = require("./results.cjs");
const { pyRepr } = require("./pyrepr.cjs");
const { rmtree } = require("./fsutil.cjs");

const read = promisify(fs.read);
const write = promisify(fs.write);
const ftruncate = promisify(fs.ftruncate);
const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = fs.constants;
const DIR_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;

const DEPS = ".deps";
// Names the package itself writes at the top of the workspace for one call.
const SCRATCH_PREFIXES = [".run-", ".cell-", ".res-", ".kernel-", ".kern-env."];
// Walks stop this deep (a box can build trees deeper than anyone can use).
const MAX_DEPTH = 128;
// Tracking stops after this many files (and says nothing about the rest).
const MAX_TRACKED = 100000;

/** @param {number} fd @param {string} [name] */
const at = (fd, name) => (name === undefined ? `/proc/self/fd/${fd}` : `/proc/self/fd/${fd}/${name}`);
/** @param {unknown} e */
const code = (e) => /** @type {NodeJS.ErrnoException} */ (e).code;

/** @param {string} topLevelName */
const isScratch = (topLevelName) => SCRATCH_PREFIXES.some((p) => topLevelName.startsWith(p));

/** Not the user's file: .deps and the package's scratch files. @param {string} rel */
function hidden(rel) {
	const top = rel.split("/", 1)[0];
	return top === DEPS || isScratch(top);
}

/** @param {string} rel @param {string} why */
const refuse = (rel, why) => new SandboxError(`workspace path ${pyRepr(rel)} refused: ${why}`);

/** Node's own error for a missing file, as fs would throw it. @param {string} rel */
function notFound(rel) {
	return Object.assign(new Error(`ENOENT: no such file in the workspace, ${pyRepr(rel)}`), { code: "ENOENT", errno: -2, path: rel });
}

/**
 * A workspace-relative path as components. `/workspace/x` is taken as `x`;
 * any other absolute path, `..` and NUL are refused.
 * @param {unknown} rel @returns {string[]}
 */
function splitPath(rel) {
	if (typeof rel !== "string") throw new SandboxError(`workspace path must be a string, not ${typeof rel}`);
	if (rel.includes("\0")) throw refuse(rel, "it contains NUL");
	let p = rel;
	if (p.startsWith("/")) {
		if (p === "/workspace" || p.startsWith("/workspace/")) p = p.slice("/workspace".length);
		else throw refuse(rel, "absolute paths must be under /workspace");
	}
	const parts = p.split("/").filter((c) => c !== "" && c !== ".");
	if (parts.includes("..")) throw refuse(rel, "'..' is not allowed");
	return parts;
}

/**
 * @typedef {[bigint, bigint]} Stamp (mtime_ns, size)
 * @typedef {{kind: "f" | "d", rel: string, st: fs.BigIntStats, dirFd: number, name: string}} Entry
 */

/**
 * Every regular file (and, with `dirs`, directory) below dirFd, never
 * through a symlink: files of a directory first, then its subdirectories.
 * dirFd of an entry is valid only until the next one. At the top level,
 * names `skipTop` accepts are passed over before anything is stat'ed.
 * @param {number} dirFd @param {string} prefix @param {boolean} dirs @param {number} [depth]
 * @param {(name: string) => boolean} [skipTop]
 * @returns {Generator<Entry>}
 */
function* walk(dirFd, prefix, dirs, depth = 0, skipTop) {
	let entries;
	try {
		entries = fs.readdirSync(at(dirFd), { withFileTypes: true });
	} catch {
		return;
	}
	/** @type {string[]} */
	const subdirs = [];
	for (const e of entries) {
		const name = e.name;
		if (depth === 0 && skipTop && skipTop(name)) continue;
		// The type the directory reports; the stat below is what counts.
		const known = e.isFile() || e.isDirectory() || e.isSymbolicLink() || e.isFIFO() || e.isSocket() || e.isCharacterDevice() || e.isBlockDevice();
		if (known && !e.isFile() && !e.isDirectory()) continue;
		if (e.isDirectory()) {
			subdirs.push(name);
			continue;
		}
		let st;
		try {
			st = fs.lstatSync(at(dirFd, name), { bigint: true });
		} catch {
			continue;
		}
		if (st.isDirectory()) subdirs.push(name);
		else if (st.isFile()) yield { kind: "f", rel: prefix + name, st, dirFd, name };
	}
	if (depth >= MAX_DEPTH) return;
	for (const name of subdirs) {
		let fd;
		try {
			fd = fs.openSync(at(dirFd, name), DIR_FLAGS);
		} catch {
			continue; // swapped for a symlink or removed meanwhile
		}
		try {
			if (dirs) yield { kind: "d", rel: prefix + name, st: fs.fstatSync(fd, { bigint: true }), dirFd, name };
			yield* walk(fd, `${prefix}${name}/`, dirs, depth + 1);
		} finally {
			fs.closeSync(fd);
		}
	}
}

/** Top-level names a user's walk passes over: .deps and the scratch files. @param {string} name */
const hiddenTop = (name) => name === DEPS || isScratch(name);

class Workspace {
	/**
	 * The workspace held open for the life of a session. `dir` null makes
	 * a private `kern-ws-*` directory (0700) that remove() deletes; a given
	 * directory is created if missing and kept.
	 * @param {string | null} dir
	 */
	constructor(dir) {
		this.temporary = dir == null;
		const p = dir == null ? fs.mkdtempSync(path.join(os.tmpdir(), "kern-ws-")) : dir;
		if (dir != null) fs.mkdirSync(p, { recursive: true, mode: 0o700 });
		this.path = fs.realpathSync(p);
		try {
			this.fd = fs.openSync(this.path, DIR_FLAGS);
		} catch (e) {
			throw new SandboxError(`workspace ${this.path}: ${/** @type {Error} */ (e).message}`);
		}
	}

	/**
	 * A descriptor of the directory `parts` (from the workspace on, no
	 * symlink followed); the caller closes it.
	 * @param {string[]} parts @param {string} rel @param {boolean} [create]
	 */
	openDir(parts, rel, create = false) {
		// The root's own /proc entry is a link to the directory held open:
		// followed on purpose (O_NOFOLLOW would refuse the link itself).
		let fd = fs.openSync(at(this.fd), O_RDONLY | O_DIRECTORY);
		try {
			for (const name of parts) {
				let next;
				try {
					next = fs.openSync(at(fd, name), DIR_FLAGS);
				} catch (e) {
					if (code(e) === "ENOENT" && create) {
						try {
							fs.mkdirSync(at(fd, name), 0o755);
						} catch (m) {
							if (code(m) !== "EEXIST") throw m;
						}
						next = fs.openSync(at(fd, name), DIR_FLAGS);
					} else if (code(e) === "ELOOP" || code(e) === "ENOTDIR") {
						throw refuse(rel, `${pyRepr(name)} is a symlink or not a directory`);
					} else if (code(e) === "ENOENT") {
						throw notFound(rel);
					} else throw e;
				}
				fs.closeSync(fd);
				fd = next;
			}
			return fd;
		} catch (e) {
			fs.closeSync(fd);
			throw e;
		}
	}

	/**
	 * Open a regular file of the workspace; anything else is refused.
	 * @param {string} rel @param {number} flags @returns {number}
	 */
	openFile(rel, flags) {
		const parts = splitPath(rel);
		if (!parts.length) throw refuse(rel, "it names the workspace itself");
		const d = this.openDir(parts.slice(0, -1), rel, Boolean(flags & O_CREAT));
		let fd;
		try {
			fd = fs.openSync(at(d, parts[parts.length - 1]), flags | O_NOFOLLOW | O_NONBLOCK, 0o644);
		} catch (e) {
			const c = code(e);
			if (c === "ELOOP") throw refuse(rel, "it is a symlink");
			if (c === "EISDIR" || c === "ENXIO" || c === "ENODEV" || c === "EOPNOTSUPP") throw refuse(rel, "it is not a regular file");
			if (c === "ENOENT") throw notFound(rel);
			throw e;
		} finally {
			fs.closeSync(d);
		}
		const st = fs.fstatSync(fd);
		if (!st.isFile()) {
			fs.closeSync(fd);
			throw refuse(rel, `it is ${st.isFIFO() ? "a FIFO" : st.isDirectory() ? "a directory" : "not a regular file"}`);
		}
		return fd;
	}

	/**
	 * Write a workspace file (a string as UTF-8, or bytes), creating parent
	 * directories; truncated only once it is known to be a regular file.
	 * @param {string} rel @param {string | Uint8Array} data
	 */
	async writeFile(rel, data) {
		if (typeof data !== "string" && !(data instanceof Uint8Array)) {
			throw new SandboxError(`writeFile data must be a string or a Buffer/Uint8Array, not ${typeof data}`);
		}
		const buf = typeof data === "string" ? Buffer.from(data, "utf8") : data;
		const fd = this.openFile(rel, O_WRONLY | O_CREAT);
		try {
			await ftruncate(fd, 0);
			for (let off = 0; off < buf.length; ) off += (await write(fd, buf, off, buf.length - off, null)).bytesWritten;
		} finally {
			fs.closeSync(fd);
		}
	}

	/**
	 * The bytes of a regular workspace file; over maxBytes raises.
	 * @param {string} rel @param {number | null} [maxBytes] @returns {Promise<Buffer>}
	 */
	async readFile(rel, maxBytes = null) {
		if (maxBytes != null && (!Number.isSafeInteger(maxBytes) || maxBytes < 0)) throw new SandboxError("maxBytes must be an integer >= 0 or null");
		const fd = this.openFile(rel, O_RDONLY);
		/** @type {Buffer[]} */
		const chunks = [];
		let total = 0;
		const limit = maxBytes == null ? Infinity : maxBytes + 1;
		try {
			while (total < limit) {
				const buf = Buffer.allocUnsafe(Math.min(1 << 20, limit - total));
				const { bytesRead } = await read(fd, buf, 0, buf.length, null);
				if (!bytesRead) break;
				chunks.push(buf.subarray(0, bytesRead));
				total += bytesRead;
			}
		} finally {
			fs.closeSync(fd);
		}
		if (maxBytes != null && total > maxBytes) throw new SandboxError(`workspace file ${pyRepr(rel)} is larger than maxBytes=${maxBytes}`);
		return Buffer.concat(chunks, total);
	}

	/**
	 * Regular files under `subdir`, sorted by path; .deps and scratch left out.
	 * @param {string} [subdir] @returns {FileInfo[]}
	 */
	listFiles(subdir = "") {
		const parts = splitPath(subdir);
		const d = this.openDir(parts, subdir || ".");
		const prefix = parts.length ? `${parts.join("/")}/` : "";
		/** @type {FileInfo[]} */
		const out = [];
		try {
			for (const e of walk(d, prefix, false, 0, parts.length ? undefined : hiddenTop)) if (!hidden(e.rel)) out.push(new FileInfo(e.rel, Number(e.st.size)));
		} finally {
			fs.closeSync(d);
		}
		return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
	}

	/** (mtime_ns, size) of every user file, for changes(). @returns {Map<string, Stamp>} */
	stamps() {
		/** @type {Map<string, Stamp>} */
		const out = new Map();
		for (const e of walk(this.fd, "", false, 0, hiddenTop)) {
			out.set(e.rel, [e.st.mtimeNs, e.st.size]);
			if (out.size >= MAX_TRACKED) break;
		}
		return out;
	}

	/** Every regular file and directory, scratch left out (snapshots). */
	*entries() {
		for (const e of walk(this.fd, "", true, 0, isScratch)) yield e;
	}

	/** A new top-level scratch file (O_EXCL: never through a planted name). @param {string} name @param {string | Uint8Array} data */
	createScratch(name, data) {
		const fd = fs.openSync(at(this.fd, name), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o644);
		try {
			fs.writeSync(fd, typeof data === "string" ? Buffer.from(data, "utf8") : data);
		} finally {
			fs.closeSync(fd);
		}
	}

	/**
	 * A scratch file the box wrote, or null when absent, refused or over maxBytes.
	 * @param {string} name @param {number} maxBytes
	 */
	async readScratch(name, maxBytes) {
		// Absent (the usual case: no rich results) is answered without an
		// ENOENT error built and thrown; anything there is opened as before.
		if (!this.hasScratch(name)) return null;
		try {
			return await this.readFile(name, maxBytes);
		} catch {
			return null;
		}
	}

	/** A top-level scratch name exists (as anything). @param {string} name */
	hasScratch(name) {
		try {
			return fs.lstatSync(at(this.fd, name), { throwIfNoEntry: false }) !== undefined;
		} catch {
			return true; // let the caller's own open say what it is
		}
	}

	/** Remove scratch files the package wrote. @param {...string} names */
	removeScratch(...names) {
		this.#remove(names, false);
	}

	/**
	 * Remove scratch files that are usually absent (a results file): each
	 * is looked for first, so a missing one costs no thrown error.
	 * @param {...string} names
	 */
	removeScratchMaybe(...names) {
		this.#remove(names, true);
	}

	/** @param {string[]} names @param {boolean} look */
	#remove(names, look) {
		for (const name of names) {
			if (look && !this.hasScratch(name)) continue;
			try {
				fs.unlinkSync(at(this.fd, name));
			} catch (e) {
				if (code(e) === "EISDIR" || code(e) === "EPERM") rmtree(at(this.fd, name));
			}
		}
	}

	/** Remove everything in the workspace but the directory itself. */
	clear() {
		for (const name of fs.readdirSync(at(this.fd))) {
			try {
				fs.unlinkSync(at(this.fd, name));
			} catch {
				rmtree(at(this.fd, name));
			}
		}
	}

	/** Close the workspace, and delete it if it was temporary. */
	remove() {
		if (this.fd >= 0) fs.closeSync(this.fd);
		this.fd = -1;
		if (this.temporary) rmtree(this.path);
	}
}

/**
 * Files created or modified between two stamps(), sorted by path.
 * @param {Map<string, Stamp>} before @param {Map<string, Stamp>} after @returns {FileInfo[]}
 */
function changes(before, after) {
	/** @type {FileInfo[]} */
	const out = [];
	for (const rel of [...after.keys()].sort()) {
		const [mtime, size] = /** @type {Stamp} */ (after.get(rel));
		const old = before.get(rel);
		if (!old) out.push(new FileInfo(rel, Number(size), "created"));
		else if (old[0] !== mtime || old[1] !== size) out.push(new FileInfo(rel, Number(size), "modified"));
	}
	return out;
}

module.exports = { Workspace, changes, splitPath, isScratch, hidden, at, MAX_DEPTH };
