"use strict";
// The `kern box` argv of every box a session starts (python-binding.md
// §9), written once, in the Python package's order (kern_sandbox/_argv.py),
// so both packages start the same boxes:
//
//   box NAME --image IMG --ro -v WS:/workspace --workdir /workspace
//   [.deps ro bind] [pyc bind] [--cap-drop C]... [--user U] [--no-uid-range]
//   --timeout T [--memory Nm] [--cpus C] [--pids-limit N] [--require-limits]
//   [--security-profile untrusted] [--apparmor P] [--egress-allow ... | --net]
//   [profiles...] [user mounts...] [--tmpfs ...]... [--env-file P] [extra...]
//   -- COMMAND

const { imageUser, userIsRoot } = require("./imagecache.cjs");
const { mountArgv, WORKSPACE } = require("./rules.cjs");
const { hex } = require("./fsutil.cjs");

const PYC_DIR = "/kern-pyc";
const DEPS = `${WORKSPACE}/.deps`;

/** `nodesbx-<12 hex>`: random, so concurrent calls never collide. @param {string} [prefix] */
const boxName = (prefix = "nodesbx") => `${prefix}-${hex(12)}`;

/**
 * @typedef {object} BoxRequest what differs between the boxes of one session
 * @property {string} name
 * @property {string[]} command
 * @property {number} kernTimeout kern's own --timeout (the backstop)
 * @property {boolean} [readOnly] --ro (default true)
 * @property {boolean} [depsRo] bind <WS>/.deps read-only over the workspace
 * @property {string | null} [pycDir] host bytecode cache, bound read-only at /kern-pyc
 * @property {"session" | "host" | "none"} [network] the session's setting, or forced
 * @property {boolean} [tmpfs] the session's tmpfs list (default true; setup boxes get none)
 * @property {string | null} [envFile]
 * @property {string[]} [extra] placed just before `--`
 * @property {string | null} [user]
 */

/**
 * The account a box runs as: the request's, the session's, else the
 * image USER (null when unknown).
 * @param {import("./rules.cjs").Config} cfg @param {string | null | undefined} requestUser
 */
function boxUser(cfg, requestUser) {
	if (requestUser != null) return requestUser;
	if (cfg.user != null) return cfg.user;
	return imageUser(cfg.image);
}

/**
 * Python's repr() of a float (the shortest digits that round-trip, fixed
 * notation for exponents -4 to 15), without a trailing ".0", as the Python
 * package writes --cpus.
 * @param {number} c
 */
function cpusText(c) {
	const [mant, e] = c.toExponential().split("e");
	const exp = Number(e);
	const digits = mant.replace(".", "").replace("-", "");
	const sign = c < 0 ? "-" : "";
	let text;
	if (exp < -4 || exp >= 16) {
		text = `${sign}${digits[0]}${digits.length > 1 ? `.${digits.slice(1)}` : ""}e${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
	} else if (exp < 0) {
		text = `${sign}0.${"0".repeat(-exp - 1)}${digits}`;
	} else {
		const whole = digits.slice(0, exp + 1).padEnd(exp + 1, "0");
		text = `${sign}${whole}.${digits.slice(exp + 1) || "0"}`;
	}
	return text.endsWith(".0") ? text.slice(0, -2) : text;
}

/** kern's --timeout for a call with this deadline: int(t) + 5. @param {number} t */
const deadlineBackstop = (t) => Math.trunc(t) + 5;

/**
 * The argv after the kern path: ["box", NAME, ..., "--", ...command].
 * @param {import("./rules.cjs").Config} cfg @param {string} workspace @param {BoxRequest} req
 */
function boxArgv(cfg, workspace, req) {
	const a = ["box", req.name, "--image", cfg.image];
	if (req.readOnly !== false) a.push("--ro");
	a.push(...mountArgv({ src: workspace, dst: WORKSPACE, readOnly: false }), "--workdir", WORKSPACE);
	if (req.depsRo) a.push(...mountArgv({ src: `${workspace}/.deps`, dst: DEPS, readOnly: true }));
	if (req.pycDir) a.push(...mountArgv({ src: req.pycDir, dst: PYC_DIR, readOnly: true }));
	for (const c of cfg.capDrop) a.push("--cap-drop", c);
	const explicit = req.user != null ? req.user : cfg.user;
	if (explicit && !userIsRoot(explicit)) a.push("--user", explicit);
	// Box root is the caller then: files it writes stay the caller's, and
	// with every capability dropped a range map would buy nothing.
	if (cfg.capDrop.includes("ALL") && userIsRoot(boxUser(cfg, req.user))) a.push("--no-uid-range");
	a.push("--timeout", String(req.kernTimeout));
	if (cfg.memoryMb != null) a.push("--memory", `${cfg.memoryMb}m`);
	if (cfg.cpus != null) a.push("--cpus", cpusText(cfg.cpus));
	if (cfg.pids != null) a.push("--pids-limit", String(cfg.pids));
	if (cfg.requireLimits) a.push("--require-limits");
	if (cfg.securityProfile) a.push("--security-profile", cfg.securityProfile);
	if (cfg.apparmor) a.push("--apparmor", cfg.apparmor);
	const net = req.network || "session";
	if (net === "host" || (net === "session" && cfg.network)) a.push("--net");
	else if (net === "session" && cfg.egressAllow.length) a.push("--egress-allow", cfg.egressAllow.join(","));
	a.push(...cfg.profiles);
	for (const m of cfg.mounts) a.push(...mountArgv(m));
	if (req.tmpfs !== false) for (const [p, size] of cfg.tmpfs) a.push("--tmpfs", `${p}:${size}`);
	if (req.envFile) a.push("--env-file", req.envFile);
	if (req.extra) a.push(...req.extra);
	a.push("--", ...req.command);
	return a;
}

module.exports = { boxArgv, boxName, boxUser, deadlineBackstop, cpusText, PYC_DIR, DEPS };
