"use strict";
// `npm pack` hook: copy the in-box Python files of the Python package into
// py/ so the tarball carries them (prepack), and remove the copies again
// afterwards (postpack, with --clean), so a checkout never holds two.

const fs = require("node:fs");
const path = require("node:path");
const { PACKED, CHECKOUT, FILES } = require("../lib/drivers.cjs");

fs.rmSync(PACKED, { recursive: true, force: true });
if (process.argv[2] !== "--clean") {
	fs.mkdirSync(PACKED);
	for (const name of FILES) fs.copyFileSync(path.join(CHECKOUT, name), path.join(PACKED, name));
}
