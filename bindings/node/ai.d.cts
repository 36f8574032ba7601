// Types of kern-sandbox/ai (needs the `ai` package).
import type { Tool } from "ai";
import type { KernToolOptions } from "./index.cjs";

export type { KernToolOptions };

/** An AI SDK tool that runs the model's code in a fresh kern box per call, on one workspace. */
export declare function kernCodeTool(opts?: KernToolOptions): Promise<Tool<{ code: string }, string>>;
/** `{ [name]: tool }` for generateText/streamText's `tools`. */
export declare function kernTools(opts?: KernToolOptions): Promise<Record<string, Tool<{ code: string }, string>>>;
export declare const TOOL_NAMES: { python: "run_python"; bash: "run_bash"; node: "run_javascript" };
