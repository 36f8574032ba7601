"use strict";
// snapshot() and restore() (python-binding.md §4): the workspace as a
// portable .tar.gz (USTAR, gzip level 1) and back. The archive may come
// from anywhere, so restore reads it twice: first every member is checked
// and one hostile member (absolute, `..`, symlink, hard link, device, FIFO,
// anything but files and directories) refuses the whole archive before a
// byte is written; then the files are written through the workspace's
// confined opens.

const fs = require("node:fs");
const zlib = require("node:zlib");
const { pipeline } = require("node:stream/promises");
const { Readable } = require("node:stream");
const { promisify } = require("node:util");
const { SandboxError } = require("./errors.cjs");
const { header, padding, END, TarReader } = require("./tar.cjs");
const { components } = require("./workspace.cjs");

const read = promisify(fs.read);
const { O_RDONLY, O_WRONLY, O_CREAT } = fs.constants;
const KINDS = { 1: "a hard link", 2: "a symlink", 3: "a character device", 4: "a block device", 6: "a FIFO" };

/**
 * Write the workspace to `dest` as a .tar.gz.
 * @param {import("./workspace.cjs").Workspace} ws @param {string} dest
 */
async function snapshot(ws, dest) {
	/** @type {{rel: string, dir: boolean, mode: number, mtime: number}[]} */
	const entries = [];
	ws.walk(
		[],
		(rel, st) => entries.push({ rel, dir: false, mode: Number(st.mode), mtime: Number(st.mtimeMs) / 1000 }),
		{
			onDir: (rel, st) => entries.push({ rel, dir: true, mode: Number(st.mode), mtime: Number(st.mtimeMs) / 1000 }),
			onDeep: (rel) => {
				throw new SandboxError(`snapshot: '${rel}' is nested too deep to archive`);
			},
		},
	);
	async function* tar() {
		for (const e of entries) {
			if (e.dir) {
				yield header({ name: `${e.rel}/`, type: "5", size: 0, mode: e.mode & 0o777, mtime: e.mtime });
				continue;
			}
			let fd;
			try {
				fd = ws.openFileSync(e.rel, O_RDONLY, false);
			} catch {
				continue; // removed or replaced since the walk
			}
			try {
				// The header's size is the file's now; a file that changes while
				// it is read is cut or zero-filled to it.
				const size = fs.fstatSync(fd).size;
				yield header({ name: e.rel, type: "0", size, mode: e.mode & 0o777, mtime: e.mtime });
				let left = size;
				while (left > 0) {
					const buf = Buffer.alloc(Math.min(left, 1 << 20));
					const { bytesRead } = await read(fd, buf, 0, buf.length, null);
					yield bytesRead === buf.length ? buf : Buffer.concat([buf.subarray(0, bytesRead), Buffer.alloc(buf.length - bytesRead)]);
					left -= buf.length;
				}
				yield padding(size);
			} finally {
				fs.closeSync(fd);
			}
		}
		yield END;
	}
	await pipeline(Readable.from(tar()), zlib.createGzip({ level: 1 }), fs.createWriteStream(dest, { mode: 0o600 }));
}

/**
 * Feed the decompressed archive at `src` to a TarReader.
 * @param {string} src @param {TarReader} reader
 */
async function readArchive(src, reader) {
	const input = fs.createReadStream(src).pipe(zlib.createGunzip());
	try {
		for await (const chunk of input) {
			reader.feed(chunk);
			if (reader.done) break;
		}
		reader.end();
	} finally {
		input.destroy();
	}
}

/**
 * The workspace path of a member, or why it is refused.
 * @param {import("./tar.cjs").Member} m @returns {string[]}
 */
function memberPath(m) {
	const shown = JSON.stringify(m.name);
	if (KINDS[/** @type {keyof typeof KINDS} */ (m.type)]) {
		throw new SandboxError(`restore refused: member ${shown} is ${KINDS[/** @type {keyof typeof KINDS} */ (m.type)]}`);
	}
	if (m.type !== "0" && m.type !== "5") throw new SandboxError(`restore refused: member ${shown} has the unsupported type '${m.type}'`);
	if (m.name.startsWith("/")) throw new SandboxError(`restore refused: member ${shown} is an absolute path`);
	if (m.name.split("/").includes("..")) throw new SandboxError(`restore refused: member ${shown} contains '..'`);
	try {
		return components(m.name, true);
	} catch (e) {
		throw new SandboxError(`restore refused: member ${shown}: ${/** @type {Error} */ (e).message}`);
	}
}

/**
 * Unpack `src` into the workspace after checking every member.
 * @param {import("./workspace.cjs").Workspace} ws @param {string} src
 */
async function restore(ws, src) {
	try {
		await readArchive(src, new TarReader((m) => void memberPath(m), null));
	} catch (e) {
		if (e instanceof SandboxError) throw e;
		throw new SandboxError(`restore refused: '${src}' is not a readable .tar.gz: ${/** @type {Error} */ (e).message}`);
	}
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
					const parts = memberPath(m);
					if (parts.length === 0) return;
					if (m.type === "5") {
						fs.closeSync(ws.openDir(parts, true, m.name));
						return;
					}
					fd = ws.openFileSync(parts.join("/"), O_WRONLY | O_CREAT, true);
					fs.ftruncateSync(fd, 0);
					fs.fchmodSync(fd, (m.mode & 0o755) | 0o600);
				},
				(chunk) => {
					if (fd !== null) fs.writeSync(fd, chunk);
				},
			),
		);
	} finally {
		finish();
	}
}

module.exports = { snapshot, restore };
