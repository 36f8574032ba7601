"use strict";
// The shared bytecode cache (python-binding.md §6; the Python package's
// _pyc.py, whose cache directories this shares). Images such as
// python:3.12-slim ship without compiled bytecode and run boxes have a
// read-only root, so every call would compile what it imports again. Once
// per image a `kern-pyc-<8 hex>` box compiles the image's sys.path with
// PYTHONPYCACHEPREFIX pointing at a host directory; later boxes get it
// read-only at /kern-pyc. It is used only if non-empty and holding nothing
// but .pyc files, and only for the image it was built from (its identity
// includes kern's cache sidecars, so a re-pulled image gets a fresh one).
// The host image is left out: the host's Python has its bytecode.

const fs = require("node:fs");
const path = require("node:path");
const crypto = require("node:crypto");
const { HOST_IMAGE, canonical, okStamp, sidecarHead } = require("./imagecache.cjs");
const { BoxProcess } = require("./spawn.cjs");
const { PYC_DIR } = require("./argv.cjs");
const { hex, rmtree } = require("./fsutil.cjs");

const BUILD_TIMEOUT_S = 600;
// Compiles every directory of the image's sys.path into the prefix.
const COMPILE =
	"import compileall, os, sys\n" +
	"for p in sys.path:\n" +
	"    if p.startswith('/') and os.path.isdir(p):\n" +
	"        compileall.compile_dir(p, quiet=2, workers=1)\n";

function cacheHome() {
	const xdg = process.env.XDG_CACHE_HOME || "";
	const base = xdg || path.join(process.env.HOME || "/tmp", ".cache");
	return path.join(base, "kern-sandbox", "pyc");
}

/** What the cache of `image` must have been built from. @param {string} image */
function identity(image) {
	const h = crypto.createHash("sha256");
	h.update(Buffer.from(`${canonical(image)}\0${okStamp(image)}\0`));
	h.update(sidecarHead(image));
	return h.digest("hex");
}

/** @param {string} image @returns {[string, string]} the tree and its identity file */
function paths(image) {
	const key = crypto.createHash("sha256").update(canonical(image)).digest("hex");
	const root = cacheHome();
	return [path.join(root, key), path.join(root, `${key}.id`)];
}

/** Non-empty, only directories and .pyc regular files, no links. @param {string} dir */
function validTree(dir) {
	let found = false;
	/** @param {string} d @returns {boolean} */
	const check = (d) => {
		for (const e of fs.readdirSync(d, { withFileTypes: true })) {
			const p = path.join(d, e.name);
			if (e.isSymbolicLink()) return false;
			if (e.isDirectory()) {
				if (!check(p)) return false;
			} else if (e.isFile() && e.name.endsWith(".pyc")) found = true;
			else return false;
		}
		return true;
	};
	try {
		return check(dir) && found;
	} catch {
		return false;
	}
}

/** The cache directory to bind for `image`, if one is built and current. @param {string} image */
function usable(image) {
	if (image === HOST_IMAGE) return null;
	const [tree, idFile] = paths(image);
	try {
		if (fs.readFileSync(idFile, "ascii").trim() !== identity(image)) return null;
	} catch {
		return null;
	}
	try {
		return fs.statSync(tree).isDirectory() ? tree : null;
	} catch {
		return null;
	}
}

/** @param {string} text */
function warn(text) {
	try {
		process.stderr.write(`kern-sandbox: warning: ${text}\n`);
	} catch {
		// nowhere to say it
	}
}

/** Builds in flight, killed if the process exits first (they would leave a staging directory). */
const building = new Set();
process.on("exit", () => {
	for (const b of building) {
		b.box.killGroup();
		rmtree(b.work);
	}
});

/**
 * Build the cache of `image` and return its directory, or null (with a
 * `kern-sandbox:` warning on stderr) when it cannot be built. Runs in the
 * background: it never keeps the process alive.
 * @param {string} kern @param {string} image @param {boolean} enforceLimits
 * @returns {Promise<string | null>}
 */
async function build(kern, image, enforceLimits) {
	if (image === HOST_IMAGE) return null;
	const current = usable(image);
	if (current && validTree(current)) return current;
	const [tree, idFile] = paths(image);
	const want = identity(image);
	fs.mkdirSync(path.dirname(tree), { recursive: true, mode: 0o700 });
	const work = `${tree}.tmp-${hex(8)}`;
	fs.mkdirSync(work, 0o700);
	const name = `kern-pyc-${hex(8)}`;
	const argv = ["box", name, "--image", image, "--ro", "--cap-drop", "ALL", "--user", "0", "--no-uid-range", "--memory", "512m",
		"--pids-limit", "256", "--timeout", String(BUILD_TIMEOUT_S + 5), "-v", `${work}:${PYC_DIR}`,
		"--env", `PYTHONPYCACHEPREFIX=${PYC_DIR}`, "--", "python3", "-c", COMPILE];
	const env = { ...process.env };
	if (enforceLimits) delete env.KERN_NO_SCOPE;
	else env.KERN_NO_SCOPE = "1";
	/** @type {{box: BoxProcess, work: string} | null} */
	let entry = null;
	try {
		const box = await BoxProcess.start({ kern, argv, env, name, alive: false, onStdout: () => undefined, onStderr: () => undefined });
		entry = { box, work };
		building.add(entry);
		box.unref();
		const timer = setTimeout(() => box.killGroup(), BUILD_TIMEOUT_S * 1000);
		timer.unref();
		await box.exited;
		clearTimeout(timer);
		const status = box.exitCode;
		if (status !== 0 || !validTree(work)) {
			warn(`the bytecode cache for ${image} could not be built (exit ${status}); boxes run without it`);
			return null;
		}
		if (fs.existsSync(tree)) rmtree(tree);
		try {
			fs.renameSync(work, tree);
		} catch {
			return usable(image); // another session finished first
		}
		const staged = `${idFile}.tmp-${hex(8)}`;
		fs.writeFileSync(staged, `${want}\n`, "ascii");
		fs.renameSync(staged, idFile);
		return tree;
	} catch (e) {
		warn(`the bytecode cache for ${image} could not be built (${/** @type {Error} */ (e).message})`);
		return null;
	} finally {
		if (entry) building.delete(entry);
		if (fs.existsSync(work)) rmtree(work);
	}
}

module.exports = { usable, build, validTree, identity, cacheHome };
