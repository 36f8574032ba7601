"use strict";
// kern-sandbox: run untrusted code in a fresh kern box, from Node.
// The CommonJS entry; index.mjs re-exports it for `import`.

const { Sandbox } = require("./lib/sandbox.cjs");
const { SandboxError, MountRefused } = require("./lib/errors.cjs");
const { ExecutionResult, SandboxFault, FileInfo, Result } = require("./lib/results.cjs");
const { version } = require("./package.json");

module.exports = { Sandbox, SandboxError, MountRefused, ExecutionResult, SandboxFault, FileInfo, Result, version };
