"use strict";
// kern-sandbox/langchain: a LangChain.js tool that runs the model's code in
// kern (python-binding.md §17, as the Python package's kern_code_tool).
// @langchain/core is an optional peer dependency, loaded only here.

const { prepareTool, peer, CODE_SCHEMA, TOOL_NAMES } = require("./lib/agent-tool.cjs");

/**
 * A LangChain StructuredTool that runs code in a kern box: one session per
 * tool (a file written by one call is there for the next), each call a
 * fresh box; replies are text written for the model.
 * @param {import("./langchain.cjs").KernToolOptions} [opts]
 */
async function kernCodeTool(opts = {}) {
	const { tool } = peer("@langchain/core", "@langchain/core/tools", "kern-sandbox/langchain");
	const t = await prepareTool(opts);
	return tool(
		/** @param {{code: unknown}} input @param {{signal?: AbortSignal}} [config] */
		async (input, config) => t.run(input && input.code, config && config.signal),
		{ name: t.name, description: t.description, schema: CODE_SCHEMA },
	);
}

module.exports = { kernCodeTool, TOOL_NAMES };
