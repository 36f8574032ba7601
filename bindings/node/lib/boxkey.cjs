"use strict";
// What makes a box this session's box, as one hash (python-binding.md §13,
// §14; the Python package's _boxkey.py, byte for byte, so a resident box a
// Python session started is reused by a Node session configured the same,
// and the other way round). It covers the dry argv of a session box (its
// random name, env-file path and command replaced by placeholders; the
// env-file's lines added), the kern binary and version, whether limits are
// enforced, every KERN_* variable but KERN_BIN, and, with profiles, kern's
// own --show-config of such a box (kern.toml may change under a session).

const crypto = require("node:crypto");
const { execFile } = require("node:child_process");

const PROBE_NAME = "kern-fingerprint-probe";
const PROBE_TIMEOUT_MS = 30 * 1000;

/**
 * @typedef {object} KeySession what a Sandbox lends to compute its key
 * @property {import("./rules.cjs").Config} cfg
 * @property {() => import("./locate.cjs").Kern} kern
 * @property {(command: string[], timeoutS: number, req: Partial<import("./argv.cjs").BoxRequest>) => string[]} argv
 * @property {(withPyc: boolean) => string} envLines
 * @property {() => boolean} withPyc
 * @property {() => Record<string, string | undefined>} kernEnv
 */

/**
 * kern's own view of a session box with profiles; with none (the probe
 * failed), a key no box can match.
 * @param {KeySession} s @param {number} budgetS @returns {Promise<Buffer>}
 */
function fingerprint(s, budgetS) {
	const argv = s.argv(["true"], budgetS, { name: PROBE_NAME, extra: ["--show-config"] });
	return new Promise((resolve) => {
		execFile(s.kern().path, argv, { encoding: "buffer", timeout: PROBE_TIMEOUT_MS }, (err, stdout) => {
			resolve(err ? crypto.randomBytes(32) : stdout);
		});
	});
}

/**
 * sha256 hex of the session's box configuration.
 * @param {KeySession} s @param {number} budgetS
 */
async function configKey(s, budgetS) {
	const kern = s.kern();
	const h = crypto.createHash("sha256");
	const parts = [
		kern.path,
		(kern.version || [0, 0, 0]).join("."),
		...s.argv(["<cell>"], budgetS, { name: "<name>", envFile: "<env-file>", kernTimeout: 0 }),
		`--enforce-limits=${s.cfg.enforceLimits ? 1 : 0}`,
		s.envLines(s.withPyc()),
	];
	for (const p of parts) h.update(Buffer.from(`${p}\0`, "utf8"));
	for (const name of Object.keys(process.env).sort()) {
		const v = process.env[name];
		if (name.startsWith("KERN_") && name !== "KERN_BIN" && v) h.update(Buffer.from(`${name}=${v}\0`, "utf8"));
	}
	if (s.cfg.profiles.length) h.update(await fingerprint(s, budgetS));
	return h.digest("hex");
}

module.exports = { configKey };
