"use strict";
// The one-shot Python runner (python-binding.md §15.1), host side: its
// source for one call (the Python package's _cell.py, three assignments,
// then _oneshot.py, exactly as kern_sandbox/_inbox.py assembles it) and
// the results file it leaves.

const { pySource } = require("./drivers.cjs");
const { Result } = require("./results.cjs");
const { pyRepr } = require("./pyrepr.cjs");

// The largest result file the host reads; the runner keeps below it.
const RESULTS_MAX = 64 * 1024 * 1024;

/**
 * The runner for one call: runs the box file `cell` and writes its rich
 * results to `result` (both box paths).
 * @param {string} cell @param {string} result
 */
function runnerSource(cell, result) {
	const head = `CELL = ${pyRepr(cell)}\nRESULT = ${pyRepr(result)}\nRESULTS_CAP = ${RESULTS_MAX - 4096}\n`;
	return `${pySource("_cell.py")}\n${head}\n${pySource("_oneshot.py")}`;
}

/**
 * The runner's JSON array of flat {mime: string} objects; anything else in
 * it (the box wrote the file) is dropped.
 * @param {Buffer} blob @returns {Result[]}
 */
function parseResults(blob) {
	let data;
	try {
		data = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(blob));
	} catch {
		return [];
	}
	if (!Array.isArray(data)) return [];
	return data
		.filter((d) => d && typeof d === "object" && !Array.isArray(d) && Object.keys(d).length && Object.values(d).every((v) => typeof v === "string"))
		.map((d) => new Result(d));
}

module.exports = { runnerSource, parseResults, RESULTS_MAX };
