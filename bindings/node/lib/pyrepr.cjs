"use strict";
// Python's repr() of a string, for messages that read the same as the
// Python package's ("workspace path 'x' refused: ...").

// str.isprintable() is false for these categories (space excepted).
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;

/** @param {string} s */
function pyRepr(s) {
	const q = s.includes("'") && !s.includes('"') ? '"' : "'";
	let out = q;
	for (const ch of s) {
		const c = /** @type {number} */ (ch.codePointAt(0));
		if (ch === q || ch === "\\") out += `\\${ch}`;
		else if (ch === "\n") out += "\\n";
		else if (ch === "\r") out += "\\r";
		else if (ch === "\t") out += "\\t";
		else if (ch !== " " && UNPRINTABLE.test(ch)) {
			if (c <= 0xff) out += `\\x${c.toString(16).padStart(2, "0")}`;
			else if (c <= 0xffff) out += `\\u${c.toString(16).padStart(4, "0")}`;
			else out += `\\U${c.toString(16).padStart(8, "0")}`;
		} else out += ch;
	}
	return out + q;
}

module.exports = { pyRepr };
