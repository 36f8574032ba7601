"use strict";
// kern's image cache as clients read it (box-cli.md §10): the key of a
// reference, whether it is cached, and the config sidecar's `user` line.

const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

/** kern's cache root for this user (box-cli.md §10). */
function cacheRoot() {
	const xdg = process.env.XDG_CACHE_HOME;
	if (xdg) return path.join(xdg, "kern", "images");
	const home = process.env.HOME || os.homedir();
	if (home) return path.join(home, ".cache", "kern", "images");
	return path.join("/tmp", `kern-cache-${process.getuid ? process.getuid() : 0}`, "images");
}

/**
 * FNV-1a 64 of the UTF-8 bytes, as 16 lowercase hex digits.
 * @param {string} s
 */
function fnv1a64(s) {
	let h = 0xcbf29ce484222325n;
	for (const b of Buffer.from(s, "utf8")) {
		h ^= BigInt(b);
		h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
	}
	return h.toString(16).padStart(16, "0");
}

/**
 * The cache key of a reference as given (no canonicalisation).
 * @param {string} ref
 */
function cacheKey(ref) {
	const last = ref.lastIndexOf(":");
	const tagged = last !== -1 && !ref.slice(last + 1).includes("/");
	const full = tagged ? ref : `${ref}:latest`;
	return `${full.replace(/[^A-Za-z0-9_-]/g, "_")}-${fnv1a64(full)}`;
}

/** @param {string} ref */
function isCached(ref) {
	return fs.existsSync(path.join(cacheRoot(), `${cacheKey(ref)}.ok`));
}

/**
 * The image's USER from the config sidecar, "" when none or unknown.
 * @param {string} ref
 */
function imageUser(ref) {
	if (ref === "host") return "";
	let text;
	try {
		text = fs.readFileSync(path.join(cacheRoot(), `${cacheKey(ref)}.image`), "utf8");
	} catch {
		return "";
	}
	for (const line of text.split("\n")) {
		if (line.startsWith("user\t")) return line.slice(5).replace(/\\(.)/g, (_, c) => (c === "t" ? "\t" : c === "n" ? "\n" : c));
	}
	return "";
}

module.exports = { cacheRoot, cacheKey, fnv1a64, isCached, imageUser };
