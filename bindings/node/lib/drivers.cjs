"use strict";
// The Python sources that run inside a box: the one-shot runner
// (python-binding.md §15.1) and the kernel driver (§15.2). They are the
// Python package's own files, never a second copy kept by hand: from a
// checkout they are read from bindings/python/kern_sandbox/, and `npm
// pack` copies them into py/ (scripts/copy-py.cjs; a test checks the
// packed copies equal the originals).

const fs = require("node:fs");
const path = require("node:path");
const { SandboxError } = require("./errors.cjs");

const PACKED = path.join(__dirname, "..", "py");
const CHECKOUT = path.join(__dirname, "..", "..", "python", "kern_sandbox");
// Every file the package reads from there.
const FILES = ["_cell.py", "_oneshot.py", "_kernel_driver.py"];

/** @type {Map<string, string>} */
const cache = new Map();

/**
 * The text of one in-box Python file.
 * @param {string} name e.g. "_runner.py"
 */
function pySource(name) {
	const hit = cache.get(name);
	if (hit !== undefined) return hit;
	for (const dir of [PACKED, CHECKOUT]) {
		try {
			const text = fs.readFileSync(path.join(dir, name), "utf8");
			cache.set(name, text);
			return text;
		} catch {
			// try the next place
		}
	}
	throw new SandboxError(`kern-sandbox is incomplete: ${name} is neither in ${PACKED} nor in ${CHECKOUT}`);
}

module.exports = { pySource, PACKED, CHECKOUT, FILES };
