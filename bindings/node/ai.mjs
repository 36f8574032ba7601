// kern-sandbox/ai for `import`: the CommonJS implementation.
import cjs from "./ai.cjs";

export const { kernCodeTool, kernTools, TOOL_NAMES } = cjs;
export default cjs;
