"use strict";
// kern-sandbox: run untrusted code in a fresh kern box, from Node.
// The CommonJS entry; index.mjs re-exports it for `import`.

const { Sandbox } = require("./lib/sandbox.cjs");
const { Kernel } = require("./lib/kernel.cjs");
const { SandboxError, MountRefused } = require("./lib/errors.cjs");
const { ExecutionResult, SandboxFault, FileInfo, Result } = require("./lib/results.cjs");
const { version } = require("./package.json");

// Per-call options of the one-shot runCode(); the rest configure its Sandbox.
const CALL_KEYS = ["language", "timeoutS", "onStdout", "onStderr", "signal"];

/**
 * One-shot: run code in a throwaway Sandbox and remove it again.
 * @param {string} code
 * @param {import("./index.cjs").RunCodeOptions} [opts]
 */
async function runCode(code, opts = {}) {
	/** @type {Record<string, unknown>} */
	const call = {};
	/** @type {Record<string, unknown>} */
	const box = {};
	for (const [k, v] of Object.entries(opts)) (CALL_KEYS.includes(k) ? call : box)[k] = v;
	const sbx = new Sandbox(box);
	try {
		return await sbx.runCode(code, call);
	} finally {
		await sbx.close();
	}
}

/**
 * Open a Sandbox, hand it to fn, close it whatever fn does.
 * withSandbox(fn) or withSandbox(opts, fn).
 * @template T
 * @param {import("./index.cjs").SandboxOptions | ((sbx: Sandbox) => T | Promise<T>)} a
 * @param {(sbx: Sandbox) => T | Promise<T>} [b]
 * @returns {Promise<T>}
 */
async function withSandbox(a, b) {
	const [opts, fn] = typeof a === "function" ? [{}, a] : [a ?? {}, b];
	if (typeof fn !== "function") throw new TypeError("withSandbox([options,] fn): fn must be a function");
	const sbx = await Sandbox.create(opts);
	try {
		return await fn(sbx);
	} finally {
		await sbx.close();
	}
}

module.exports = {
	Sandbox,
	Kernel,
	runCode,
	withSandbox,
	SandboxError,
	MountRefused,
	ExecutionResult,
	SandboxFault,
	FileInfo,
	Result,
	version,
};
