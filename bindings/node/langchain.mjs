// kern-sandbox/langchain for `import`: the CommonJS implementation.
import cjs from "./langchain.cjs";

export const { kernCodeTool, TOOL_NAMES } = cjs;
export default cjs;
