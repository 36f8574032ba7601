"use strict";
// Finding the kern binary and checking it is kern (python-binding.md §1).

const fs = require("node:fs");
const path = require("node:path");
const { execFileSync } = require("node:child_process");
const { SandboxError } = require("./errors.cjs");

const INSTALL_HINT =
	"kern was not found on PATH: install it (from a kern checkout, ./install.sh; or " +
	"curl -fsSL https://raw.githubusercontent.com/getkern/kern/main/install.sh | sh) " +
	"or point $KERN_BIN at the binary";

/**
 * @typedef {{path: string, version: [number, number, number] | null, execReportsStart: boolean}} Kern
 */

/** @type {Map<string, Kern>} identity key -> checked kern */
const checked = new Map();

/** @param {string} p */
function isExecutableFile(p) {
	try {
		const st = fs.statSync(p);
		if (!st.isFile()) return false;
		fs.accessSync(p, fs.constants.X_OK);
		return true;
	} catch {
		return false;
	}
}

/** The candidate path: $KERN_BIN when set, else `kern` on PATH. */
function candidate() {
	const env = process.env.KERN_BIN;
	if (env) {
		if (!isExecutableFile(env)) throw new SandboxError(`$KERN_BIN='${env}' is not an executable file`);
		return path.resolve(env);
	}
	for (const dir of (process.env.PATH || "").split(":")) {
		if (!dir) continue;
		const p = path.join(dir, "kern");
		if (isExecutableFile(p)) return p;
	}
	throw new SandboxError(INSTALL_HINT);
}

/** @param {string} text @returns {[number, number, number] | null} */
function parseVersion(text) {
	const m = /(\d+)\.(\d+)\.(\d+)/.exec(text);
	return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : null;
}

/** @param {[number, number, number] | null} v @param {[number, number, number]} min */
function atLeast(v, min) {
	if (!v) return false;
	for (let i = 0; i < 3; i++) if (v[i] !== min[i]) return v[i] > min[i];
	return true;
}

/**
 * The kern to run, checked: `kern --version` must exit 0 with a first line
 * starting "kern ". The check is remembered per file identity (realpath,
 * device, inode, size, mtime), so a binary replaced in place is checked
 * again, and costs a stat otherwise.
 * @returns {Kern}
 */
function locateKern() {
	if (process.platform !== "linux") {
		throw new SandboxError(
			`kern is Linux-only (this is ${process.platform}): run this inside a Linux VM ` +
				"(colima, Lima, OrbStack, UTM or WSL2)",
		);
	}
	const p = candidate();
	const real = fs.realpathSync.native(p);
	const st = fs.statSync(real, { bigint: true });
	const key = [real, st.dev, st.ino, st.size, st.mtimeNs].join("\0");
	const hit = checked.get(key);
	if (hit) return hit;
	let out;
	try {
		out = execFileSync(p, ["--version"], {
			timeout: 10000,
			stdio: ["ignore", "pipe", "pipe"],
			encoding: "utf8",
		});
	} catch (e) {
		const err = /** @type {{status?: number | null, stderr?: string, message: string}} */ (e);
		const why = err.status != null ? `--version exited ${err.status}` : err.message;
		throw new SandboxError(`'${p}' is not kern: ${why}`);
	}
	const first = out.split("\n")[0];
	if (!first.startsWith("kern ")) {
		throw new SandboxError(`'${p}' is not kern: --version printed ${JSON.stringify(first.slice(0, 80))}`);
	}
	const version = parseVersion(first);
	/** @type {Kern} */
	// The resolved path, as the Python package keeps it (it is part of the
	// box key both packages compute).
	const kern = { path: real, version, execReportsStart: atLeast(version, [0, 30, 2]) };
	checked.set(key, kern);
	return kern;
}

module.exports = { locateKern, parseVersion, atLeast };
