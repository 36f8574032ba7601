"use strict";
// Reading kern's image cache (box-cli.md §9-§10): whether an image is
// cached, its USER, and the identity the bytecode cache keys on. The
// package only reads these files; kern writes them.

const fs = require("node:fs");
const path = require("node:path");

const HOST_IMAGE = "host";
const SIDECAR_HEAD = 4096;
// A sidecar is a few lines; anything bigger is not read past this.
const SIDECAR_MAX = 1 << 20;

/** `$XDG_CACHE_HOME/kern/images`, else `~/.cache/kern/images`, else `/tmp/kern-cache-<uid>/images`. */
function cacheRoot() {
	const xdg = process.env.XDG_CACHE_HOME || "";
	if (xdg) return path.join(xdg, "kern", "images");
	const home = process.env.HOME || "";
	if (home) return path.join(home, ".cache", "kern", "images");
	return `/tmp/kern-cache-${process.getuid ? process.getuid() : 0}/images`;
}

/** @param {string} ref */
function hasTagOrDigest(ref) {
	const colon = ref.lastIndexOf(":");
	return colon >= 0 && !ref.slice(colon).includes("/");
}

/**
 * FNV-1a 64 of the UTF-8 bytes, as 16 lowercase hex digits.
 * @param {string} s
 */
function fnv1a64(s) {
	let h = 0xcbf29ce484222325n;
	for (const b of Buffer.from(s, "utf8")) h = ((h ^ BigInt(b)) * 0x100000001b3n) & 0xffffffffffffffffn;
	return h.toString(16).padStart(16, "0");
}

/** The cache key of a reference as given (no canonicalisation). @param {string} ref */
function cacheKey(ref) {
	const full = hasTagOrDigest(ref) ? ref : `${ref}:latest`;
	return `${full.replace(/[^A-Za-z0-9_-]/g, "_")}-${fnv1a64(full)}`;
}

/** `registry/repository:tag` or `registry/repository@sha256:...` (box-cli.md §9.1). @param {string} ref */
function canonical(ref) {
	if (ref === HOST_IMAGE) return HOST_IMAGE;
	const at = ref.indexOf("@");
	let name = at === -1 ? ref : ref.slice(0, at);
	const digest = at === -1 ? "" : ref.slice(at + 1);
	let tag = "";
	const colon = name.lastIndexOf(":");
	if (colon >= 0 && !name.slice(colon).includes("/")) {
		tag = name.slice(colon + 1);
		name = name.slice(0, colon);
	}
	const slash = name.indexOf("/");
	const first = slash === -1 ? name : name.slice(0, slash);
	const rest = slash === -1 ? "" : name.slice(slash + 1);
	let registry;
	let repo;
	if (rest && (first.includes(".") || first.includes(":") || first === "localhost")) {
		registry = first;
		repo = rest;
	} else {
		registry = "registry-1.docker.io";
		repo = name;
	}
	if (registry === "docker.io" || registry === "index.docker.io") registry = "registry-1.docker.io";
	if (registry === "registry-1.docker.io" && !repo.includes("/")) repo = `library/${repo}`;
	return digest ? `${registry}/${repo}@${digest}` : `${registry}/${repo}:${tag || "latest"}`;
}

/** @param {string} ref @param {string} ext */
const sidecar = (ref, ext) => path.join(cacheRoot(), `${cacheKey(ref)}${ext}`);

/** kern has the image (clients skip `kern pull`). @param {string} ref */
function isCached(ref) {
	return ref === HOST_IMAGE || fs.existsSync(sidecar(ref, ".ok"));
}

/** The first 4096 bytes of `<key>.image` (empty when absent). @param {string} ref */
function sidecarHead(ref) {
	let fd;
	try {
		fd = fs.openSync(sidecar(ref, ".image"), "r");
	} catch {
		return Buffer.alloc(0);
	}
	try {
		const buf = Buffer.alloc(SIDECAR_HEAD);
		return buf.subarray(0, fs.readSync(fd, buf, 0, SIDECAR_HEAD, 0));
	} finally {
		fs.closeSync(fd);
	}
}

/** `<key>.ok` mtime (ns) and size, or "" when absent. @param {string} ref */
function okStamp(ref) {
	try {
		const st = fs.statSync(sidecar(ref, ".ok"), { bigint: true });
		return `${st.mtimeNs}:${st.size}`;
	} catch {
		return "";
	}
}

/** Sidecar values escape backslash, TAB and newline. @param {string} v */
function unescape(v) {
	return v.replace(/\\(.)/gs, (_, c) => (c === "t" ? "\t" : c === "n" ? "\n" : c));
}

/**
 * The image USER from the sidecar's `user` line: null when the sidecar is
 * absent or unreadable, "" when the image sets none. The host image runs
 * as root.
 * @param {string} ref @returns {string | null}
 */
function imageUser(ref) {
	if (ref === HOST_IMAGE) return "";
	let text;
	try {
		const fd = fs.openSync(sidecar(ref, ".image"), "r");
		try {
			const buf = Buffer.alloc(SIDECAR_MAX);
			text = buf.subarray(0, fs.readSync(fd, buf, 0, SIDECAR_MAX, 0)).toString("utf8");
		} finally {
			fs.closeSync(fd);
		}
	} catch {
		return null;
	}
	if (!text.startsWith("fmt\t")) return null;
	for (const line of text.split("\n")) {
		const tab = line.indexOf("\t");
		const key = tab === -1 ? line : line.slice(0, tab);
		if (key === "user") return unescape(tab === -1 ? "" : line.slice(tab + 1));
	}
	return null;
}

/** A --user SPEC (or image USER) that means root: empty, 0 or root, any group. @param {string | null | undefined} spec */
function userIsRoot(spec) {
	if (!spec) return true;
	const name = spec.split(":")[0];
	return name === "0" || name === "root";
}

module.exports = { HOST_IMAGE, cacheRoot, cacheKey, canonical, fnv1a64, isCached, sidecarHead, okStamp, imageUser, userIsRoot };
