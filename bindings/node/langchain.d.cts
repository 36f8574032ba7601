// Types of kern-sandbox/langchain (needs @langchain/core).
import type { DynamicStructuredTool } from "@langchain/core/tools";
import type { KernToolOptions } from "./index.cjs";

export type { KernToolOptions };

/** A LangChain tool that runs the model's code in a fresh kern box per call, on one workspace. */
export declare function kernCodeTool(opts?: KernToolOptions): Promise<DynamicStructuredTool>;
export declare const TOOL_NAMES: { python: "run_python"; bash: "run_bash"; node: "run_javascript" };
