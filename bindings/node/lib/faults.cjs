"use strict";
// Did the sandbox act on a call? (python-binding.md §10) and which stderr
// lines are kern's own (§11). A pure function of what kern left behind:
// the exit status and the outcome bytes come first, because stderr is
// shared with the workload, which can print anything. The rules and the
// messages are the Python binding's (kern_sandbox/faults.py), byte for
// byte; bindings/shared/fault-cases.json holds the cases both packages
// run, so they cannot drift apart.

const { SandboxFault } = require("./results.cjs");

const DIAGNOSTIC_PREFIXES = ["kern: note:", "kern: warning:", "kern: security-profile="];
// box-cli.md §6.2: clients match this substring of the OOM sentence.
const OOM_SENTENCE = "killed by the kernel's OOM killer";
const EXEC_FAILURE_RE = /^kern: cannot start '([^']+)' in box: ([^\n]*)/m;
const SETUP_FAILURE = "sandbox setup failed";
const MESSAGE_LIMIT = 500;
const SIGKILL = 9;
const SIGTERM = 15;
const SIGSYS = 31;

// Python's str.strip() whitespace (str.isspace), which is not quite
// JavaScript's trim(): \x1c-\x1f and \x85 are space to Python, \ufeff is not.
const PY_SPACE = "[\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]";
const LEAD = new RegExp(`^${PY_SPACE}+`);
const TRAIL = new RegExp(`${PY_SPACE}+$`);
/** @param {string} s */
const lstrip = (s) => s.replace(LEAD, "");
/** @param {string} s */
const strip = (s) => lstrip(s).replace(TRAIL, "");
/** The first n code points, as Python's s[:n]. @param {string} s @param {number} n */
function head(s, n) {
	if (s.length <= n) return s;
	return Array.from(s).slice(0, n).join("");
}

/** @param {string} line */
const isDiagnostic = (line) => DIAGNOSTIC_PREFIXES.some((p) => lstrip(line).startsWith(p));

/**
 * Split stderr on "\n" into the program's text and kern's diagnostic lines
 * (`hint:` lines stay with the program's).
 * @param {string} stderr
 * @returns {{codeStderr: string, runtimeNotes: string[]}}
 */
function splitStderr(stderr) {
	/** @type {string[]} */
	const code = [];
	/** @type {string[]} */
	const notes = [];
	for (const line of stderr.split("\n")) (isDiagnostic(line) ? notes : code).push(line);
	return { codeStderr: code.join("\n"), runtimeNotes: notes };
}

/**
 * A column-0 `error: ` or `kern:` line that is neither a diagnostic nor the
 * OOM sentence, or any line containing `sandbox setup failed`.
 * @param {string} stderr
 */
function kernIsSpeaking(stderr) {
	for (const line of stderr.split("\n")) {
		if (line.includes(SETUP_FAILURE)) return true;
		if ((line.startsWith("error: ") || line.startsWith("kern:")) && !isDiagnostic(line) && !line.includes(OOM_SENTENCE)) {
			return true;
		}
	}
	return false;
}

/** @param {string} stderr @returns {[string, string] | null} */
function execFailure(stderr) {
	const m = EXEC_FAILURE_RE.exec(stderr);
	return m ? [m[1], m[2]] : null;
}

/**
 * C's "%g" (six significant digits, trailing zeros dropped), as the
 * Python binding prints a deadline; "?" for 0.
 * @param {number} t
 */
function fmtSeconds(t) {
	if (!t) return "?";
	const [mant, e] = t.toExponential(5).split("e");
	const exp = Number(e);
	const strip = (/** @type {string} */ s) => (s.includes(".") ? s.replace(/0+$/, "").replace(/\.$/, "") : s);
	if (exp < -4 || exp >= 6) return `${strip(mant)}e${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
	return strip(t.toFixed(Math.max(0, 5 - exp)));
}

/**
 * @typedef {object} Observation what one kern process left behind
 * @property {number} exitCode kern's exit status, 128+N for signal N
 * @property {ArrayLike<number>} [started] outcome bytes read from KERN_STARTED_FD (0 to 4)
 * @property {string} [stdout]
 * @property {string} [stderr]
 * @property {boolean} [deadlineFired] the binding's own deadline killed the box
 * @property {string | null} [alive] what the alive pipe carried; null when none was passed
 * @property {boolean} [aliveOpen] its writer was still open when it was read
 * @property {boolean} [residentExec] a `kern exec` into a resident box
 * @property {boolean} [execReportsStart] kern >= 0.30.2 writes outcome bytes for exec
 * @property {number | null} [memoryMb]
 * @property {number} [timeoutS]
 * @property {string} [image]
 */

/**
 * @typedef {object} Verdict
 * @property {SandboxFault | null} fault
 * @property {boolean} raises the call raises SandboxError instead of returning (exit 125)
 * @property {number} exitCode the exit code the result reports
 */

/** @param {Required<Observation>} o @param {number} i */
const byteAt = (o, i) => (o.started.length > i ? o.started[i] : null);

/**
 * Fill in an observation's defaults.
 * @param {Observation} o @returns {Required<Observation>}
 */
function normalise(o) {
	return {
		exitCode: o.exitCode,
		started: Array.from(o.started || []),
		stdout: o.stdout || "",
		stderr: o.stderr || "",
		deadlineFired: Boolean(o.deadlineFired),
		alive: o.alive === undefined ? null : o.alive,
		aliveOpen: Boolean(o.aliveOpen),
		residentExec: Boolean(o.residentExec),
		execReportsStart: o.execReportsStart === undefined ? true : o.execReportsStart,
		memoryMb: o.memoryMb === undefined ? null : o.memoryMb,
		timeoutS: o.timeoutS || 0,
		image: o.image || "",
	};
}

/**
 * 137 with the signal byte absent or 9 and kern's OOM byte set; or, from a
 * kern too old for byte 2, kern wrote something and printed the OOM sentence.
 * @param {Required<Observation>} o
 */
function isOom(o) {
	const sig = byteAt(o, 3);
	if (o.exitCode !== 137 || (sig !== null && sig !== SIGKILL)) return false;
	const oom = byteAt(o, 2);
	if (oom !== null) return oom === 1;
	return o.started.length >= 1 && o.stderr.includes(OOM_SENTENCE);
}

/** @param {Required<Observation>} o */
function oomFault(o) {
	const cap = o.memoryMb ? `${Math.trunc(o.memoryMb)} MiB ` : "";
	return new SandboxFault(
		"oom",
		`the kernel's OOM killer killed the box at its ${cap}memory cap (kern read the box cgroup's own OOM ` +
			"counter: this is certain, not a guess); raise memory_mb if the code needs more",
	);
}

/** @param {Required<Observation>} o */
function killedFault(o) {
	const enforcement = byteAt(o, 1);
	const oom = byteAt(o, 2);
	let why;
	if (o.started.length === 0) why = "kern itself was killed before it reported an outcome (an external kill)";
	else if (enforcement === 2) {
		why = "the memory cap was requested but is NOT enforced on this host, so this may be the host's OOM killer or an external kill";
	} else if (oom === null && o.memoryMb) why = "likely OOM at the memory cap, unconfirmed (this kern does not report OOM kills)";
	else if (enforcement === 0 || !o.memoryMb) {
		why = "the box had no memory cap of its own, so this was an external kill or the host's OOM killer";
	} else why = "not by the OOM killer (the box cgroup counted none): an external kill";
	return new SandboxFault("killed", `the box was killed by SIGKILL: ${why}`);
}

/** stderr minus diagnostics, cut at 500 characters. @param {string} stderr */
function startupFault(stderr) {
	const text = strip(splitStderr(stderr).codeStderr);
	return new SandboxFault("startup_failed", head(text, MESSAGE_LIMIT) || "kern could not start the box");
}

/**
 * Steps 2-6 of the one-shot order: exit code before stderr.
 * @param {Required<Observation>} o @returns {SandboxFault | null}
 */
function oneShot(o) {
	const sig = byteAt(o, 3);
	const code = o.exitCode;
	if (code === 159 && (sig === null || sig === SIGSYS)) {
		return new SandboxFault(
			"escape_blocked",
			"a system call the sandbox forbids was blocked: the seccomp filter killed the process with SIGSYS",
		);
	}
	if (code === 137 && (sig === null || sig === SIGKILL)) return isOom(o) ? oomFault(o) : killedFault(o);
	if (code === 143 && (sig === null || sig === SIGTERM)) {
		return new SandboxFault("timeout", "kern's own --timeout, the backstop behind the binding's deadline, ended the box with SIGTERM");
	}
	if (code !== 0 && kernIsSpeaking(o.stderr)) return startupFault(o.stderr);
	return null;
}

/**
 * kern's `cannot start` line with a non-zero exit, unless the alive pipe
 * proves the workload ran (kern writes `x` there on the failure; a
 * workload printing the same line leaves EOF after `A`).
 * @param {Required<Observation>} o @returns {SandboxFault | null}
 */
function execFailed(o) {
	const found = execFailure(o.stderr);
	if (o.exitCode === 0 || found === null) return null;
	if (o.alive !== null && !o.alive.includes("x")) return null;
	const [cmd, reason] = found;
	const where = o.image ? `image '${o.image}'` : "the box";
	let text;
	if (reason.includes("No such file or directory")) text = `'${cmd}' was not found in ${where} (${reason})`;
	else if (reason.includes("Permission denied")) text = `'${cmd}' is not executable in ${where} (${reason})`;
	else text = `'${cmd}' could not be started in ${where} (${reason})`;
	return new SandboxFault("exec_failed", text);
}

/**
 * Classify one one-shot (`kern box`) or resident (`kern exec`) call.
 * @param {Observation} obs @returns {Verdict}
 */
function classify(obs) {
	const o = normalise(obs);
	if (o.deadlineFired) {
		if (o.alive === "A" && o.aliveOpen) {
			const msg = `the box was still being set up (e.g. pulling its image) when the ${fmtSeconds(o.timeoutS)}s time limit ran out`;
			return { fault: new SandboxFault("startup_failed", msg), raises: false, exitCode: 137 };
		}
		const msg = `exceeded the ${fmtSeconds(o.timeoutS)}s time limit (killed by the binding)`;
		return { fault: new SandboxFault("timeout", msg), raises: false, exitCode: 137 };
	}
	let fault = oneShot(o);
	const neverStarted = o.started.length === 0 && (!o.residentExec || o.execReportsStart);
	if (o.exitCode === 0 && neverStarted && !o.stdout && !o.stderr) {
		fault = new SandboxFault("startup_failed", "kern exited 0 but never signalled that a box started");
	}
	const failedExec = execFailed(o);
	if (failedExec !== null) fault = failedExec;
	// A box that started (byte 0 = 1) or printed on stdout was not refused
	// by kern: its "error:" or "kern:" lines were the workload's own.
	if (fault !== null && fault.type === "startup_failed" && (byteAt(o, 0) === 1 || o.stdout)) fault = null;
	if (o.residentExec && o.execReportsStart && o.started.length === 0 && o.exitCode !== 0) {
		fault = strip(o.stderr) ? startupFault(o.stderr) : new SandboxFault("startup_failed", "kern exec did not enter the box");
	}
	const raises = fault !== null && fault.type === "startup_failed" && o.exitCode === 125;
	return { fault, raises, exitCode: o.exitCode };
}

module.exports = {
	classify,
	splitStderr,
	kernIsSpeaking,
	isOom,
	oomFault,
	killedFault,
	startupFault,
	fmtSeconds,
	normalise,
	strip,
	head,
	OOM_SENTENCE,
	EXEC_FAILURE_RE,
};
