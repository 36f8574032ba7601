"use strict";
// Checking a Sandbox's options before any box starts (python-binding.md
// §3, §7): every relaxation of isolation is an explicit option, and mounts,
// tmpfs, network, profiles, egress domains and names are refused here,
// before kern refuses them again itself.

const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { SandboxError, MountRefused } = require("./errors.cjs");

/** @typedef {import("../index.cjs").SandboxOptions} SandboxOptions */

const DEFAULTS = Object.freeze({
	image: "python:3.12-slim",
	setup: null,
	workspace: null,
	memoryMb: 512,
	cpus: null,
	pids: 256,
	timeoutS: 30,
	network: false,
	mounts: null,
	tmpfs: null,
	profiles: null,
	maxOutputBytes: 64 * 1024 * 1024,
	depsReadonly: true,
	securityProfile: null,
	apparmor: null,
	requireLimits: false,
	capDrop: ["ALL"],
	enforceLimits: true,
	egressAllow: null,
	prewarm: 0,
	env: null,
	user: null,
	persist: false,
	pycCache: true,
	trackFiles: true,
	onStdout: null,
	onStderr: null,
});

const SYSTEM_EXACT = ["/", "/etc", "/root", "/boot", "/proc", "/sys", "/dev", "/var/run/docker.sock", "/run/docker.sock"];
// Trees whose every path is the host's own.
const SYSTEM_TREES = ["/etc", "/root", "/boot", "/proc", "/sys", "/dev"];
const CREDENTIAL_NAMES = new Set([
	".ssh", ".aws", ".gnupg", ".kube", ".docker", ".azure", ".oci", ".terraform.d", ".password-store",
	".netrc", ".git-credentials", ".pypirc", ".npmrc", ".databrickscfg", ".boto", ".s3cfg", ".rclone.conf",
]);
const CREDENTIAL_CONFIG = new Set(["gcloud", "gh", "doctl", "rclone"]);

const PROFILE_RE = /^(vcpu|vgpio|vdisk):[A-Za-z0-9][A-Za-z0-9._-]*$/;
const APPARMOR_RE = /^[A-Za-z0-9_.][A-Za-z0-9_.-]{0,127}$/;
const CAP_RE = /^(ALL|(CAP_)?[A-Z0-9_]+)$/i;
const ENV_KEY_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;
const USER_RE = /^[A-Za-z0-9_.][A-Za-z0-9_.-]*(:[A-Za-z0-9_.][A-Za-z0-9_.-]*)?$/;
const TMPFS_SIZE_RE = /^([0-9]+)([kmgt])$/i;

/** @param {string} a @param {string} b b is a or below a */
const within = (a, b) => b === a || b.startsWith(a === "/" ? "/" : `${a}/`);

/** @param {string} s */
function lexical(s) {
	return path.posix.normalize(s).replace(/(.)\/+$/, "$1");
}

/** @param {string} p resolved as far as it exists (symlinks of the existing part followed) */
function resolveSource(p) {
	let existing = p;
	const rest = [];
	for (;;) {
		try {
			return path.join(fs.realpathSync(existing), ...rest);
		} catch {
			const parent = path.dirname(existing);
			if (parent === existing) return p;
			rest.unshift(path.basename(existing));
			existing = parent;
		}
	}
}

/** kern's own state directories (box-cli.md §7.1, §10, §2.3) with their defaults. */
function kernStateDirs() {
	const home = process.env.HOME || os.homedir();
	const uid = process.getuid ? process.getuid() : 0;
	/** @type {string[]} */
	const dirs = [];
	const add = (/** @type {string | undefined} */ base, /** @type {string} */ fallback) => {
		if (base) dirs.push(path.join(base, "kern"));
		if (fallback) dirs.push(fallback);
	};
	add(process.env.XDG_RUNTIME_DIR, `/run/user/${uid}/kern`);
	dirs.push(`/tmp/kern-${uid}`, `/tmp/kern-cache-${uid}`);
	add(process.env.XDG_CACHE_HOME, home ? path.join(home, ".cache", "kern") : "");
	add(process.env.XDG_CONFIG_HOME, home ? path.join(home, ".config", "kern") : "");
	add(process.env.XDG_DATA_HOME, home ? path.join(home, ".local", "share", "kern") : "");
	return dirs.map((d) => resolveSource(lexical(d)));
}

/**
 * Refuse a mount source the box must never see.
 * @param {string} src as given
 */
function checkSource(src) {
	if (typeof src !== "string" || src === "") throw new MountRefused("a mount source must be a non-empty path");
	if (/[\0\n]/.test(src)) throw new MountRefused(`mount source ${JSON.stringify(src)} contains NUL or a newline`);
	if (!src.startsWith("/")) throw new MountRefused(`mount source '${src}' is not absolute`);
	const real = resolveSource(lexical(src));
	const home = process.env.HOME ? resolveSource(lexical(process.env.HOME)) : "";
	for (const p of [lexical(src), real]) {
		if (SYSTEM_EXACT.includes(p) || SYSTEM_TREES.some((t) => within(t, p))) {
			throw new MountRefused(`refusing to mount the host system path '${src}'`);
		}
		if (home && within(p, home)) throw new MountRefused(`refusing to mount '${src}': it is or contains $HOME`);
		if (["/var/run/docker.sock", "/run/docker.sock"].some((s) => within(p, s))) {
			throw new MountRefused(`refusing to mount '${src}': it holds the docker socket`);
		}
		const parts = p.split("/");
		for (let i = 0; i < parts.length; i++) {
			if (CREDENTIAL_NAMES.has(parts[i]) || (parts[i] === ".config" && CREDENTIAL_CONFIG.has(parts[i + 1]))) {
				throw new MountRefused(`refusing to mount '${src}': it is a credential path`);
			}
		}
		for (const d of kernStateDirs()) {
			if (within(d, p) || within(p, d)) throw new MountRefused(`refusing to mount '${src}': it overlaps kern's own state (${d})`);
		}
	}
	return real;
}

/** @param {string} dst */
function checkTarget(dst) {
	if (typeof dst !== "string" || /[\0\n]/.test(dst)) throw new MountRefused(`mount target ${JSON.stringify(dst)} contains NUL or a newline`);
	if (!dst.startsWith("/")) throw new MountRefused(`mount target '${dst}' is not absolute`);
	const t = lexical(dst);
	if (["/", "/proc", "/sys", "/dev"].includes(t) || within("/proc", t) || within("/sys", t)) {
		throw new MountRefused(`refusing to mount over '${dst}'`);
	}
	return t;
}

/**
 * @param {unknown} mounts
 * @returns {{src: string, dst: string, ro: boolean}[]}
 */
function checkMounts(mounts) {
	if (mounts == null) return [];
	if (typeof mounts !== "object" || Array.isArray(mounts)) {
		throw new SandboxError("mounts must be an object {hostSrc: boxDst} or {hostSrc: [boxDst, 'ro'|'rw']}");
	}
	const out = [];
	for (const [src, spec] of Object.entries(/** @type {Record<string, unknown>} */ (mounts))) {
		let dst = spec;
		let mode = "rw";
		if (Array.isArray(spec)) {
			if (spec.length !== 2) throw new SandboxError(`mounts['${src}'] must be [boxDst, 'ro'|'rw']`);
			[dst, mode] = spec;
		}
		if (mode !== "ro" && mode !== "rw") throw new SandboxError(`mounts['${src}']: mode must be 'ro' or 'rw', not ${JSON.stringify(mode)}`);
		out.push({ src: checkSource(src), dst: checkTarget(/** @type {string} */ (dst)), ro: mode === "ro" });
	}
	return out;
}

/**
 * @param {unknown} tmpfs @param {number | null} memoryMb
 * @param {{dst: string}[]} mounts
 * @returns {{path: string, size: string}[]}
 */
function checkTmpfs(tmpfs, memoryMb, mounts) {
	if (tmpfs == null) {
		const mb = memoryMb == null ? 64 : Math.max(1, Math.min(64, Math.floor(memoryMb / 2)));
		return [{ path: "/tmp", size: `${mb}m` }];
	}
	if (typeof tmpfs !== "object" || Array.isArray(tmpfs)) throw new SandboxError("tmpfs must be an object {boxPath: size}");
	const out = [];
	for (const [p, size] of Object.entries(/** @type {Record<string, unknown>} */ (tmpfs))) {
		if (/[\0\n:]/.test(p) || !p.startsWith("/")) throw new MountRefused(`tmpfs target ${JSON.stringify(p)} must be absolute, without ':'`);
		const t = lexical(p);
		if (t === "/" || t === "/workspace" || ["/proc", "/sys", "/dev"].some((d) => within(d, t))) {
			throw new MountRefused(`refusing a tmpfs at '${p}'`);
		}
		const covered = mounts.find((m) => within(t, m.dst));
		if (covered) throw new MountRefused(`refusing a tmpfs at '${p}': it would cover the mount at '${covered.dst}'`);
		const m = typeof size === "string" ? TMPFS_SIZE_RE.exec(size) : null;
		if (!m) throw new MountRefused(`tmpfs size for '${p}' must be a number with a unit (k, m, g, t), not ${JSON.stringify(size)}`);
		const mult = { k: 1 / 1024, m: 1, g: 1024, t: 1024 * 1024 }[m[2].toLowerCase()] || 1;
		const mb = Number(m[1]) * mult;
		if (mb <= 0) throw new MountRefused(`tmpfs size for '${p}' must be above zero (0 means unlimited to kern)`);
		if (memoryMb != null && mb > memoryMb) throw new MountRefused(`tmpfs size ${size} for '${p}' is above memoryMb=${memoryMb}`);
		out.push({ path: t, size: /** @type {string} */ (size) });
	}
	return out;
}

/** @param {unknown} d */
function checkDomain(d) {
	if (typeof d !== "string" || d.length > 253 || !d.includes(".")) return false;
	const labels = d.split(".");
	if (!/^[A-Za-z]+$/.test(labels[labels.length - 1])) return false;
	return labels.every((l) => /^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/.test(l));
}

/**
 * @param {string} name @param {unknown} v @param {{int?: boolean, min?: number, exclusive?: boolean}} rule
 */
function checkNumber(name, v, rule) {
	const ok =
		typeof v === "number" &&
		Number.isFinite(v) &&
		(!rule.int || Number.isInteger(v)) &&
		(rule.min === undefined || (rule.exclusive ? v > rule.min : v >= rule.min));
	if (!ok) {
		const what = rule.int ? "an integer" : "a finite number";
		const bound = rule.min === undefined ? "" : rule.exclusive ? ` > ${rule.min}` : ` >= ${rule.min}`;
		throw new SandboxError(`${name} must be ${what}${bound}, not ${JSON.stringify(v)}`);
	}
	return v;
}

/**
 * The options, checked and with defaults filled in.
 * @param {SandboxOptions} [opts]
 */
function checkOptions(opts = {}) {
	if (opts === null || typeof opts !== "object") throw new TypeError("Sandbox options must be an object");
	for (const k of Object.keys(opts)) {
		if (!Object.prototype.hasOwnProperty.call(DEFAULTS, k)) throw new TypeError(`unknown Sandbox option '${k}'`);
	}
	const o = /** @type {Record<string, any>} */ ({ ...DEFAULTS });
	for (const [k, v] of Object.entries(opts)) if (v !== undefined) o[k] = v;

	if (typeof o.image !== "string" || !o.image || /[\s\0]/.test(o.image)) throw new SandboxError(`image must be a reference, not ${JSON.stringify(o.image)}`);
	if (o.setup != null && (typeof o.setup !== "string" || o.setup.includes("\0"))) throw new SandboxError("setup must be a shell command string");
	if (o.workspace != null && (typeof o.workspace !== "string" || o.workspace.includes("\0") || !o.workspace)) throw new SandboxError("workspace must be a path");
	if (o.memoryMb != null) checkNumber("memoryMb", o.memoryMb, { int: true, min: 1 });
	if (o.cpus != null) checkNumber("cpus", o.cpus, { min: 0, exclusive: true });
	if (o.pids != null) checkNumber("pids", o.pids, { int: true, min: 1 });
	checkNumber("timeoutS", o.timeoutS, { min: 0, exclusive: true });
	checkNumber("maxOutputBytes", o.maxOutputBytes, { int: true, min: 1 });
	checkNumber("prewarm", o.prewarm, { int: true, min: 0 });
	for (const k of ["network", "depsReadonly", "requireLimits", "enforceLimits", "persist", "pycCache", "trackFiles"]) {
		if (typeof o[k] !== "boolean") throw new SandboxError(`${k} must be true or false`);
	}
	for (const k of ["onStdout", "onStderr"]) {
		if (o[k] != null && typeof o[k] !== "function") throw new SandboxError(`${k} must be a function`);
	}
	if (o.network && o.egressAllow != null) throw new SandboxError("network: true and egressAllow are exclusive: the allowlist only means something when the box has no network of its own");
	if (o.egressAllow != null) {
		if (!Array.isArray(o.egressAllow) || o.egressAllow.length === 0) throw new SandboxError("egressAllow must be a non-empty array of domains");
		for (const d of o.egressAllow) if (!checkDomain(d)) throw new SandboxError(`egressAllow: ${JSON.stringify(d)} is not a domain name (letters, digits, '-', at least one dot, an alphabetic TLD)`);
	}
	if (o.profiles != null) {
		if (!Array.isArray(o.profiles)) throw new SandboxError("profiles must be an array of strings");
		for (const p of o.profiles) if (typeof p !== "string" || !PROFILE_RE.test(p)) throw new SandboxError(`profile ${JSON.stringify(p)} does not match (vcpu|vgpio|vdisk):NAME`);
	}
	if (o.securityProfile != null && o.securityProfile !== "untrusted") throw new SandboxError(`securityProfile must be "untrusted" or null, not ${JSON.stringify(o.securityProfile)}`);
	if (o.apparmor != null && (typeof o.apparmor !== "string" || !APPARMOR_RE.test(o.apparmor))) throw new SandboxError(`apparmor profile name ${JSON.stringify(o.apparmor)} is not valid`);
	if (!Array.isArray(o.capDrop)) throw new SandboxError("capDrop must be an array of capability names");
	for (const c of o.capDrop) if (typeof c !== "string" || !CAP_RE.test(c)) throw new SandboxError(`capDrop: ${JSON.stringify(c)} is not a capability name`);
	if (o.env != null) {
		if (typeof o.env !== "object" || Array.isArray(o.env)) throw new SandboxError("env must be an object of strings");
		for (const [k, v] of Object.entries(o.env)) {
			if (!ENV_KEY_RE.test(k)) throw new SandboxError(`env: ${JSON.stringify(k)} is not a variable name`);
			if (typeof v !== "string" || /[\0\n]/.test(v)) throw new SandboxError(`env.${k} must be a string without NUL or newline`);
		}
	}
	if (o.user != null && (typeof o.user !== "string" || !USER_RE.test(o.user))) throw new SandboxError(`user ${JSON.stringify(o.user)} is not an account name or uid[:gid]`);
	// The workspace is bound into every box: the same rules as a mount.
	if (o.workspace != null) checkSource(path.resolve(o.workspace));
	const mounts = checkMounts(o.mounts);
	const tmpfs = checkTmpfs(o.tmpfs, o.memoryMb, mounts);
	return { ...o, mounts, tmpfs, tmpfsDefault: o.tmpfs == null };
}

module.exports = { checkOptions, checkMounts, checkTmpfs, checkSource, checkTarget, checkDomain, DEFAULTS };
