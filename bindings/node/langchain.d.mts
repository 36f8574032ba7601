export * from "./langchain.cjs";
import * as cjs from "./langchain.cjs";
export default cjs;
