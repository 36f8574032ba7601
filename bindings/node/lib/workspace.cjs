"use strict";
// Host-side workspace I/O, confined to the workspace (python-binding.md
// §4): the box owns everything in it and may have left a symlink, a FIFO
// or a directory at any name, or swap one in while a call runs. Node has
// no openat(), so every component is opened through the directory
// descriptor's /proc/self/fd entry ("/proc/self/fd/N/name" resolves `name`
// inside directory N, and O_NOFOLLOW applies to it), one component at a
// time, never following a symlink; the final open is O_NONBLOCK (a FIFO
// cannot make the host wait) and anything that is not a regular file is
// refused.

const fs = require("node:fs");
const { promisify } = require("node:util");
const { SandboxError } = require("./errors.cjs");
const { FileInfo } = require("./results.cjs");

const { O_RDONLY, O_WRONLY, O_CREAT, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = fs.constants;
const read = promisify(fs.read);
const write = promisify(fs.write);
const ftruncate = promisify(fs.ftruncate);
const DIR_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;
// Deeper trees are not walked: each level holds a descriptor.
const MAX_DEPTH = 256;

/** Names the binding itself writes into the workspace for one call. */
const SCRATCH = /^\.(run|cell|res|kernel)-[0-9a-f]{8}\.[a-z]+$/;

/** @param {number} fd @param {string} [name] */
const at = (fd, name) => (name === undefined ? `/proc/self/fd/${fd}` : `/proc/self/fd/${fd}/${name}`);

/**
 * The components of a workspace path: relative, or absolute under
 * /workspace; no NUL, no `..`.
 * @param {string} p @param {boolean} allowEmpty
 * @returns {string[]}
 */
function components(p, allowEmpty) {
	if (typeof p !== "string") throw new SandboxError("a workspace path must be a string");
	if (p.includes("\0")) throw new SandboxError("a workspace path must not contain NUL");
	let rel = p;
	if (rel === "/workspace") rel = "";
	else if (rel.startsWith("/workspace/")) rel = rel.slice("/workspace/".length);
	else if (rel.startsWith("/")) throw new SandboxError(`'${p}' is outside the workspace`);
	const parts = rel.split("/").filter((c) => c !== "" && c !== ".");
	if (parts.includes("..")) throw new SandboxError(`'${p}' is outside the workspace ('..' is refused)`);
	if (!allowEmpty && parts.length === 0) throw new SandboxError(`'${p}' names the workspace itself, not a file`);
	return parts;
}

/** @param {unknown} e */
const code = (e) => /** @type {NodeJS.ErrnoException} */ (e).code;

class Workspace {
	/** @param {string} root the workspace directory, already realpath'd */
	constructor(root) {
		this.root = root;
		this.fd = fs.openSync(root, DIR_FLAGS);
	}

	close() {
		if (this.fd >= 0) fs.closeSync(this.fd);
		this.fd = -1;
	}

	/**
	 * Open the directory that `dirs` names under the root, one component at a
	 * time; missing ones are created when `create` is set.
	 * @param {string[]} dirs @param {boolean} create @param {string} shown
	 * @returns {number} a descriptor the caller closes (never the root's own)
	 */
	openDir(dirs, create, shown) {
		// The root's own /proc entry is a link to the directory held open:
		// followed on purpose (O_NOFOLLOW would refuse the link itself).
		let fd = fs.openSync(at(this.fd), O_RDONLY | O_DIRECTORY);
		for (const name of dirs) {
			let next;
			try {
				if (create) {
					try {
						fs.mkdirSync(at(fd, name), 0o755);
					} catch (e) {
						if (code(e) !== "EEXIST") throw e;
					}
				}
				next = fs.openSync(at(fd, name), DIR_FLAGS);
			} catch (e) {
				fs.closeSync(fd);
				const c = code(e);
				if (c === "ELOOP" || c === "ENOTDIR") {
					throw new SandboxError(`'${shown}': '${name}' is not a directory (symlinks are not followed)`);
				}
				if (c === "ENOENT") throw new SandboxError(`'${shown}': no such file or directory`);
				throw new SandboxError(`'${shown}': ${/** @type {Error} */ (e).message}`);
			}
			fs.closeSync(fd);
			fd = next;
		}
		return fd;
	}

	/**
	 * Open a regular file of the workspace, refusing anything else.
	 * @param {string} p @param {number} flags @param {boolean} createDirs
	 * @returns {number} the descriptor
	 */
	openFileSync(p, flags, createDirs) {
		const parts = components(p, false);
		const name = /** @type {string} */ (parts.pop());
		const dir = this.openDir(parts, createDirs, p);
		let fd;
		try {
			fd = fs.openSync(at(dir, name), flags | O_NOFOLLOW | O_NONBLOCK, 0o644);
		} catch (e) {
			const c = code(e);
			if (c === "ELOOP") throw new SandboxError(`'${p}' is a symlink; refusing to follow it`);
			if (c === "ENOENT") throw new SandboxError(`'${p}': no such file`);
			if (c === "ENXIO") throw new SandboxError(`'${p}' is not a regular file`);
			if (c === "EISDIR") throw new SandboxError(`'${p}' is a directory`);
			throw new SandboxError(`open '${p}': ${/** @type {Error} */ (e).message}`);
		} finally {
			fs.closeSync(dir);
		}
		if (!fs.fstatSync(fd).isFile()) {
			fs.closeSync(fd);
			throw new SandboxError(`'${p}' is not a regular file`);
		}
		return fd;
	}

	/**
	 * @param {string} p @param {string | Uint8Array} data UTF-8 for a string
	 */
	async writeFile(p, data) {
		if (typeof data !== "string" && !(data instanceof Uint8Array)) {
			throw new SandboxError("writeFile data must be a string or a Buffer/Uint8Array");
		}
		// Truncated only after the descriptor is known to be a regular file.
		const fd = this.openFileSync(p, O_WRONLY | O_CREAT, true);
		try {
			await ftruncate(fd, 0);
			const buf = typeof data === "string" ? Buffer.from(data, "utf8") : data;
			for (let off = 0; off < buf.length; ) {
				const { bytesWritten } = await write(fd, buf, off, buf.length - off, null);
				off += bytesWritten;
			}
		} finally {
			fs.closeSync(fd);
		}
	}

	/**
	 * @param {string} p @param {number | null | undefined} maxBytes
	 * @returns {Promise<Buffer>}
	 */
	async readFile(p, maxBytes) {
		if (maxBytes != null && (!Number.isSafeInteger(maxBytes) || maxBytes < 0)) {
			throw new SandboxError("maxBytes must be a non-negative integer");
		}
		const fd = this.openFileSync(p, O_RDONLY, false);
		try {
			const size = fs.fstatSync(fd).size;
			if (maxBytes != null && size > maxBytes) {
				throw new SandboxError(`'${p}' is ${size} bytes, over maxBytes=${maxBytes}`);
			}
			// The file may grow while it is read: never past the limit.
			const limit = maxBytes != null ? maxBytes : Infinity;
			/** @type {Buffer[]} */
			const chunks = [];
			let total = 0;
			for (;;) {
				const buf = Buffer.allocUnsafe(Math.max(1, Math.min(1 << 20, limit - total + 1)));
				const { bytesRead } = await read(fd, buf, 0, buf.length, null);
				if (bytesRead === 0) break;
				chunks.push(buf.subarray(0, bytesRead));
				total += bytesRead;
				if (total > limit) throw new SandboxError(`'${p}' grew over maxBytes=${maxBytes} while it was read`);
			}
			return Buffer.concat(chunks, total);
		} finally {
			fs.closeSync(fd);
		}
	}

	/**
	 * Remove one top-level file the binding wrote (never a directory, never
	 * through a symlink: unlink removes the link itself).
	 * @param {string} name
	 */
	unlink(name) {
		try {
			fs.unlinkSync(at(this.fd, name));
		} catch {
			// gone already, or the box put a directory there
		}
	}

	/**
	 * Walk the regular files under `dirs`, calling visit(relPath, stat) for
	 * each; symlinks are skipped and never followed, and at the top level
	 * `.deps` and the binding's scratch files are left out.
	 * @param {string[]} dirs @param {(rel: string, st: fs.BigIntStats) => void} visit
	 * @param {{onDeep?: (rel: string) => void, onDir?: (rel: string, st: fs.BigIntStats) => void}} [opts]
	 */
	walk(dirs, visit, opts = {}) {
		let top;
		try {
			top = this.openDir(dirs, false, dirs.join("/") || ".");
		} catch (e) {
			if (dirs.length) throw e;
			return;
		}
		/** @param {number} fd @param {string} prefix @param {number} depth */
		const recurse = (fd, prefix, depth) => {
			let names;
			try {
				names = fs.readdirSync(at(fd));
			} catch {
				return; // vanished or unreadable
			}
			names.sort();
			for (const name of names) {
				const rel = prefix ? `${prefix}/${name}` : name;
				if (!prefix && (name === ".deps" || SCRATCH.test(name))) continue;
				let st;
				try {
					st = fs.lstatSync(at(fd, name), { bigint: true });
				} catch {
					continue;
				}
				if (st.isFile()) visit(rel, st);
				else if (st.isDirectory()) {
					opts.onDir?.(rel, st);
					if (depth >= MAX_DEPTH) {
						opts.onDeep?.(rel);
						continue;
					}
					let sub;
					try {
						sub = fs.openSync(at(fd, name), DIR_FLAGS);
					} catch {
						continue; // swapped for a symlink meanwhile
					}
					try {
						recurse(sub, rel, depth + 1);
					} finally {
						fs.closeSync(sub);
					}
				}
			}
		};
		try {
			recurse(top, dirs.join("/"), dirs.length);
		} finally {
			fs.closeSync(top);
		}
	}

	/**
	 * Regular files under `subdir`, sorted by path.
	 * @param {string} [subdir]
	 * @returns {FileInfo[]}
	 */
	listFiles(subdir = "") {
		const dirs = components(subdir, true);
		/** @type {FileInfo[]} */
		const out = [];
		this.walk(dirs, (rel, st) => out.push(new FileInfo(rel, Number(st.size), null)));
		return out;
	}

	/**
	 * (mtime_ns, size) of every regular file, for `files` of a result.
	 * @returns {Map<string, [bigint, bigint]>}
	 */
	scan() {
		/** @type {Map<string, [bigint, bigint]>} */
		const m = new Map();
		this.walk([], (rel, st) => m.set(rel, [st.mtimeNs, st.size]));
		return m;
	}
}

/**
 * Files created or modified between two scans.
 * @param {Map<string, [bigint, bigint]>} before @param {Map<string, [bigint, bigint]>} after
 * @returns {FileInfo[]}
 */
function changes(before, after) {
	/** @type {FileInfo[]} */
	const out = [];
	for (const [rel, [mtime, size]] of after) {
		const old = before.get(rel);
		if (!old) out.push(new FileInfo(rel, Number(size), "created"));
		else if (old[0] !== mtime || old[1] !== size) out.push(new FileInfo(rel, Number(size), "modified"));
	}
	return out;
}

module.exports = { Workspace, changes, components, SCRATCH };
