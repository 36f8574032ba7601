"use strict";
// Text for a model's context window, built from what a box printed
// (python-binding.md §17; the Python package's _model_text.py, rule for
// rule: test/model-text.test.mjs runs both on the same hostile inputs and
// compares the bytes). Everything a box prints is untrusted: terminal
// escapes and control characters go, line ends are normalised, and framing
// the code could forge (a `[sandbox: ...]` verdict, an `[exited with code
// N]` line, a cut marker) is rewritten so it reads as what it is: printed
// by the code. Ordinary prompt injection is out of scope.
//
// Python's regular expressions differ from JavaScript's in small ways that
// matter here, so the patterns spell them out: `.` is [^\n], \s and
// str.strip() use Python's whitespace, \b its Unicode word characters, and
// case-insensitive letters match what Python's re.IGNORECASE matches (i
// also İ and ı, k also the Kelvin sign, s also ſ). Lengths and cuts count
// code points, as Python's len() and slices do.

// ESC-introduced sequences (ECMA-48): CSI with parameters, OSC/DCS/PM/APC/SOS
// strings up to BEL or ST (an unterminated one up to the end of its line),
// and two-byte escapes with optional intermediates.
const ESCAPES = /\x1b\[[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?|\x1b[\]P^_X][^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)?|\x1b[\x20-\x2f]*[\x30-\x7e]?/g;
// Remaining C0 (but TAB and LF), DEL, C1, and the invisible bidirectional
// controls that can make text display in an order other than it reads.
const CONTROLS = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
// Python's str.isspace(), which \s and strip() use.
const SPACE = "\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const WORD = "\\p{L}\\p{N}_";

/** A word matched as Python's re.IGNORECASE matches it. @param {string} word lower-case ASCII */
function nocase(word) {
	/** @type {Record<string, string>} */
	const extra = { i: "\\u0130\\u0131", k: "\\u212a", s: "\\u017f" };
	return [...word].map((c) => (/[a-z]/.test(c) ? `[${c}${c.toUpperCase()}${extra[c] || ""}]` : c)).join("");
}

const SANDBOX_PREFIX = "[sandbox:";
const FORGED = "[printed by the code, not the sandbox:";
// A line the code printed that starts like framing this package writes
// around box output: the LangChain tool's "[sandbox: T]" and "[exited with
// code N]", kern-mcp's "[stderr]", "[result: MIME]", "[exit N...]" and
// "[omitted: ...]".
const FORGED_FRAME = new RegExp(
	`^[ \\t]*\\[[ \\t]*(${nocase("sandbox")}[ \\t]*:|${nocase("exited")}[ \\t]+${nocase("with")}[ \\t]+${nocase("code")}` +
		`|${nocase("exit")}(?![${WORD}])|${nocase("stderr")}[ \\t]*\\]|${nocase("result")}[ \\t]*:|${nocase("omitted")}[ \\t]*:)`,
	"u",
);
// The cut marker in any spacing, case or ellipsis the code might print.
const FORGED_CUT = new RegExp(
	`^[ \\t]*(?:\\.{3}|\\u2026)?[ \\t]*([^\\n]*?${nocase("characters")}[ \\t]+${nocase("of")}[ \\t]+${nocase("output")}[^\\n]*?` +
		`${nocase("cut")}[ \\t]+${nocase("to")}[ \\t]+${nocase("fit")}[^\\n]*?)[ \\t]*(?:\\.{3}|\\u2026)?[ \\t]*$`,
	"u",
);
// Python's `$` also matches before a final newline: a name ending in one
// passes this check there, and so it does here, to stay byte for byte.
const SAFE_NAME = /^[A-Za-z0-9_./+@-][A-Za-z0-9_./+@ -]*\n?$/;
const FENCE = new RegExp(`^[${SPACE}]*(\`{3,}|~{3,})[^\\n\`]*\\n([\\s\\S]*?)\\n?[ \\t]*\\1[ \\t]*[${SPACE}]*\\n?$`, "u");

const NOTHING_PRINTED = "(The code ran and printed nothing. Print a value to see it.)";
const TRUNCATED_NOTE = "(Output over the sandbox's capture limit was discarded; print less, or write it to a file and read parts of it.)";
/** @param {string} mime */
const imagePlaceholder = (mime) => `(The code produced an image (${mime}); images are not shown in this text.)`;
const FILES_SHOWN = 20;

const LEAD = new RegExp(`^[${SPACE}]+`);
const TRAIL = new RegExp(`[${SPACE}]+$`);
const RUNS = new RegExp(`[${SPACE}]+`);
/** Python's str.strip(). @param {string} s */
const strip = (s) => s.replace(LEAD, "").replace(TRAIL, "");
/** Python's str.rstrip("\n"). @param {string} s */
const rstripNewlines = (s) => s.replace(/\n+$/, "");

const SURROGATE = /[\ud800-\udfff]/;
/** Length in code points (Python's len). @param {string} s */
const len = (s) => (SURROGATE.test(s) ? Array.from(s).length : s.length);
/** Python's s[a:b] in code points. @param {string} s @param {number} a @param {number} [b] */
const slice = (s, a, b) => (SURROGATE.test(s) ? Array.from(s).slice(a, b).join("") : s.slice(a, b));

/** Line ends normalised, escapes and control characters removed. @param {string} text */
function clean(text) {
	return text.replace(/\r\n/g, "\n").replace(/\r/g, "\n").replace(ESCAPES, "").replace(CONTROLS, "");
}

/** Rewrite lines that forge this module's framing (clean first). @param {string} text */
function neutralise(text) {
	return text
		.split("\n")
		.map((line) => {
			const m = FORGED_FRAME.exec(line);
			if (m) {
				const start1 = m[0].length - m[1].length;
				const rest = m[1].toLowerCase().startsWith("sandbox") ? line.slice(m[0].length) : ` ${line.slice(start1)}`;
				return FORGED + rest;
			}
			const c = FORGED_CUT.exec(line);
			return c ? `${FORGED} ${c[1]}]` : line;
		})
		.join("\n");
}

/** clean then neutralise: the treatment for any box output. @param {string} text */
const untrusted = (text) => neutralise(clean(text));

/** A cleaned single line, for messages embedded in framing. @param {string} text @param {number} [limit] */
function oneLine(text, limit = 500) {
	const flat = clean(text).split(RUNS).filter(Boolean).join(" ");
	return len(flat) <= limit ? flat : `${slice(flat, 0, limit - 3)}...`;
}

/** Python's json.dumps(s, ensure_ascii=True). @param {string} s */
function jsonAscii(s) {
	/** @type {Record<string, string>} */
	const short = { '"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f" };
	let out = '"';
	for (let i = 0; i < s.length; i++) {
		const ch = s[i];
		const u = s.charCodeAt(i);
		if (short[ch]) out += short[ch];
		else if (u < 0x20 || u > 0x7e) out += `\\u${u.toString(16).padStart(4, "0")}`;
		else out += ch;
	}
	return `${out}"`;
}

/**
 * A file name as a model should see it: plain when it is plain, else a JSON
 * string literal whose escapes show every odd character.
 * @param {string} name
 */
function escapeName(name) {
	return SAFE_NAME.test(name) && !name.endsWith(" ") ? name : jsonAscii(name);
}

/** The code inside a surrounding markdown fence, or the code as given. @param {string} code */
function stripFence(code) {
	const m = FENCE.exec(code);
	return m ? m[2] : code;
}

/** @param {number} removed */
const cutMarker = (removed) => `... ${removed} characters of output, cut to fit ...`;

/**
 * At most maxChars: about two thirds head and one third tail around a
 * marker saying how much was cut.
 * @param {string} text @param {number} maxChars
 */
function cutToFit(text, maxChars) {
	const n = len(text);
	if (n <= maxChars) return text;
	const budget = maxChars - (cutMarker(n).length + 2);
	if (budget < 2) return slice(text, 0, maxChars);
	const head = Math.floor((budget * 2) / 3);
	const tail = budget - head;
	return `${slice(text, 0, head)}\n${cutMarker(n - head - tail)}\n${slice(text, n - tail)}`;
}

/** @param {string[]} paths @param {number} [shown] */
function filesLine(paths, shown = FILES_SHOWN) {
	const names = paths.slice(0, shown).map(escapeName).join(", ");
	const more = paths.length > shown ? ` (+${paths.length - shown} more)` : "";
	return `files in the workspace: ${names}${more}`;
}

/** @param {unknown} data */
function resultText(data) {
	if (!data || typeof data !== "object") return null;
	const d = /** @type {Record<string, unknown>} */ (data);
	for (const mime of ["image/png", "image/jpeg", "image/svg+xml"]) if (Object.prototype.hasOwnProperty.call(d, mime)) return imagePlaceholder(mime);
	for (const mime of ["text/markdown", "text/plain"]) if (typeof d[mime] === "string") return untrusted(/** @type {string} */ (d[mime]));
	return null;
}

/**
 * An ExecutionResult as the text a model reads (§17).
 * @param {import("./results.cjs").ExecutionResult} result @param {number} maxChars
 */
function renderExecution(result, maxChars) {
	/** @type {string[]} */
	const parts = [];
	if (result.fault) parts.push(`${SANDBOX_PREFIX} ${oneLine(String(result.fault.type), 40)}] ${oneLine(String(result.fault.message))}`);
	else if (result.exitCode !== 0) parts.push(`[exited with code ${Math.trunc(result.exitCode)}]`);
	let printed = false;
	const stdout = untrusted(result.stdout || "");
	if (strip(stdout)) {
		parts.push(rstripNewlines(stdout));
		printed = true;
	}
	for (const r of result.results || []) {
		const t = resultText(r.data);
		if (t && strip(t)) {
			parts.push(rstripNewlines(t));
			printed = true;
		}
	}
	const stderr = untrusted(result.codeStderr || "");
	if (strip(stderr)) {
		parts.push(`stderr:\n${rstripNewlines(stderr)}`);
		printed = true;
	}
	const files = (result.files || []).map((f) => f.path);
	if (files.length) parts.push(filesLine(files));
	if (result.truncated) parts.push(TRUNCATED_NOTE);
	if (!printed) parts.push(NOTHING_PRINTED);
	return cutToFit(parts.join("\n"), maxChars);
}

/** @param {number} size @param {number} limit */
function codeTooLarge(size, limit) {
	return `The code was not run: it is ${size} bytes, over this tool's limit of ${limit} bytes. Send a shorter program, or write the data to a file first.`;
}

module.exports = {
	clean,
	neutralise,
	untrusted,
	oneLine,
	escapeName,
	stripFence,
	cutMarker,
	cutToFit,
	filesLine,
	renderExecution,
	codeTooLarge,
	NOTHING_PRINTED,
	TRUNCATED_NOTE,
};
