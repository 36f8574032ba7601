// Type-checked (tsc --strict, tsconfig.tools.json), never run: the
// agent-framework subpaths. The frameworks' own declarations are large
// and not ours to check (skipLibCheck); the @ts-expect-error lines fail
// the check if this package's declarations stopped resolving (an
// unresolved type would be `any` and accept anything).
import { kernCodeTool, TOOL_NAMES } from "kern-sandbox/langchain";
import { kernCodeTool as aiTool, kernTools } from "kern-sandbox/ai";
import type { KernToolOptions } from "kern-sandbox";
import type { DynamicStructuredTool } from "@langchain/core/tools";
import { generateText } from "ai";
import type { LanguageModel, Tool } from "ai";

export async function main(model: LanguageModel): Promise<string> {
	const opts: KernToolOptions = { image: "host", language: "bash", maxChars: 4000 };
	const lc: DynamicStructuredTool = await kernCodeTool(opts);
	// @ts-expect-error the tool is not a number
	const notNumber: number = lc;
	// @ts-expect-error options are an object
	await kernCodeTool(5);
	const text: unknown = await lc.invoke({ code: "echo hi" });
	const t: Tool<{ code: string }, string> = await aiTool({ image: "host" });
	// @ts-expect-error language is one of three
	await aiTool({ language: "ruby" });
	const r = await generateText({ model, tools: { [TOOL_NAMES.python]: t, ...(await kernTools()) }, prompt: "x" });
	return `${lc.name} ${String(text)} ${r.text} ${notNumber}`;
}
