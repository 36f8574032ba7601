// kern-sandbox/langchain for `import`: the CommonJS implementation.
export * from "./langchain.cjs";
export { default } from "./langchain.cjs";
