"use strict";
// A Sandbox's options, checked before any box starts (python-binding.md
// §3, §7): every relaxation of isolation is an explicit option, and some
// are refused even when asked for. The rules are the Python package's
// (kern_sandbox/rules.py, _config.py); option names are camelCase here.

const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { SandboxError, MountRefused } = require("./errors.cjs");
const { pyRepr } = require("./pyrepr.cjs");

const WORKSPACE = "/workspace";
const DEFAULT_IMAGE = "python:3.12-slim";

// Sources refused together with everything below them.
const SYSTEM_TREES = ["/etc", "/root", "/boot", "/proc", "/sys", "/dev"];
const DOCKER_SOCKETS = ["/var/run/docker.sock", "/run/docker.sock"];
// A path with one of these components (or component pairs) holds credentials.
const CREDENTIAL_NAMES = new Set([
	".ssh", ".aws", ".gnupg", ".kube", ".docker", ".azure", ".oci", ".terraform.d", ".password-store",
	".netrc", ".git-credentials", ".pypirc", ".npmrc", ".databrickscfg", ".boto", ".s3cfg", ".rclone.conf",
]);
const CREDENTIAL_CONFIG = new Set(["gcloud", "gh", "doctl", "rclone"]);

const PROFILE = /^(vcpu|vgpio|vdisk):[A-Za-z0-9][A-Za-z0-9._-]*$/;
const APPARMOR = /^[A-Za-z0-9_.][A-Za-z0-9_.-]{0,127}$/;
const LABEL = /^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
const TLD = /^[A-Za-z]{2,63}$/;
const TMPFS_SIZE = /^([1-9][0-9]*)([kKmMgGtT])$/;
const ENV_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;
const CAP_NAME = /^[A-Za-z_]{1,32}$/;
const USER_SPEC = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,31}(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,31})?$/;
/** @type {Record<string, number>} */
const UNIT_MIB = { k: 1 / 1024, m: 1, g: 1024, t: 1024 * 1024 };

/**
 * @typedef {object} Mount a checked bind
 * @property {string} src the host path, resolved
 * @property {string} dst the box path
 * @property {boolean} readOnly
 */

/** @param {string} p @param {string} top p is top or below it */
function under(p, top) {
	return p === top || p.startsWith(`${top.replace(/\/+$/, "")}/`);
}

/** os.path.realpath: symlinks of the existing part resolved, the rest kept. @param {string} p */
function realpath(p) {
	let head = path.resolve(p);
	/** @type {string[]} */
	const rest = [];
	for (;;) {
		try {
			return path.join(fs.realpathSync(head), ...rest);
		} catch {
			const parent = path.dirname(head);
			if (parent === head) return path.resolve(p);
			rest.unshift(path.basename(head));
			head = parent;
		}
	}
}

/** The home directory of a local user (/etc/passwd), or null. @param {string} name */
function passwdHome(name) {
	let text;
	try {
		text = fs.readFileSync("/etc/passwd", "utf8");
	} catch {
		return null;
	}
	for (const line of text.split("\n")) {
		const f = line.split(":");
		if (f.length >= 7 && f[0] === name) return f[5];
	}
	return null;
}

/**
 * os.path.expanduser: `~` and `~/...` are $HOME's, `~user/...` that
 * user's home (a path like `~root/.ssh` is checked as /root/.ssh); an
 * unknown user leaves the path as it is.
 * @param {string} p
 */
function expandUser(p) {
	if (!p.startsWith("~")) return p;
	const slash = p.indexOf("/");
	const name = slash === -1 ? p.slice(1) : p.slice(1, slash);
	const home = name ? passwdHome(name) : process.env.HOME || os.homedir();
	if (!home) return p;
	return (home === "/" ? "" : home.replace(/\/+$/, "")) + (slash === -1 ? "" : p.slice(slash)) || "/";
}

function home() {
	const h = process.env.HOME || "";
	return h ? realpath(h) : "";
}

/**
 * kern's runtime, cache, config and data directories, from the environment and their
 * defaults (every runtime candidate of kern box's ENVIRONMENT section, man kern-box).
 */
function kernStateDirs() {
	const uid = process.getuid ? process.getuid() : 0;
	const h = process.env.HOME || "";
	const dirs = [`/run/user/${uid}/kern`, `/dev/shm/kern-${uid}`, `/tmp/kern-${uid}`, `/tmp/kern-cache-${uid}`];
	if (uid === 0) dirs.push("/run/kern");
	const stateHome = process.env.XDG_STATE_HOME || "";
	if (stateHome) dirs.push(path.join(stateHome, "kern", "run"));
	else if (h) dirs.push(path.join(h, ".local", "state", "kern", "run"));
	for (const [v, def] of [["XDG_RUNTIME_DIR", ""], ["XDG_CACHE_HOME", ".cache"], ["XDG_CONFIG_HOME", ".config"], ["XDG_DATA_HOME", ".local/share"]]) {
		const value = process.env[v] || "";
		if (value) dirs.push(path.join(value, "kern"));
		if (def && h) dirs.push(path.join(h, def, "kern"));
	}
	return dirs.map(realpath);
}

/** @param {string} p @returns {string | null} */
function credentialComponent(p) {
	const parts = p.split("/").filter(Boolean);
	for (let i = 0; i < parts.length; i++) {
		if (CREDENTIAL_NAMES.has(parts[i])) return parts[i];
		if (parts[i] === ".config" && i + 1 < parts.length && CREDENTIAL_CONFIG.has(parts[i + 1])) return `.config/${parts[i + 1]}`;
	}
	return null;
}

/** @param {unknown} value @param {string} what @returns {string} */
function checkClean(value, what) {
	if (typeof value !== "string" || !value) throw new SandboxError(`${what} must be a non-empty string, not ${shown(value)}`);
	if (value.includes("\0") || value.includes("\n")) throw new MountRefused(`${what} ${pyRepr(value)} contains a NUL or newline`);
	return value;
}

/** @param {unknown} v */
function shown(v) {
	return typeof v === "string" ? pyRepr(v) : v === undefined ? "undefined" : JSON.stringify(v) ?? String(v);
}

/**
 * The resolved host path of a bind source, or MountRefused. Refused: `/`,
 * $HOME and any directory that contains it; the host's system trees and
 * everything in them; the docker socket; kern's own state; any path with a
 * credential component. The path as given and its resolved form are both
 * checked.
 * @param {unknown} src @param {string} [what]
 */
function checkSource(src, what = "mount source") {
	const s = checkClean(src, what);
	const given = path.resolve(expandUser(s));
	const real = realpath(given);
	const h = home();
	const sockets = [...DOCKER_SOCKETS.map(realpath), ...DOCKER_SOCKETS];
	const state = kernStateDirs();
	for (const p of new Set([given, real])) {
		const cred = credentialComponent(p);
		if (cred) throw new MountRefused(`refusing to mount ${s}: it is inside a credential directory (${cred})`);
		if (p === "/" || (h && p === h)) {
			throw new MountRefused(`refusing to mount ${s}: it is ${p === "/" ? "the host's root" : "your home directory ($HOME)"}`);
		}
		if (h && under(h, p)) throw new MountRefused(`refusing to mount ${s}: it contains your home directory (${h})`);
		for (const top of SYSTEM_TREES) {
			if (under(p, top)) throw new MountRefused(`refusing to mount ${s}: ${top} is a host system path`);
		}
		for (const guarded of [...sockets, ...state]) {
			if (under(p, guarded) || under(guarded, p)) {
				const which = sockets.includes(guarded) ? "the docker socket" : "kern's own state";
				throw new MountRefused(`refusing to mount ${s}: it ${under(p, guarded) ? "is" : "contains"} ${which} (${guarded})`);
			}
		}
	}
	return real;
}

/** @param {unknown} dst @param {string} what */
function normalTarget(dst, what) {
	const d = checkClean(dst, what);
	if (!d.startsWith("/")) throw new MountRefused(`${what} ${pyRepr(d)} must be an absolute path`);
	const parts = d.split("/").filter(Boolean);
	if (parts.some((p) => p === "." || p === "..")) throw new MountRefused(`${what} ${pyRepr(d)} has a '.' or '..' component`);
	return `/${parts.join("/")}`;
}

/** A bind target: absolute, clean, not /, /dev, /workspace, nothing under /proc or /sys. @param {unknown} dst */
function checkTarget(dst) {
	const t = normalTarget(dst, "mount target");
	if (t === "/" || t === "/dev" || t === WORKSPACE || under(t, "/proc") || under(t, "/sys")) {
		throw new MountRefused(`refusing mount target ${t}`);
	}
	return t;
}

/**
 * `{hostSrc: boxDst}` or `{hostSrc: [boxDst, "ro" | "rw"]}`.
 * @param {unknown} mounts @returns {Mount[]}
 */
function checkMounts(mounts) {
	if (mounts == null) return [];
	if (typeof mounts !== "object" || Array.isArray(mounts)) throw new SandboxError("mounts must be an object {hostSrc: boxDst}");
	/** @type {Mount[]} */
	const out = [];
	for (const [src, spec] of Object.entries(/** @type {Record<string, unknown>} */ (mounts))) {
		let dst = spec;
		let mode = "rw";
		if (Array.isArray(spec)) {
			if (spec.length !== 2 || (spec[1] !== "ro" && spec[1] !== "rw")) {
				throw new SandboxError(`mounts[${pyRepr(src)}] must be a box path or [path, 'ro'|'rw'], not ${shown(spec)}`);
			}
			[dst, mode] = spec;
		}
		out.push({ src: checkSource(src), dst: checkTarget(dst), readOnly: mode === "ro" });
	}
	const targets = out.map((m) => m.dst);
	if (new Set(targets).size !== targets.length) throw new MountRefused(`two mounts share one target: [${targets.sort().map(pyRepr).join(", ")}]`);
	return out;
}

/** MiB of a tmpfs size with a unit. @param {string} size */
function tmpfsMib(size) {
	const m = TMPFS_SIZE.exec(size);
	if (!m) {
		throw new MountRefused(`tmpfs size ${pyRepr(size)} must be a number with a unit (k, m, g, t), e.g. '64m'; bare numbers are bytes to kern and 0 is unlimited`);
	}
	return Number(m[1]) * UNIT_MIB[m[2].toLowerCase()];
}

/** /tmp of min(64, memoryMb / 2) MiB (at least 1; 64 uncapped). @param {number | null} memoryMb */
function defaultTmpfs(memoryMb) {
	const size = memoryMb == null ? 64 : Math.max(1, Math.min(64, Math.floor(memoryMb / 2)));
	return { "/tmp": `${size}m` };
}

/**
 * The [path, size] pairs to pass as `--tmpfs PATH:SIZE`.
 * @param {unknown} tmpfs @param {number | null} memoryMb @param {Mount[]} mounts
 * @returns {[string, string][]}
 */
function checkTmpfs(tmpfs, memoryMb, mounts) {
	const given = tmpfs == null ? defaultTmpfs(memoryMb) : tmpfs;
	if (typeof given !== "object" || Array.isArray(given)) throw new SandboxError("tmpfs must be an object {path: size}");
	/** @type {[string, string][]} */
	const out = [];
	for (const [p, size] of Object.entries(/** @type {Record<string, unknown>} */ (given))) {
		const t = normalTarget(p, "tmpfs target");
		if (t.includes(":")) throw new MountRefused(`tmpfs target ${pyRepr(p)} contains ':'`);
		if (t === "/" || t === WORKSPACE || ["/proc", "/sys", "/dev"].some((d) => under(t, d))) {
			throw new MountRefused(`refusing a tmpfs at ${t}${t === "/dev/shm" ? " (/dev/shm cannot be resized)" : ""}`);
		}
		for (const m of mounts) if (under(m.dst, t)) throw new MountRefused(`a tmpfs at ${t} would cover the mount at ${m.dst}`);
		if (typeof size !== "string") throw new MountRefused(`tmpfs size for ${t} must be a string like '64m', not ${shown(size)}`);
		const mib = tmpfsMib(size);
		if (memoryMb != null && mib > memoryMb) {
			throw new MountRefused(`tmpfs ${t} of ${size} is larger than memoryMb=${memoryMb} (it is charged to the box's memory)`);
		}
		out.push([t, size]);
	}
	return out;
}

/** @param {unknown} profiles @returns {string[]} */
function checkProfiles(profiles) {
	if (profiles == null) return [];
	if (!Array.isArray(profiles)) throw new SandboxError("profiles must be an array of tokens");
	for (const t of profiles) {
		if (typeof t !== "string" || !PROFILE.test(t)) throw new SandboxError(`profile ${shown(t)} must look like vcpu:NAME, vgpio:NAME or vdisk:NAME`);
	}
	return [...profiles];
}

/** An LDH domain with at least one dot and an alphabetic TLD, lower-cased. @param {unknown} domain */
function checkDomain(domain) {
	if (typeof domain !== "string" || !domain || domain.length > 253) throw new SandboxError(`egressAllow entry ${shown(domain)} is not a domain name`);
	const labels = domain.split(".");
	if (labels.length < 2 || !labels.every((l) => LABEL.test(l)) || !TLD.test(labels[labels.length - 1])) {
		throw new SandboxError(`egressAllow entry ${pyRepr(domain)} is not a domain name (letters, digits and hyphens, at least one dot, an alphabetic top-level domain)`);
	}
	return domain.toLowerCase();
}

/** @param {unknown} network @param {unknown} egressAllow @returns {string[]} */
function checkNetwork(network, egressAllow) {
	if (typeof network !== "boolean") throw new SandboxError(`network must be true or false, not ${shown(network)}`);
	if (egressAllow == null) return [];
	if (!Array.isArray(egressAllow)) throw new SandboxError("egressAllow must be an array of domains");
	const domains = egressAllow.map(checkDomain);
	if (network && domains.length) {
		throw new SandboxError("network: true and egressAllow exclude each other: network shares the host network, egressAllow allows only the listed domains");
	}
	if (!domains.length) throw new SandboxError("egressAllow must list at least one domain (use network: false for none)");
	return domains;
}

/** @param {unknown} env @returns {Record<string, string>} */
function checkEnv(env) {
	if (env == null) return {};
	if (typeof env !== "object" || Array.isArray(env)) throw new SandboxError("env must be an object {name: value}");
	/** @type {Record<string, string>} */
	const out = {};
	for (const [k, v] of Object.entries(/** @type {Record<string, unknown>} */ (env))) {
		if (!ENV_KEY.test(k)) throw new SandboxError(`env name ${pyRepr(k)} is not valid`);
		if (typeof v !== "string" || v.includes("\n") || v.includes("\0")) throw new SandboxError(`env[${pyRepr(k)}] must be a string without NUL or newline`);
		out[k] = v;
	}
	return out;
}

/** A finite number of seconds in (0, 86400]. @param {unknown} value @param {string} [what] */
function checkTimeout(value, what = "timeoutS") {
	if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
		throw new SandboxError(`${what} must be a finite number of seconds > 0, not ${shown(value)}`);
	}
	if (value > 86400) throw new SandboxError(`${what} must be at most 86400 (one day), not ${value}`);
	return value;
}

/** @param {unknown} v @param {string} what @param {number} low @param {boolean} allowNull @returns {number | null} */
function int(v, what, low, allowNull) {
	if (v === null && allowNull) return null;
	if (typeof v !== "number" || !Number.isSafeInteger(v) || v < low) {
		throw new SandboxError(`${what} must be an integer >= ${low}${allowNull ? " or null" : ""}, not ${shown(v)}`);
	}
	return v;
}

/** @param {unknown} v @param {string} what */
function bool(v, what) {
	if (typeof v !== "boolean") throw new SandboxError(`${what} must be true or false, not ${shown(v)}`);
	return v;
}

/** @param {unknown} v */
function image(v) {
	if (typeof v !== "string" || !v || v.length > 255 || /[^\x21-\x7e]/.test(v) || v.startsWith("-") || v.startsWith("/")) {
		throw new SandboxError(`image must be an image reference like 'python:3.12-slim' or 'host', not ${shown(v)}`);
	}
	return v;
}

/** @param {unknown} v */
function capDrop(v) {
	if (!Array.isArray(v)) throw new SandboxError("capDrop must be an array of capability names, e.g. ['ALL']");
	for (const c of v) if (typeof c !== "string" || !CAP_NAME.test(c)) throw new SandboxError(`capDrop entry ${shown(c)} is not a capability name`);
	return v.map((c) => c.toUpperCase());
}

/** @param {unknown} v */
function callback(v, /** @type {string} */ what) {
	if (v != null && typeof v !== "function") throw new SandboxError(`${what} must be a function`);
	return /** @type {((chunk: Buffer) => unknown) | null} */ (v ?? null);
}

const DEFAULTS = Object.freeze({
	image: DEFAULT_IMAGE, setup: null, workspace: null, memoryMb: 512, cpus: null, pids: 256, timeoutS: 30,
	network: false, mounts: null, tmpfs: null, profiles: null, maxOutputBytes: 64 * 1024 * 1024, depsReadonly: true,
	securityProfile: null, apparmor: null, requireLimits: false, capDrop: ["ALL"], enforceLimits: true, egressAllow: null,
	prewarm: 0, env: null, user: null, persist: false, pycCache: true, trackFiles: true, onStdout: null, onStderr: null,
});

/**
 * @typedef {object} Config the checked form of a Sandbox's options
 * @property {string} image
 * @property {string | null} setup
 * @property {string | null} workspace resolved, checked like a mount source
 * @property {number | null} memoryMb
 * @property {number | null} cpus
 * @property {number | null} pids
 * @property {number} timeoutS
 * @property {boolean} network
 * @property {Mount[]} mounts
 * @property {[string, string][]} tmpfs
 * @property {string[]} profiles
 * @property {number} maxOutputBytes
 * @property {boolean} depsReadonly
 * @property {string | null} securityProfile
 * @property {string | null} apparmor
 * @property {boolean} requireLimits
 * @property {string[]} capDrop upper-cased
 * @property {boolean} enforceLimits
 * @property {string[]} egressAllow
 * @property {number} prewarm
 * @property {Record<string, string>} env
 * @property {string | null} user
 * @property {boolean} persist
 * @property {boolean} pycCache
 * @property {boolean} trackFiles
 * @property {((chunk: Buffer) => unknown) | null} onStdout
 * @property {((chunk: Buffer) => unknown) | null} onStderr
 */

/**
 * Check a Sandbox's options (absent ones take their defaults); throws
 * SandboxError (MountRefused for mounts and tmpfs) on the first bad one,
 * TypeError for an unknown name.
 * @param {Record<string, unknown>} [opts] @returns {Config}
 */
function checkOptions(opts = {}) {
	if (opts === null || typeof opts !== "object") throw new TypeError("Sandbox options must be an object");
	const unknown = Object.keys(opts).filter((k) => !Object.prototype.hasOwnProperty.call(DEFAULTS, k)).sort();
	if (unknown.length) throw new TypeError(`unknown Sandbox options: ${unknown.join(", ")}`);
	/** @type {Record<string, any>} */
	const a = { ...DEFAULTS };
	for (const [k, v] of Object.entries(opts)) if (v !== undefined) a[k] = v;
	const memoryMb = int(a.memoryMb, "memoryMb", 1, true);
	const mounts = checkMounts(a.mounts);
	if (a.setup !== null && (typeof a.setup !== "string" || !a.setup.trim() || a.setup.includes("\0"))) {
		throw new SandboxError("setup must be a non-empty shell command string");
	}
	if (a.workspace !== null && (typeof a.workspace !== "string" || !a.workspace || /[\0\n]/.test(a.workspace))) {
		throw new SandboxError("workspace must be a path without NUL or newline");
	}
	if (a.cpus !== null && (typeof a.cpus !== "number" || !Number.isFinite(a.cpus) || a.cpus <= 0)) {
		throw new SandboxError(`cpus must be a number of cores > 0 or null, not ${shown(a.cpus)}`);
	}
	if (a.securityProfile !== null && a.securityProfile !== "untrusted") {
		throw new SandboxError(`securityProfile must be null or 'untrusted', not ${shown(a.securityProfile)}`);
	}
	if (a.apparmor !== null && (typeof a.apparmor !== "string" || !APPARMOR.test(a.apparmor))) {
		throw new SandboxError(`apparmor profile name ${shown(a.apparmor)} is not valid`);
	}
	if (a.user !== null && (typeof a.user !== "string" || !USER_SPEC.test(a.user))) {
		throw new SandboxError(`user must be 'name', 'uid', 'name:group' or 'uid:gid', not ${shown(a.user)}`);
	}
	return {
		image: image(a.image),
		setup: a.setup,
		workspace: a.workspace === null ? null : checkSource(a.workspace, "workspace"),
		memoryMb,
		cpus: a.cpus,
		pids: int(a.pids, "pids", 2, true),
		timeoutS: checkTimeout(a.timeoutS),
		network: bool(a.network, "network"),
		mounts,
		tmpfs: checkTmpfs(a.tmpfs, memoryMb, mounts),
		profiles: checkProfiles(a.profiles),
		maxOutputBytes: /** @type {number} */ (int(a.maxOutputBytes, "maxOutputBytes", 1, false)),
		depsReadonly: bool(a.depsReadonly, "depsReadonly"),
		securityProfile: a.securityProfile,
		apparmor: a.apparmor,
		requireLimits: bool(a.requireLimits, "requireLimits"),
		capDrop: capDrop(a.capDrop),
		enforceLimits: bool(a.enforceLimits, "enforceLimits"),
		egressAllow: checkNetwork(a.network, a.egressAllow),
		prewarm: /** @type {number} */ (int(a.prewarm, "prewarm", 0, false)),
		env: checkEnv(a.env),
		user: a.user,
		persist: bool(a.persist, "persist"),
		pycCache: bool(a.pycCache, "pycCache"),
		trackFiles: bool(a.trackFiles, "trackFiles"),
		onStdout: callback(a.onStdout, "onStdout"),
		onStderr: callback(a.onStderr, "onStderr"),
	};
}

/** The mount argv: `-v SRC:DST[:ro]`, or `--mount` when a path holds `:` or `,`. @param {Mount} m */
function mountArgv(m) {
	if ([m.src, m.dst].some((p) => p.includes(":") || p.includes(","))) {
		const q = (/** @type {string} */ f) => (/[,:"]/.test(f) ? `"${f.replace(/"/g, '""')}"` : f);
		return ["--mount", ["type=bind", q(`src=${m.src}`), q(`dst=${m.dst}`), ...(m.readOnly ? ["ro"] : [])].join(",")];
	}
	return ["-v", `${m.src}:${m.dst}${m.readOnly ? ":ro" : ""}`];
}

module.exports = {
	checkOptions,
	checkSource,
	checkTarget,
	checkMounts,
	checkTmpfs,
	checkDomain,
	checkTimeout,
	mountArgv,
	kernStateDirs,
	WORKSPACE,
	DEFAULTS,
};
