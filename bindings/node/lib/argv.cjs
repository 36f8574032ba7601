"use strict";
// The `kern box` argv of a call (python-binding.md §9), in the order the
// Python binding writes it, so both packages start the same boxes.

const { imageUser } = require("./imagecache.cjs");

/**
 * One bind, as `-v SRC:DST[:ro]`, or as `--mount` when a path holds `:` or
 * `,` (box-cli.md §2.1: a quoted field may contain both; `""` is one `"`).
 * @param {string} src @param {string} dst @param {boolean} ro
 * @returns {string[]}
 */
function bind(src, dst, ro) {
	if (!/[:,]/.test(src) && !/[:,]/.test(dst)) return ["-v", `${src}:${dst}${ro ? ":ro" : ""}`];
	const q = (/** @type {string} */ field) => (/[:,"]/.test(field) ? `"${field.replace(/"/g, '""')}"` : field);
	return ["--mount", ["type=bind", q(`src=${src}`), q(`dst=${dst}`), ...(ro ? ["ro"] : [])].join(",")];
}

/**
 * Does the box run as root? An explicit user, else the image's USER.
 * @param {{user: string | null, image: string}} cfg
 */
function boxUserIsRoot(cfg) {
	const u = cfg.user != null ? cfg.user : imageUser(cfg.image);
	if (!u) return true;
	const name = u.split(":")[0];
	return name === "root" || name === "0";
}

/**
 * @typedef {object} BoxSpec
 * @property {string} name
 * @property {number} timeoutS the deadline the kern backstop is derived from (kern gets int(t)+5)
 * @property {string[]} command
 * @property {string | null} [envFile]
 * @property {"run" | "setup" | "compile" | "kernel" | "pool" | "resident"} [purpose]
 * @property {boolean} [depsRo] bind <WS>/.deps read-only
 * @property {string | null} [pyc] host directory of the bytecode cache
 * @property {string[]} [extra] flags placed right before `--` (e.g. -d --init --label)
 * @property {number | null} [kernTimeout] an explicit --timeout value
 */

/**
 * @param {ReturnType<typeof import("./rules.cjs").checkOptions>} cfg
 * @param {string} ws the workspace (realpath)
 * @param {BoxSpec} spec
 * @returns {string[]}
 */
function boxArgv(cfg, ws, spec) {
	const purpose = spec.purpose || "run";
	const a = ["box", spec.name, "--image", cfg.image, "--ro", ...bind(ws, "/workspace", false), "--workdir", "/workspace"];
	if (spec.depsRo) a.push(...bind(`${ws}/.deps`, "/workspace/.deps", true));
	if (spec.pyc) a.push(...bind(spec.pyc, "/kern-pyc", true));
	for (const c of cfg.capDrop) a.push("--cap-drop", c);
	if (cfg.user != null) a.push("--user", cfg.user);
	if (cfg.capDrop.some((c) => c.toUpperCase() === "ALL") && boxUserIsRoot(cfg)) a.push("--no-uid-range");
	const kt = spec.kernTimeout != null ? spec.kernTimeout : Math.trunc(spec.timeoutS) + 5;
	a.push("--timeout", String(kt));
	if (cfg.memoryMb != null) a.push("--memory", `${cfg.memoryMb}m`);
	if (cfg.cpus != null) a.push("--cpus", String(cfg.cpus));
	if (cfg.pids != null) a.push("--pids-limit", String(cfg.pids));
	if (cfg.requireLimits) a.push("--require-limits");
	if (cfg.securityProfile) a.push("--security-profile", cfg.securityProfile);
	if (cfg.apparmor) a.push("--apparmor", cfg.apparmor);
	if (purpose === "setup") a.push("--net");
	else if (purpose !== "compile" && cfg.egressAllow) a.push("--egress-allow", cfg.egressAllow.join(","));
	else if (purpose !== "compile" && cfg.network) a.push("--net");
	if (cfg.profiles) a.push(...cfg.profiles);
	for (const m of cfg.mounts) a.push(...bind(m.src, m.dst, m.ro));
	// The setup box has no default /tmp; tmpfs the caller asked for stays.
	const tmpfs = purpose === "setup" && cfg.tmpfsDefault ? [] : cfg.tmpfs;
	for (const t of tmpfs) a.push("--tmpfs", `${t.path}:${t.size}`);
	if (spec.envFile) a.push("--env-file", spec.envFile);
	if (spec.extra) a.push(...spec.extra);
	a.push("--", ...spec.command);
	return a;
}

module.exports = { boxArgv, bind, boxUserIsRoot };
