"use strict";
// A Python cell as a one-shot box runs it (python-binding.md §15.1).
// INTERIM: runs the cell file directly until the Python package's runner
// (bindings/python/kern_sandbox/_runner.py) lands; then this writes the
// runner with the cell and result paths substituted.

/**
 * @param {import("./workspace.cjs").Workspace} ws @param {string} id @param {string} code
 * @returns {Promise<{command: string[], scratch: string[], results: string | null}>}
 */
async function pythonCell(ws, id, code) {
	const cell = `.cell-${id}.py`;
	await ws.writeFile(cell, code);
	return { command: ["python3", "-u", `/workspace/${cell}`], scratch: [cell], results: null };
}

module.exports = { pythonCell };
