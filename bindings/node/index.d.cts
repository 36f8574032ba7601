// Types of kern-sandbox (checked with tsc --strict by test/types.test.mjs).

/** A chunk of a box's stdout or stderr, as it arrives. A returned promise makes the callback busy until it settles. */
export type OutputCallback = (chunk: Buffer) => unknown;

export type Language = "python" | "bash" | "sh" | "node";

/** `{hostSrc: boxDst}` or `{hostSrc: [boxDst, "ro" | "rw"]}`. */
export type Mounts = Record<string, string | [string, "ro" | "rw"]>;

export interface SandboxOptions {
	/** OCI image, or "host" (the host's /usr, read-only). Default "python:3.12-slim". */
	image?: string;
	/** Shell command run once in a separate, network-on setup box; "pip install X" installs into /workspace/.deps. */
	setup?: string | null;
	/** null: a fresh temporary directory removed by close(); a path: kept. */
	workspace?: string | null;
	/** Memory cap in MiB (default 512); null: kern's default or a vcpu: profile applies. */
	memoryMb?: number | null;
	/** CPU cap in cores; null: uncapped. */
	cpus?: number | null;
	/** Process ceiling (default 256); null: kern's default. */
	pids?: number | null;
	/** Deadline of each call in seconds (default 30): finite, > 0. */
	timeoutS?: number;
	/** true shares the host network with every run (relaxes isolation). */
	network?: boolean;
	mounts?: Mounts | null;
	/** null: /tmp of min(64, memoryMb/2) MiB; {}: none; {"/tmp": "512m"}. */
	tmpfs?: Record<string, string> | null;
	/** kern.toml profile tokens, e.g. ["vcpu:heavy"]. */
	profiles?: string[] | null;
	/** Cap of captured stdout and stderr, each (default 64 MiB). */
	maxOutputBytes?: number;
	/** .deps read-only to run boxes (default true). */
	depsReadonly?: boolean;
	securityProfile?: "untrusted" | null;
	/** A pre-loaded AppArmor profile; kern fails closed without it. */
	apparmor?: string | null;
	/** Refuse to start unless the memory and pids caps are enforced. */
	requireLimits?: boolean;
	/** Capabilities to drop (default ["ALL"]); [] keeps kern's default set. */
	capDrop?: string[];
	/** false: best-effort caps, no systemd scope (KERN_NO_SCOPE=1). */
	enforceLimits?: boolean;
	/** Domains run boxes may reach through kern's proxy; exclusive with network. */
	egressAllow?: string[] | null;
	/** Keep this many boxes started in advance. */
	prewarm?: number;
	/** Extra box environment. */
	env?: Record<string, string> | null;
	/** Box account; null: the image's USER. One that is not root is probed when the Sandbox opens: an account the image lacks raises SandboxError there. */
	user?: string | null;
	/** One resident box reused through `kern exec`. */
	persist?: boolean;
	/** Shared bytecode cache per image. */
	pycCache?: boolean;
	/** Compute `files` per call (default true). */
	trackFiles?: boolean;
	onStdout?: OutputCallback | null;
	onStderr?: OutputCallback | null;
}

export interface CallOptions {
	/** Overrides the session's deadline for this call. */
	timeoutS?: number;
	onStdout?: OutputCallback;
	onStderr?: OutputCallback;
	/** Aborting stops the box; the call rejects with the signal's reason once nothing of the box is left. */
	signal?: AbortSignal;
}

export interface RunCodeCallOptions extends CallOptions {
	/** Default "python". */
	language?: Language;
}

/** Options of the one-shot runCode(): the call's and its throwaway Sandbox's. */
export type RunCodeOptions = SandboxOptions & RunCodeCallOptions;

export type FaultType = "timeout" | "oom" | "escape_blocked" | "killed" | "startup_failed" | "exec_failed";

/** The sandbox acted on the call. */
export declare class SandboxFault {
	constructor(type: string, message: string);
	readonly type: FaultType | string;
	readonly message: string;
}

/** A regular file of the workspace (`change` is null from listFiles()). */
export declare class FileInfo {
	constructor(path: string, size: number, change?: "created" | "modified" | null);
	readonly path: string;
	readonly size: number;
	readonly change: "created" | "modified" | null;
}

export type ResultFormat = "text" | "html" | "markdown" | "svg" | "latex" | "json" | "png" | "jpeg";

/** One rich value: mime type -> string (images base64). */
export declare class Result {
	constructor(data: Record<string, string>);
	readonly data: Record<string, string>;
	readonly text: string | null;
	readonly html: string | null;
	readonly markdown: string | null;
	readonly svg: string | null;
	readonly latex: string | null;
	readonly json: string | null;
	readonly png: string | null;
	readonly jpeg: string | null;
	/** Short names of the formats present, in the order listed in ResultFormat. */
	formats(): ResultFormat[];
	toJSON(): Record<string, string>;
}

export interface ExecutionResultFields {
	stdout: string;
	stderr: string;
	exitCode: number;
	durationMs: number;
	fault?: SandboxFault | null;
	files?: FileInfo[];
	results?: Result[];
	truncated?: boolean;
	codeStderr?: string;
	runtimeNotes?: string[];
}

/** The outcome of one call. Branch on `fault`, not on `exitCode`. */
export declare class ExecutionResult {
	constructor(fields: ExecutionResultFields);
	readonly stdout: string;
	/** kern's lines and the program's, in order. */
	readonly stderr: string;
	/** The process status; 128+N for signal N. */
	readonly exitCode: number;
	readonly durationMs: number;
	/** Set only when the sandbox acted; an exception in the code is not a fault. */
	readonly fault: SandboxFault | null;
	/** Workspace files this call created or modified. */
	readonly files: FileInfo[];
	readonly results: Result[];
	readonly truncated: boolean;
	/** exitCode === 0 and fault === null */
	readonly success: boolean;
	/** stderr without kern's own diagnostic lines: what a model should see. */
	readonly codeStderr: string;
	/** Exactly the lines removed from codeStderr. */
	readonly runtimeNotes: string[];
}

/** Programmer or configuration errors, and boxes that never started. */
export declare class SandboxError extends Error {
	constructor(message: string, options?: { cause?: unknown });
}

/** A mount or tmpfs the binding refuses, even when asked for. */
export declare class MountRefused extends SandboxError {}

export interface KernelCallOptions {
	timeoutS?: number;
	onStdout?: OutputCallback;
	onStderr?: OutputCallback;
	/** Aborting kills the kernel (its state is lost); the call rejects with the signal's reason. */
	signal?: AbortSignal;
}

/** One warm python3 in one long-lived box: cells share in-memory state. */
export declare class Kernel {
	private constructor();
	readonly name: string;
	readonly alive: boolean;
	runCode(code: string, opts?: KernelCallOptions): Promise<ExecutionResult>;
	close(): Promise<void>;
	[Symbol.asyncDispose](): Promise<void>;
}

/** One workspace on disk, a fresh box per call. */
export declare class Sandbox {
	/** Checks the options and locates kern (throws SandboxError/MountRefused); no box starts until open(). */
	constructor(opts?: SandboxOptions);
	/** Constructed and opened. */
	static create(opts?: SandboxOptions): Promise<Sandbox>;
	/** The workspace directory on the host, once open. */
	readonly workspace: string | null;
	/** Create the workspace, pull the image if needed, run setup, start the pool. Idempotent. */
	open(): Promise<void>;
	close(): Promise<void>;
	[Symbol.asyncDispose](): Promise<void>;
	runCode(code: string, opts?: RunCodeCallOptions): Promise<ExecutionResult>;
	/** An argv, never a shell string. */
	run(argv: string[], opts?: CallOptions): Promise<ExecutionResult>;
	writeFile(path: string, data: string | Uint8Array): Promise<void>;
	readFile(path: string, opts?: { maxBytes?: number | null }): Promise<Buffer>;
	listFiles(subdir?: string): Promise<FileInfo[]>;
	snapshot(dest: string): Promise<void>;
	restore(src: string): Promise<void>;
	kernel(opts?: { timeoutS?: number }): Promise<Kernel>;
	/** With persist: stop the resident box; the next call starts a new one. */
	destroy(): Promise<void>;
	/** Boxes the prewarm pool holds ready now (0 without prewarm). */
	readonly prewarmed: number;
}

/** One-shot: a throwaway Sandbox. */
export declare function runCode(code: string, opts?: RunCodeOptions): Promise<ExecutionResult>;

/** Open a Sandbox, hand it to fn, close it whatever fn does. */
export declare function withSandbox<T>(fn: (sbx: Sandbox) => T | Promise<T>): Promise<T>;
export declare function withSandbox<T>(opts: SandboxOptions, fn: (sbx: Sandbox) => T | Promise<T>): Promise<T>;

export declare const version: string;

/** Options of the agent-framework tools (kern-sandbox/langchain, kern-sandbox/ai). */
export interface KernToolOptions extends SandboxOptions {
	/** An open Sandbox to use; without it the tool opens one from the other options. */
	sandbox?: Sandbox;
	/** Default "python" (tool run_python); "bash" (run_bash), "node" (run_javascript). */
	language?: "python" | "bash" | "node";
	name?: string;
	/** Default: generated from the sandbox (memory, time limit, network, /workspace). */
	description?: string;
	/** The reply is cut to this many characters (default 8000, at least 200). */
	maxChars?: number;
	/** Code over this many bytes is not run (default 1 MiB). */
	maxCodeBytes?: number;
}
