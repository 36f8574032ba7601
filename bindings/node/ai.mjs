// kern-sandbox/ai for `import`: the CommonJS implementation.
export * from "./ai.cjs";
export { default } from "./ai.cjs";
