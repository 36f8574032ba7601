"use strict";
// user= (python-binding.md §14): a box account that is not root. kern maps
// it into the caller's subordinate range, so before the first call the
// session learns the account's host uid from a probe box that creates a
// file as the account in a scratch directory, as kern_sandbox/_account.py
// does. An account the image lacks, or one kern cannot map, fails there,
// when the Sandbox opens, with the Python package's message. (Python then
// grants that uid POSIX ACLs on the workspace; this package does not yet:
// README, "Not yet here".)

const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { spawn } = require("node:child_process");
const { SandboxError } = require("./errors.cjs");
const { boxName } = require("./argv.cjs");
const { rmtree } = require("./fsutil.cjs");
const { pyRepr } = require("./pyrepr.cjs");

const PROBE_TIMEOUT_S = 120;
const PROBE_COMMAND = ": > /kern-uid/o";

/**
 * Run `kern ARGV` with stdin on /dev/null in its own process group; its
 * stderr (trimmed), or why it did not finish.
 * @param {string} kern @param {string[]} argv @param {NodeJS.ProcessEnv} env
 * @returns {Promise<string>}
 */
function stderrOf(kern, argv, env) {
	return new Promise((resolve) => {
		/** @type {Buffer[]} */
		const err = [];
		let late = false;
		const p = spawn(kern, argv, { stdio: ["ignore", "ignore", "pipe"], env, detached: true });
		const timer = setTimeout(() => {
			late = true;
			try {
				process.kill(-(/** @type {number} */ (p.pid)), "SIGKILL");
			} catch {
				// gone
			}
		}, (PROBE_TIMEOUT_S + 10) * 1000);
		/** @type {import("node:stream").Readable} */ (p.stderr).on("data", (d) => err.push(d));
		p.on("error", (e) => {
			clearTimeout(timer);
			resolve(e.message);
		});
		p.on("close", () => {
			clearTimeout(timer);
			resolve(late ? `the probe box did not finish in ${PROBE_TIMEOUT_S} s` : Buffer.concat(err).toString("utf8").trim());
		});
	});
}

/**
 * The host uid and gid the box account `spec` has, learnt from a probe box.
 * @param {string} kern @param {import("./rules.cjs").Config} cfg @param {string} spec
 * @returns {Promise<{uid: number, gid: number}>}
 */
async function probeAccount(kern, cfg, spec) {
	const top = fs.mkdtempSync(path.join(os.tmpdir(), "kern-uid-"));
	try {
		const probe = path.join(top, "p");
		fs.mkdirSync(probe);
		fs.chmodSync(probe, 0o777); // any uid of the box may create o here
		const argv = ["box", boxName("kern-uid"), "--image", cfg.image, "--ro", "--entrypoint", "",
			"-v", `${probe}:/kern-uid`, "--workdir", "/kern-uid", "--user", spec];
		for (const cap of cfg.capDrop) argv.push("--cap-drop", cap);
		argv.push("--timeout", String(PROBE_TIMEOUT_S), "--", "sh", "-c", PROBE_COMMAND);
		const env = { ...process.env };
		if (cfg.enforceLimits) delete env.KERN_NO_SCOPE;
		else env.KERN_NO_SCOPE = "1";
		const err = await stderrOf(kern, argv, env);
		let st;
		try {
			st = fs.lstatSync(path.join(probe, "o"));
		} catch {
			throw new SandboxError(`user=${pyRepr(spec)}: could not learn the account's host uid (a probe box ` +
				`running \`sh -c '${PROBE_COMMAND}'\` as it failed): ${err.slice(-500) || "no output"}`);
		}
		if (!st.isFile()) throw new SandboxError(`user=${pyRepr(spec)}: the probe box left no regular file`);
		return { uid: st.uid, gid: st.gid };
	} finally {
		rmtree(top);
	}
}

module.exports = { probeAccount };
