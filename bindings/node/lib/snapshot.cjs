"use strict";
// snapshot() and restore() (python-binding.md §4): the workspace as a
// portable .tar.gz (USTAR, gzip level 1) and back, as the Python package
// writes and reads them. The archive may come from anywhere, so restore
// reads it twice: first every member is checked, and one hostile member
// (absolute, `..`, sparse, symlink, hard link, device, FIFO, anything but
// files and directories) refuses the whole archive before anything changes;
// then the workspace is emptied and the members written through its
// confined opens.

const fs = require("node:fs");
const zlib = require("node:zlib");
const { pipeline } = require("node:stream/promises");
const { Readable } = require("node:stream");
const { promisify } = require("node:util");
const { SandboxError } = require("./errors.cjs");
const { header, padding, END, TarReader } = require("./tar.cjs");
const { at } = require("./workspace.cjs");
const { pyRepr } = require("./pyrepr.cjs");

const read = promisify(fs.read);
const { O_RDONLY, O_WRONLY, O_CREAT, O_NOFOLLOW, O_NONBLOCK } = fs.constants;
/** @type {Record<string, string>} */
const KINDS = { 2: "a symlink", 1: "a hard link", 3: "a device", 4: "a device", 6: "a FIFO" };

/**
 * Write the workspace (regular files and directories, .deps included,
 * scratch left out) to `dest` as a .tar.gz.
 * @param {import("./workspace.cjs").Workspace} ws @param {string} dest
 */
async function snapshot(ws, dest) {
	async function* tar() {
		for (const e of ws.entries()) {
			const mtime = Number(e.st.mtimeMs / 1000n);
			if (e.kind === "d") {
				yield entryHeader(`${e.rel}/`, "5", 0, 0o755, mtime);
				continue;
			}
			let fd;
			try {
				fd = fs.openSync(at(e.dirFd, e.name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
			} catch {
				continue; // removed or replaced since the walk
			}
			try {
				const st = fs.fstatSync(fd);
				if (!st.isFile()) continue;
				// The header's size is the file's now; a file that changes while
				// it is read is cut or zero-filled to it.
				yield entryHeader(e.rel, "0", st.size, st.mode & 0o111 ? 0o755 : 0o644, mtime);
				for (let left = st.size; left > 0; ) {
					const buf = Buffer.alloc(Math.min(left, 1 << 20));
					await read(fd, buf, 0, buf.length, null);
					yield buf;
					left -= buf.length;
				}
				yield padding(st.size);
			} finally {
				fs.closeSync(fd);
			}
		}
		yield END;
	}
	try {
		await pipeline(Readable.from(tar()), zlib.createGzip({ level: 1 }), fs.createWriteStream(dest, { mode: 0o600 }));
	} catch (e) {
		if (e instanceof SandboxError) throw e;
		throw new SandboxError(`snapshot ${dest}: ${/** @type {Error} */ (e).message}`);
	}
}

/** @param {string} name @param {"0" | "5"} type @param {number} size @param {number} mode @param {number} mtime */
function entryHeader(name, type, size, mode, mtime) {
	try {
		return header({ name, type, size, mode, mtime });
	} catch (e) {
		throw new SandboxError(`snapshot: ${name}: ${/** @type {Error} */ (e).message}`);
	}
}

/**
 * Feed the archive at `src` (gzip-compressed or plain) to a TarReader.
 * @param {string} src @param {TarReader} reader
 */
async function readArchive(src, reader) {
	const head = Buffer.alloc(2);
	const fd = fs.openSync(src, "r");
	try {
		fs.readSync(fd, head, 0, 2, 0);
	} finally {
		fs.closeSync(fd);
	}
	const raw = fs.createReadStream(src);
	const input = head[0] === 0x1f && head[1] === 0x8b ? raw.pipe(zlib.createGunzip()) : raw;
	try {
		for await (const chunk of input) {
			reader.feed(chunk);
			if (reader.done) break;
		}
		reader.end();
	} finally {
		raw.destroy();
		input.destroy();
	}
}

/**
 * The workspace components of a member, or why it is refused.
 * @param {import("./tar.cjs").Member} m @returns {string[]}
 */
function checkMember(m) {
	const name = m.name;
	if (name.includes("\0") || name.startsWith("/")) throw new SandboxError(`restore refused: member ${pyRepr(name)} has an absolute name`);
	const parts = name.split("/").filter((p) => p !== "" && p !== ".");
	if (parts.includes("..")) throw new SandboxError(`restore refused: member ${pyRepr(name)} contains '..'`);
	// A snapshot never holds one. Its real size is whatever the header
	// claims (a few bytes of archive can declare terabytes of holes), and
	// its layout is a map the archive supplies: nothing here can check
	// either, so the archive is refused rather than trusted.
	if (m.sparse) throw new SandboxError(`restore refused: member ${pyRepr(name)} is a sparse file`);
	if (KINDS[m.type]) throw new SandboxError(`restore refused: member ${pyRepr(name)} is ${KINDS[m.type]}`);
	if (m.type !== "0" && m.type !== "5") throw new SandboxError(`restore refused: member ${pyRepr(name)} is not a file or directory`);
	return parts;
}

/**
 * Replace the workspace's files with a snapshot's, after checking every member.
 * @param {import("./workspace.cjs").Workspace} ws @param {string} src
 */
async function restore(ws, src) {
	try {
		await readArchive(src, new TarReader((m) => void checkMember(m), null));
	} catch (e) {
		// One wording for every archive that cannot be read, whether its
		// first bytes are no tar at all or it breaks later (Python says
		// the same).
		if (e instanceof SandboxError) throw e;
		throw new SandboxError(`restore ${src}: not a readable tar archive (${/** @type {Error} */ (e).message})`);
	}
	ws.clear();
	/** @type {number | null} */
	let fd = null;
	const finish = () => {
		if (fd !== null) fs.closeSync(fd);
		fd = null;
	};
	try {
		await readArchive(
			src,
			new TarReader(
				(m) => {
					finish();
					const parts = checkMember(m);
					if (!parts.length) return;
					const rel = parts.join("/");
					if (m.type === "5") {
						fs.closeSync(ws.openDir(parts, rel, true));
						return;
					}
					fd = ws.openFile(rel, O_WRONLY | O_CREAT);
					fs.ftruncateSync(fd, 0);
					fs.fchmodSync(fd, m.mode & 0o111 ? 0o755 : 0o644);
				},
				(chunk) => {
					if (fd !== null) fs.writeSync(fd, chunk);
				},
			),
		);
	} catch (e) {
		// A workspace write that failed (ENOSPC, a quota) is itself, as in
		// Python; an archive that reads differently now than at the check
		// (changed in between) is unreadable, in the check's words.
		if (e instanceof SandboxError || /** @type {NodeJS.ErrnoException} */ (e).syscall) throw e;
		throw new SandboxError(`restore ${src}: not a readable tar archive (${/** @type {Error} */ (e).message})`);
	} finally {
		finish();
	}
}

module.exports = { snapshot, restore, checkMember };
