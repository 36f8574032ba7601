"use strict";
// kern-sandbox/ai: a tool for the Vercel AI SDK (`ai`) that runs the
// model's code in kern, with the same model-facing text as the LangChain
// tool. `ai` is an optional peer dependency, loaded only here.

const { prepareTool, peer, CODE_SCHEMA, TOOL_NAMES } = require("./lib/agent-tool.cjs");

/**
 * An AI SDK tool that runs code in a kern box (one session per tool, each
 * call a fresh box). Use it as `tools: { run_python: await kernCodeTool() }`,
 * or take kernTools() for that object.
 * @param {import("./ai.cjs").KernToolOptions} [opts]
 */
async function kernCodeTool(opts = {}) {
	const ai = peer("ai", "ai", "kern-sandbox/ai");
	const t = await prepareTool(opts);
	const schema = ai.jsonSchema(CODE_SCHEMA);
	return ai.tool({
		description: t.description,
		// `inputSchema` from ai 5 on, `parameters` before.
		inputSchema: schema,
		parameters: schema,
		/** @param {{code: unknown}} input @param {{abortSignal?: AbortSignal}} [options] */
		execute: async (input, options) => t.run(input && input.code, options && options.abortSignal),
	});
}

/**
 * `{[name]: tool}` for generateText/streamText's `tools`.
 * @param {import("./ai.cjs").KernToolOptions} [opts]
 */
async function kernTools(opts = {}) {
	const name = opts.name ?? TOOL_NAMES[opts.language ?? "python"];
	return { [name]: await kernCodeTool(opts) };
}

module.exports = { kernCodeTool, kernTools, TOOL_NAMES };
