// kern-sandbox for `import`: the CommonJS implementation, re-exported, so
// both entries share one set of classes (instanceof works across them).
import cjs from "./index.cjs";

export const {
	Sandbox,
	Kernel,
	runCode,
	withSandbox,
	SandboxError,
	MountRefused,
	ExecutionResult,
	SandboxFault,
	FileInfo,
	Result,
	version,
} = cjs;
export default cjs;
