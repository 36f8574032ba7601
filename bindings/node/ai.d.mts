export * from "./ai.cjs";
import * as cjs from "./ai.cjs";
export default cjs;
