"use strict";
// Small host-side helpers: random names, removing a tree a box wrote.

const fs = require("node:fs");
const crypto = require("node:crypto");

/** @param {number} n hex digits */
const hex = (n) => crypto.randomBytes(Math.ceil(n / 2)).toString("hex").slice(0, n);

/**
 * Remove a tree whatever modes a box left in it (a directory it made
 * read-only or unreadable), never following a symlink out of it.
 * @param {string} root
 */
function rmtree(root) {
	try {
		fs.rmSync(root, { recursive: true, force: true });
		return;
	} catch {
		// a directory without write or search permission: open it up below
	}
	/** @param {string} p */
	const open = (p) => {
		let st;
		try {
			st = fs.lstatSync(p);
		} catch {
			return;
		}
		if (!st.isDirectory()) return;
		try {
			fs.chmodSync(p, 0o700);
		} catch {
			return;
		}
		for (const name of fs.readdirSync(p)) open(`${p}/${name}`);
	};
	open(root);
	fs.rmSync(root, { recursive: true, force: true });
}

module.exports = { hex, rmtree };
