"use strict";
// What a call returns (python-binding.md §5), with camelCase field names.

/** The sandbox acted: `type` is one of the fault names of §10. */
class SandboxFault {
	/** @param {string} type @param {string} message */
	constructor(type, message) {
		this.type = type;
		this.message = message;
	}
}

/**
 * A regular file of the workspace; `path` is workspace-relative. In a
 * result's `files`, `change` says what the call did to it; from
 * listFiles() it is null.
 */
class FileInfo {
	/** @param {string} path @param {number} size @param {"created" | "modified" | null} [change] */
	constructor(path, size, change = null) {
		this.path = path;
		this.size = size;
		this.change = change;
	}
}

// Short names of the mime types a rich value may carry, in the order
// formats() lists them.
const MIME = {
	text: "text/plain",
	html: "text/html",
	markdown: "text/markdown",
	svg: "image/svg+xml",
	latex: "text/latex",
	json: "application/json",
	png: "image/png",
	jpeg: "image/jpeg",
};

/** @param {Result} r @param {string} mime @returns {string | null} */
function pick(r, mime) {
	return Object.prototype.hasOwnProperty.call(r.data, mime) ? r.data[mime] : null;
}

/** One rich value (a trailing expression, a display() call, a figure). */
class Result {
	/** @param {Record<string, string>} data mime type -> string (images base64) */
	constructor(data) {
		/** @type {Record<string, string>} */
		this.data = {};
		for (const [k, v] of Object.entries(data || {})) {
			if (typeof v === "string") this.data[k] = v;
		}
	}
	get text() { return pick(this, MIME.text); }
	get html() { return pick(this, MIME.html); }
	get markdown() { return pick(this, MIME.markdown); }
	get svg() { return pick(this, MIME.svg); }
	get latex() { return pick(this, MIME.latex); }
	get json() { return pick(this, MIME.json); }
	get png() { return pick(this, MIME.png); }
	get jpeg() { return pick(this, MIME.jpeg); }
	/** Short names of the formats present: text, html, markdown, svg, latex, json, png, jpeg. */
	formats() {
		return Object.entries(MIME).filter(([, m]) => pick(this, m) !== null).map(([k]) => k);
	}
	toJSON() {
		return { ...this.data };
	}
}

/**
 * The outcome of one call. `fault` is set only when the sandbox acted; an
 * exception in the code is a non-zero exitCode with fault null.
 */
class ExecutionResult {
	/**
	 * @param {{stdout: string, stderr: string, exitCode: number, durationMs: number,
	 *   fault?: SandboxFault | null, files?: FileInfo[], results?: Result[], truncated?: boolean,
	 *   codeStderr?: string, runtimeNotes?: string[]}} f
	 */
	constructor(f) {
		this.stdout = f.stdout;
		this.stderr = f.stderr;
		this.exitCode = f.exitCode;
		this.durationMs = f.durationMs;
		this.fault = f.fault || null;
		this.files = f.files || [];
		this.results = f.results || [];
		this.truncated = Boolean(f.truncated);
		this.success = this.exitCode === 0 && this.fault === null;
		this.codeStderr = f.codeStderr === undefined ? f.stderr : f.codeStderr;
		this.runtimeNotes = f.runtimeNotes || [];
	}
}

module.exports = { SandboxFault, FileInfo, Result, ExecutionResult, MIME };
