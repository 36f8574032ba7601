"use strict";
// Sandbox: one workspace on disk, a fresh box per call (python-binding.md
// §3, §4, §6, §8). File state persists between calls through /workspace;
// processes do not.

const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { spawn } = require("node:child_process");
const { SandboxError } = require("./errors.cjs");
const { ExecutionResult, Result } = require("./results.cjs");
const { checkOptions, checkSource } = require("./rules.cjs");
const { locateKern } = require("./locate.cjs");
const { boxArgv } = require("./argv.cjs");
const { runKern } = require("./spawn.cjs");
const { classify, splitStderr } = require("./faults.cjs");
const { Workspace, changes } = require("./workspace.cjs");
const { isCached } = require("./imagecache.cjs");
const { hex, rmtree } = require("./fsutil.cjs");
const { pythonCell } = require("./runner.cjs");
const snapshots = require("./snapshot.cjs");
const { Kernel } = require("./kernel.cjs");
const { DriverBox, classifyDeath, driverSource, RESULTS_CAP } = require("./driverbox.cjs");
const { replyCap } = require("./frames.cjs");

const PULL_BUDGET_MS = 900 * 1000;
// A kernel box lives a day at most (kern's --timeout), and gets this long
// to boot its interpreter.
const KERNEL_LIFETIME_S = 86405;
const KERNEL_START_MS = 120 * 1000;
// Code longer than this runs from a file rather than from argv (§8).
const ARGV_CODE_LIMIT = 128 * 1024;
const LANGUAGES = ["python", "bash", "sh", "node"];

/**
 * Each Sandbox's checked options, for the package's own modules (the
 * agent tools describe the sandbox from them).
 * @type {WeakMap<object, ReturnType<typeof checkOptions>>}
 */
const configs = new WeakMap();

/** Temporary workspaces to remove if the process exits with them open. */
const temporary = new Set();
process.on("exit", () => {
	for (const dir of temporary) rmtree(dir);
});

/**
 * @typedef {object} CallOptions
 * @property {number} [timeoutS]
 * @property {(chunk: Buffer) => unknown} [onStdout]
 * @property {(chunk: Buffer) => unknown} [onStderr]
 * @property {AbortSignal} [signal]
 */

/** @param {AbortSignal | undefined} signal */
function throwIfAborted(signal) {
	if (signal && signal.aborted) {
		throw signal.reason ?? Object.assign(new Error("This operation was aborted"), { name: "AbortError" });
	}
}

/** @param {string} name @param {unknown} v */
function checkCallTimeout(name, v) {
	if (v === undefined || v === null) return;
	if (typeof v !== "number" || !Number.isFinite(v) || v <= 0) throw new SandboxError(`${name} must be a finite number > 0, not ${JSON.stringify(v)}`);
}

class Sandbox {
	/** @type {ReturnType<typeof checkOptions>} */
	#cfg;
	/** @type {Workspace | null} */
	#ws = null;
	/** @type {string | null} */
	#wsPath = null;
	#wsTemp = false;
	/** @type {string | null} */
	#private = null;
	/** @type {Promise<void> | null} */
	#opening = null;
	#closed = false;

	/**
	 * Check the options and locate kern; no box starts until open().
	 * @param {import("../index.cjs").SandboxOptions} [opts]
	 */
	constructor(opts = {}) {
		this.#cfg = checkOptions(opts);
		configs.set(this, this.#cfg);
		locateKern();
	}

	/** Construct and open in one step. @param {import("../index.cjs").SandboxOptions} [opts] */
	static async create(opts = {}) {
		const s = new Sandbox(opts);
		await s.open();
		return s;
	}

	/** The workspace directory on the host (after open()). */
	get workspace() {
		return this.#wsPath;
	}

	/**
	 * Create the workspace, make sure the image is cached, run `setup`.
	 * Calling it again is harmless; methods call it when needed.
	 */
	open() {
		if (this.#closed) return Promise.reject(new SandboxError("this Sandbox is closed"));
		if (!this.#opening) {
			this.#opening = this.#doOpen();
			// A failed open leaves nothing behind and can be retried.
			this.#opening.catch(() => {
				this.#opening = null;
			});
		}
		return this.#opening;
	}

	async #doOpen() {
		const cfg = this.#cfg;
		this.#private = fs.mkdtempSync(path.join(os.tmpdir(), "kern-node-"));
		temporary.add(this.#private);
		try {
			if (cfg.workspace == null) {
				this.#wsPath = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "kern-ws-")));
				this.#wsTemp = true;
				temporary.add(this.#wsPath);
			} else {
				fs.mkdirSync(cfg.workspace, { recursive: true, mode: 0o700 });
				// Checked again now that it exists: a symlink made meanwhile.
				this.#wsPath = checkSource(fs.realpathSync(cfg.workspace));
			}
			this.#ws = new Workspace(this.#wsPath);
			await this.#pull();
			if (cfg.setup != null) await this.#runSetup(cfg.setup);
		} catch (e) {
			this.#release();
			throw e;
		}
	}

	/** `kern pull IMAGE` unless the cache has it; its result is ignored. */
	async #pull() {
		const image = this.#cfg.image;
		if (image === "host" || isCached(image)) return;
		const kern = locateKern();
		await new Promise((resolve) => {
			const p = spawn(kern.path, ["pull", image], { stdio: "ignore", timeout: PULL_BUDGET_MS, killSignal: "SIGKILL" });
			p.on("exit", resolve);
			p.on("error", resolve);
		});
	}

	#release() {
		if (this.#ws) this.#ws.close();
		this.#ws = null;
		if (this.#wsTemp && this.#wsPath) {
			rmtree(this.#wsPath);
			temporary.delete(this.#wsPath);
		}
		if (this.#private) {
			rmtree(this.#private);
			temporary.delete(this.#private);
		}
		this.#private = null;
	}

	/** Stop the pool, remove a temporary workspace. Idempotent. */
	async close() {
		if (this.#closed) return;
		this.#closed = true;
		if (this.#opening) await this.#opening.catch(() => undefined);
		this.#release();
	}

	async [Symbol.asyncDispose]() {
		await this.close();
	}

	/** @returns {Promise<Workspace>} */
	async #ready() {
		await this.open();
		return /** @type {Workspace} */ (this.#ws);
	}

	/**
	 * The env-file of one box: PYTHONPATH for .deps and the caller's env.
	 * @returns {string}
	 */
	#writeEnvFile() {
		const lines = ["PYTHONPATH=/workspace/.deps"];
		for (const [k, v] of Object.entries(this.#cfg.env || {})) lines.push(`${k}=${v}`);
		const p = path.join(/** @type {string} */ (this.#private), `env-${hex(12)}`);
		fs.writeFileSync(p, `${lines.join("\n")}\n`, { mode: 0o600, flag: "wx" });
		return p;
	}

	/** .deps is bound read-only when asked and present. */
	#depsReadonly() {
		if (!this.#cfg.depsReadonly || !this.#wsPath) return false;
		try {
			return fs.lstatSync(path.join(this.#wsPath, ".deps")).isDirectory();
		} catch {
			return false;
		}
	}

	/** Environment of the kern process. */
	#kernEnv() {
		const env = { ...process.env };
		if (!this.#cfg.enforceLimits) env.KERN_NO_SCOPE = "1";
		return env;
	}

	/**
	 * One fresh box for `command`, to its end: spawn, deadline, verdict.
	 * @param {string[]} command
	 * @param {CallOptions} call
	 * @param {{scratch?: string[], results?: string | null}} [extra]
	 * @returns {Promise<ExecutionResult>}
	 */
	async #oneShot(command, call, extra = {}) {
		const cfg = this.#cfg;
		const ws = await this.#ready();
		const timeoutS = call.timeoutS ?? cfg.timeoutS;
		const kern = locateKern();
		const before = cfg.trackFiles ? ws.scan() : null;
		const name = `nodesbx-${hex(12)}`;
		const envFile = this.#writeEnvFile();
		let out;
		try {
			throwIfAborted(call.signal);
			const argv = boxArgv(cfg, /** @type {string} */ (this.#wsPath), {
				name,
				timeoutS,
				command,
				envFile,
				depsRo: this.#depsReadonly(),
			});
			out = await runKern({
				kern: kern.path,
				argv,
				env: this.#kernEnv(),
				name,
				timeoutS,
				maxOutputBytes: cfg.maxOutputBytes,
				alive: true,
				onStdout: call.onStdout ?? cfg.onStdout ?? undefined,
				onStderr: call.onStderr ?? cfg.onStderr ?? undefined,
				signal: call.signal,
			});
		} finally {
			fs.rmSync(envFile, { force: true });
		}
		let results = [];
		if (extra.results) results = await this.#readResults(ws, extra.results);
		for (const f of extra.scratch || []) ws.unlink(f);
		if (out.aborted) throwIfAborted(call.signal);
		const stdout = out.stdout.toString("utf8");
		const stderr = out.stderr.toString("utf8");
		const v = classify({
			exitCode: out.exitCode,
			started: out.started,
			stdout,
			stderr,
			deadlineFired: out.deadlineFired,
			alive: out.aliveBytes,
			aliveOpen: out.aliveOpen,
			memoryMb: cfg.memoryMb,
			timeoutS,
			image: cfg.image,
		});
		if (v.raises) throw new SandboxError(`kern could not set up the box (exit 125): ${v.fault ? v.fault.message : ""}`);
		const split = splitStderr(stderr);
		return new ExecutionResult({
			stdout,
			stderr,
			exitCode: v.exitCode,
			durationMs: out.durationMs,
			fault: v.fault,
			files: before ? changes(before, ws.scan()) : [],
			results,
			truncated: out.truncated,
			codeStderr: split.codeStderr,
			runtimeNotes: split.runtimeNotes,
		});
	}

	/**
	 * The rich values the runner left (§15.1): a JSON array of flat
	 * {mime: string} objects. The box wrote the file, so anything else in
	 * it is dropped.
	 * @param {Workspace} ws @param {string} file
	 * @returns {Promise<Result[]>}
	 */
	async #readResults(ws, file) {
		let data;
		try {
			data = JSON.parse((await ws.readFile(file, 64 * 1024 * 1024)).toString("utf8"));
		} catch {
			return [];
		}
		if (!Array.isArray(data)) return [];
		return data.filter((d) => d && typeof d === "object" && !Array.isArray(d)).map((d) => new Result(d));
	}

	/**
	 * Run code in a fresh box on the workspace, network as configured for
	 * runs (off by default).
	 * @param {string} code
	 * @param {CallOptions & {language?: string}} [opts]
	 */
	async runCode(code, opts = {}) {
		const language = opts.language ?? "python";
		if (!LANGUAGES.includes(language)) throw new SandboxError(`language must be one of ${LANGUAGES.join(", ")}, not ${JSON.stringify(language)}`);
		if (typeof code !== "string") throw new SandboxError("code must be a string");
		checkCallTimeout("timeoutS", opts.timeoutS);
		throwIfAborted(opts.signal);
		const ws = await this.#ready();
		const id = hex(8);
		if (language === "python") {
			const cell = await pythonCell(ws, id, code);
			return this.#oneShot(cell.command, opts, { scratch: cell.scratch, results: cell.results });
		}
		const interp = language === "node" ? ["node", "-e"] : [language, "-c"];
		if (code.includes("\0") || Buffer.byteLength(code) > ARGV_CODE_LIMIT) {
			const file = `.cell-${id}.${language === "node" ? "js" : "sh"}`;
			await ws.writeFile(file, code);
			return this.#oneShot([interp[0], `/workspace/${file}`], opts, { scratch: [file] });
		}
		return this.#oneShot([...interp, code], opts);
	}

	/**
	 * Run a command (an argv array, never a shell string) in a fresh box.
	 * @param {string[]} argv
	 * @param {CallOptions} [opts]
	 */
	async run(argv, opts = {}) {
		if (!Array.isArray(argv) || argv.length === 0 || !argv.every((a) => typeof a === "string")) {
			throw new SandboxError("run() takes a non-empty array of strings (an argv, never a shell string)");
		}
		if (argv.some((a) => a.includes("\0"))) throw new SandboxError("run(): an argument contains NUL");
		checkCallTimeout("timeoutS", opts.timeoutS);
		return this.#oneShot(argv, opts);
	}

	/** @param {string} p @param {string | Uint8Array} data */
	async writeFile(p, data) {
		return (await this.#ready()).writeFile(p, data);
	}

	/** @param {string} p @param {{maxBytes?: number | null}} [opts] */
	async readFile(p, opts = {}) {
		return (await this.#ready()).readFile(p, opts.maxBytes);
	}

	/** @param {string} [subdir] */
	async listFiles(subdir = "") {
		return (await this.#ready()).listFiles(subdir);
	}

	/**
	 * Start a kernel: one warm python3 in one long-lived box, for cells
	 * that share in-memory state. Raises SandboxError when it cannot start.
	 * @param {{timeoutS?: number}} [opts] the default deadline of its cells
	 * @returns {Promise<Kernel>}
	 */
	async kernel(opts = {}) {
		checkCallTimeout("timeoutS", opts.timeoutS);
		const cfg = this.#cfg;
		const ws = await this.#ready();
		const kern = locateKern();
		const id = hex(8);
		const script = `.kernel-${id}.py`;
		await ws.writeFile(script, driverSource(cfg.maxOutputBytes, RESULTS_CAP, true));
		const envFile = this.#writeEnvFile();
		let cleaned = false;
		const cleanup = () => {
			if (cleaned) return;
			cleaned = true;
			ws.unlink(script);
			fs.rmSync(envFile, { force: true });
		};
		const name = `nodesbx-${hex(12)}`;
		let box;
		try {
			box = new DriverBox({
				kern: kern.path,
				argv: boxArgv(cfg, /** @type {string} */ (this.#wsPath), {
					name,
					timeoutS: cfg.timeoutS,
					kernTimeout: KERNEL_LIFETIME_S,
					command: ["python3", `/workspace/${script}`],
					envFile,
					depsRo: this.#depsReadonly(),
					purpose: "kernel",
				}),
				name,
				env: this.#kernEnv(),
				outCap: cfg.maxOutputBytes,
				replyLimit: replyCap(cfg.maxOutputBytes, RESULTS_CAP),
				memoryMb: cfg.memoryMb,
			});
		} catch (e) {
			cleanup();
			throw e;
		}
		const failed = await box.waitHello(KERNEL_START_MS);
		if (failed !== null) {
			if (failed !== "eof") box.kill();
			const death = classifyDeath(await box.observe(), { oneCall: false });
			cleanup();
			const why = death.fault ? death.fault.message : death.note || `kern exited ${death.exitCode}`;
			throw new SandboxError(`the kernel did not start: ${why}`);
		}
		// python3 has read its script and kern its env-file.
		cleanup();
		return new Kernel({
			box,
			ws,
			timeoutS: opts.timeoutS ?? cfg.timeoutS,
			trackFiles: cfg.trackFiles,
			maxOutputBytes: cfg.maxOutputBytes,
			onStdout: cfg.onStdout,
			onStderr: cfg.onStderr,
			cleanup,
		});
	}

	/**
	 * Write the workspace to `dest` as a portable .tar.gz (USTAR, gzip
	 * level 1); symlinks and special files are left out.
	 * @param {string} dest
	 */
	async snapshot(dest) {
		const ws = await this.#ready();
		try {
			await snapshots.snapshot(ws, dest);
		} catch (e) {
			if (e instanceof SandboxError) throw e;
			throw new SandboxError(`snapshot to '${dest}' failed: ${/** @type {Error} */ (e).message}`, { cause: e });
		}
	}

	/**
	 * Unpack a snapshot into the workspace. The whole archive is refused,
	 * before anything is written, if one member is absolute, holds `..`, or
	 * is a symlink, hard link, device or FIFO.
	 * @param {string} src
	 */
	async restore(src) {
		await snapshots.restore(await this.#ready(), src);
	}

	/**
	 * The setup box (§6): network on, no default /tmp, the only window to
	 * the network a session has.
	 * @param {string} command
	 */
	async #runSetup(command) {
		const cfg = this.#cfg;
		const pip = "pip install ";
		const cmd = command.startsWith(pip)
			? `pip install --target /workspace/.deps --no-cache-dir --disable-pip-version-check ${command.slice(pip.length)}`
			: command;
		const deadline = Math.max(cfg.timeoutS, 120);
		const kern = locateKern();
		const name = `nodesbx-${hex(12)}`;
		const envFile = this.#writeEnvFile();
		let out;
		try {
			out = await runKern({
				kern: kern.path,
				argv: boxArgv(cfg, /** @type {string} */ (this.#wsPath), { name, timeoutS: deadline, command: ["sh", "-c", cmd], envFile, purpose: "setup" }),
				env: this.#kernEnv(),
				name,
				timeoutS: deadline,
				maxOutputBytes: cfg.maxOutputBytes,
				alive: true,
			});
		} finally {
			fs.rmSync(envFile, { force: true });
		}
		const stderr = out.stderr.toString("utf8");
		const v = classify({
			exitCode: out.exitCode,
			started: out.started,
			stdout: out.stdout.toString("utf8"),
			stderr,
			deadlineFired: out.deadlineFired,
			alive: out.aliveBytes,
			aliveOpen: out.aliveOpen,
			memoryMb: cfg.memoryMb,
			timeoutS: deadline,
			image: cfg.image,
		});
		if (v.exitCode !== 0 || v.fault) {
			const why = v.fault ? v.fault.message : splitStderr(stderr).codeStderr.trim().slice(-2000);
			throw new SandboxError(`setup failed (exit ${v.exitCode}): ${why}`);
		}
		if (this.#depsReadonly()) await this.#compileDeps();
	}

	/**
	 * With .deps read-only, its bytecode is built once, network off, so no
	 * cell can plant a .pyc the next import would run.
	 */
	async #compileDeps() {
		const cfg = this.#cfg;
		const kern = locateKern();
		const name = `nodesbx-${hex(12)}`;
		const deadline = Math.max(cfg.timeoutS, 120);
		const out = await runKern({
			kern: kern.path,
			argv: boxArgv(cfg, /** @type {string} */ (this.#wsPath), {
				name,
				timeoutS: deadline,
				command: ["python3", "-m", "compileall", "-q", "/workspace/.deps"],
				purpose: "compile",
			}),
			env: this.#kernEnv(),
			name,
			timeoutS: deadline,
			maxOutputBytes: cfg.maxOutputBytes,
			alive: true,
		});
		if (out.exitCode !== 0) {
			throw new SandboxError(`setup failed (exit ${out.exitCode}): compiling .deps: ${out.stderr.toString("utf8").trim().slice(-2000)}`);
		}
	}
}

/** @param {Sandbox} sbx */
const configOf = (sbx) => configs.get(sbx);

module.exports = { Sandbox, LANGUAGES, throwIfAborted, configOf };
