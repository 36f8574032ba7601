"use strict";
// The key of `await using`: Symbol.asyncDispose where the runtime has it
// (Node >= 20), else the name TypeScript's downlevel helpers look up, so
// `await using` compiled by tsc works on Node 18 too.
const asyncDispose = Symbol.asyncDispose ?? Symbol.for("Symbol.asyncDispose");
module.exports = { asyncDispose };
