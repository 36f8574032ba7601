// kern-sandbox for `import`: the CommonJS implementation, re-exported (Node
// finds its names in index.cjs's `module.exports = {...}`), so both entries
// share one set of classes and instanceof works across them.
export * from "./index.cjs";
export { default } from "./index.cjs";
