"use strict";
// What the LangChain.js and AI SDK tools share (python-binding.md §17; the
// Python package's langchain.py): one session per tool, the tool's name
// and description generated from the sandbox, and the function behind it:
// code in, text for the model out. Problems at run time come back as text,
// never as exceptions; build-time problems (no kern, a failing setup)
// throw when the tool is made.

const mt = require("./model-text.cjs");
const { Sandbox, configOf } = require("./sandbox.cjs");
const { SandboxError } = require("./errors.cjs");
const { fmtSeconds } = require("./faults.cjs");

/** @type {Record<string, string>} */
const TOOL_NAMES = { python: "run_python", bash: "run_bash", node: "run_javascript" };
/** @type {Record<string, string>} */
const LANGUAGE_NAMES = { python: "Python", bash: "bash", node: "JavaScript (Node.js)" };

/**
 * @param {import("./rules.cjs").Config} cfg @param {string} language
 */
function describe(cfg, language) {
	const memory = cfg.memoryMb ? `${cfg.memoryMb} MiB of memory` : "a memory cap";
	let net;
	if (cfg.network) net = "The network is on.";
	else if (cfg.egressAllow.length) net = `Network access only to: ${cfg.egressAllow.join(", ")} (HTTP(S)).`;
	else net = "There is no network access.";
	return (
		`Runs ${LANGUAGE_NAMES[language]} code in a fresh sandbox for each call and returns what it printed. ` +
		`Limits: ${memory}, ${fmtSeconds(cfg.timeoutS)} s per call. ${net} Files written under ` +
		"/workspace (the working directory) persist between calls; variables and " +
		"processes do not. Print what you want to see. Send plain code with no markdown fences."
	);
}

/**
 * The function behind a tool.
 * @param {Sandbox} sandbox @param {string} language @param {number} maxChars @param {number} maxCodeBytes
 * @returns {(code: unknown, signal?: AbortSignal) => Promise<string>}
 */
function makeRunner(sandbox, language, maxChars, maxCodeBytes) {
	return async (code, signal) => {
		if (typeof code !== "string") return "The code must be a string.";
		const src = mt.stripFence(code);
		const size = Buffer.byteLength(src, "utf8");
		if (size > maxCodeBytes) return mt.codeTooLarge(size, maxCodeBytes);
		let result;
		try {
			result = await sandbox.runCode(src, { language, signal });
		} catch (e) {
			if (!(e instanceof SandboxError)) throw e;
			return mt.cutToFit(`The sandbox could not run the code: ${mt.oneLine(e.message, 2000)}`, maxChars);
		}
		return mt.renderExecution(result, maxChars);
	};
}

const TOOL_KEYS = ["sandbox", "language", "name", "description", "maxChars", "maxCodeBytes"];

/**
 * The sandbox, name, description and runner of a tool; opens a Sandbox
 * from the options when none is given (removed at process exit).
 * @param {import("../index.cjs").KernToolOptions} [opts]
 */
async function prepareTool(opts = {}) {
	/** @type {Record<string, any>} */
	const own = {};
	/** @type {Record<string, any>} */
	const boxOpts = {};
	for (const [k, v] of Object.entries(opts)) (TOOL_KEYS.includes(k) ? own : boxOpts)[k] = v;
	const language = own.language ?? "python";
	const maxChars = own.maxChars ?? 8000;
	const maxCodeBytes = own.maxCodeBytes ?? 1 << 20;
	if (own.sandbox && Object.keys(boxOpts).length) {
		throw new TypeError(`pass either sandbox or Sandbox options, not both: ${Object.keys(boxOpts).sort().join(", ")}`);
	}
	if (!TOOL_NAMES[language]) throw new RangeError(`language must be one of ${Object.keys(TOOL_NAMES).join(", ")}, not ${JSON.stringify(language)}`);
	if (!(maxChars >= 200) || !(maxCodeBytes >= 1)) throw new RangeError("maxChars must be at least 200 and maxCodeBytes at least 1");
	/** @type {Sandbox} */
	const sandbox = own.sandbox ?? (await Sandbox.create(boxOpts));
	if (!(sandbox instanceof Sandbox)) throw new TypeError("sandbox must be a kern-sandbox Sandbox");
	const cfg = /** @type {import("./rules.cjs").Config} */ (configOf(sandbox));
	return {
		sandbox,
		name: own.name ?? TOOL_NAMES[language],
		description: own.description ?? describe(cfg, language),
		run: makeRunner(sandbox, language, maxChars, maxCodeBytes),
	};
}

/** The code argument's JSON schema (both frameworks take JSON schema). */
const CODE_SCHEMA = {
	type: "object",
	properties: { code: { type: "string", description: "The program to run, as plain source code (no markdown fences)." } },
	required: ["code"],
	additionalProperties: false,
};

/**
 * require() an optional peer dependency, or say which package to install.
 * @param {string} pkg the package @param {string} module what to load from it @param {string} what who needs it
 */
function peer(pkg, module, what) {
	try {
		return require(module);
	} catch (e) {
		if (/** @type {NodeJS.ErrnoException} */ (e).code !== "MODULE_NOT_FOUND") throw e;
		throw new Error(`${what} needs the package '${pkg}', which is not installed: npm install ${pkg}`, { cause: e });
	}
}

module.exports = { prepareTool, makeRunner, describe, peer, CODE_SCHEMA, TOOL_NAMES };
