// Type-checked (tsc --strict), never run: the agent-framework subpaths.
import { kernCodeTool, TOOL_NAMES } from "kern-sandbox/langchain";
import { kernCodeTool as aiTool, kernTools } from "kern-sandbox/ai";
import type { KernToolOptions } from "kern-sandbox";
import { generateText } from "ai";
import type { LanguageModel } from "ai";

export async function main(model: LanguageModel): Promise<string> {
	const opts: KernToolOptions = { image: "host", language: "bash", maxChars: 4000 };
	const lc = await kernCodeTool(opts);
	const text: unknown = await lc.invoke({ code: "echo hi" });
	const t = await aiTool({ image: "host" });
	const r = await generateText({ model, tools: { [TOOL_NAMES.python]: t, ...(await kernTools()) }, prompt: "x" });
	return `${lc.name} ${String(text)} ${r.text}`;
}
