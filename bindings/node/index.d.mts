// Types of the `import` entry: the same declarations as the CommonJS one.
export * from "./index.cjs";
import * as cjs from "./index.cjs";
export default cjs;
