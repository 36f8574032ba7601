"use strict";
// Sandbox and the one-shot calls (python-binding.md §2-§4, §6, §8). A
// Sandbox is a workspace plus a checked configuration; each call is a
// fresh `kern box` on that workspace: file state persists between calls,
// processes do not. The flow is the Python package's (kern_sandbox/
// sandbox.py), in Node's idiom: promises, Buffer chunks, AbortSignal.

const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { spawn } = require("node:child_process");
const { SandboxError, throwIfAborted } = require("./errors.cjs");
const { asyncDispose } = require("./dispose.cjs");
const { ExecutionResult } = require("./results.cjs");
const { checkOptions, checkTimeout, WORKSPACE } = require("./rules.cjs");
const { locateKern } = require("./locate.cjs");
const { boxArgv, boxName, boxUser, deadlineBackstop, DEPS, PYC_DIR } = require("./argv.cjs");
const { runKern } = require("./spawn.cjs");
const { classify, splitStderr, strip } = require("./faults.cjs");
const { Workspace, changes } = require("./workspace.cjs");
const { HOST_IMAGE, isCached, userIsRoot } = require("./imagecache.cjs");
const { probeAccount } = require("./account.cjs");
const { hex, rmtree } = require("./fsutil.cjs");
const { runnerSource, parseResults, RESULTS_MAX } = require("./runner.cjs");
const pyc = require("./pyc.cjs");
const snapshots = require("./snapshot.cjs");
const { Kernel, startFailure } = require("./kernel.cjs");
const { DriverBox, driverSource, RESULTS_CAP } = require("./driverbox.cjs");
const { Pool } = require("./pool.cjs");
const { Resident } = require("./resident.cjs");
const { replyCap } = require("./frames.cjs");

const LANGUAGES = ["python", "bash", "sh", "node"];
// bash/sh/node code longer than this goes to a file instead of argv.
const ARGV_CODE_MAX = 128 * 1024;
const PULL_TIMEOUT_MS = 900 * 1000;
const SETUP_MIN_TIMEOUT_S = 120;
const PIP_INSTALL = "pip install ";
const PIP_TARGET = "pip install --target /workspace/.deps --no-cache-dir --disable-pip-version-check ";
// A kernel box lives a day at most (kern's --timeout) and gets this long
// to boot its interpreter.
const KERNEL_LIFETIME_S = 86405;
const KERNEL_START_MS = 120 * 1000;

/**
 * Each Sandbox's checked options, for the package's own modules (the
 * agent tools describe the sandbox from them).
 * @type {WeakMap<object, import("./rules.cjs").Config>}
 */
const configs = new WeakMap();

/** Each Sandbox's prewarm pool, for the tests (how many calls it served). @type {WeakMap<object, Pool>} */
const pools = new WeakMap();

/** Private directories and temporary workspaces to remove if the process exits with them. */
const leftovers = new Set();
process.on("exit", () => {
	for (const dir of leftovers) rmtree(dir);
});

/** `sh -c SETUP`; a leading `pip install ` installs into .deps. @param {string} setup */
function setupCommand(setup) {
	return ["sh", "-c", setup.startsWith(PIP_INSTALL) ? PIP_TARGET + setup.slice(PIP_INSTALL.length) : setup];
}

/** @param {Buffer} b */
const text = (b) => b.toString("utf8");

/**
 * @typedef {object} CallOptions
 * @property {number} [timeoutS]
 * @property {(chunk: Buffer) => unknown} [onStdout]
 * @property {(chunk: Buffer) => unknown} [onStderr]
 * @property {AbortSignal} [signal]
 */

class Sandbox {
	/** @type {import("./rules.cjs").Config} */
	#cfg;
	/** @type {import("./locate.cjs").Kern} */
	#kern;
	/** @type {Workspace | null} */
	#ws = null;
	/** @type {string | null} */
	#private = null;
	/** @type {string | null} */
	#pycDir = null;
	/** @type {Promise<void> | null} */
	#opening = null;
	#closed = false;
	/** open() has finished: calls take the workspace without waiting a turn */
	#ready = false;
	/** @type {Pool | null} */
	#pool = null;
	/** @type {Set<Kernel>} kernels open, ended with the session */
	#kernels = new Set();
	/** @type {Resident | null} */
	#resident = null;
	/** @type {Set<string>} env-files written (one per variant) */
	#envFiles = new Set();

	/**
	 * Check the options and locate kern; no box starts until open() (or the
	 * first call).
	 * @param {import("../index.cjs").SandboxOptions} [opts]
	 */
	constructor(opts = {}) {
		this.#cfg = checkOptions(/** @type {Record<string, unknown>} */ (opts));
		if (this.#cfg.persist && this.#cfg.prewarm) {
			throw new SandboxError("persist reuses one resident box; prewarm starts a box per call: choose one");
		}
		configs.set(this, this.#cfg);
		this.#kern = locateKern();
	}

	/** Construct and open. @param {import("../index.cjs").SandboxOptions} [opts] */
	static async create(opts = {}) {
		const s = new Sandbox(opts);
		await s.open();
		return s;
	}

	/** The workspace directory on the host (the box sees it as /workspace), once open. */
	get workspace() {
		return this.#ws ? this.#ws.path : null;
	}

	/**
	 * Create the workspace, pull the image unless kern has it, run `setup`
	 * and start the bytecode cache. Called by the first call; harmless again.
	 */
	open() {
		if (this.#closed) return Promise.reject(new SandboxError("this Sandbox is closed"));
		if (!this.#opening) this.#opening = this.#prepare();
		return this.#opening;
	}

	async #prepare() {
		const cfg = this.#cfg;
		this.#kern = locateKern();
		const ws = new Workspace(cfg.workspace);
		this.#ws = ws;
		if (ws.temporary) leftovers.add(ws.path);
		this.#private = fs.mkdtempSync(path.join(os.tmpdir(), "kern-sandbox-"));
		leftovers.add(this.#private);
		try {
			if (!isCached(cfg.image)) await this.#pull();
			const account = boxUser(cfg, null);
			if (account && !userIsRoot(account)) await probeAccount(this.#kern.path, cfg, account);
			if (cfg.setup !== null) await this.#runSetup(cfg.setup);
			if (cfg.pycCache && cfg.image !== HOST_IMAGE) {
				this.#pycDir = pyc.usable(cfg.image);
				if (this.#pycDir === null) {
					pyc.build(this.#kern.path, cfg.image, cfg.enforceLimits).then((dir) => {
						if (dir !== null) this.#pycDir = dir;
					});
				}
			}
			if (cfg.prewarm) {
				this.#pool = new Pool(this.#session(), cfg.prewarm);
				pools.set(this, this.#pool);
			}
			if (cfg.persist) this.#resident = new Resident(this.#session());
			this.#ready = true;
		} catch (e) {
			this.#closed = true;
			this.#release();
			throw e;
		}
	}

	/** `kern pull IMAGE`, stdio on /dev/null, its result ignored. */
	#pull() {
		return new Promise((resolve) => {
			const p = spawn(this.#kern.path, ["pull", this.#cfg.image], { stdio: "ignore", detached: true });
			const timer = setTimeout(() => {
				try {
					process.kill(-(/** @type {number} */ (p.pid)), "SIGKILL");
				} catch {
					// gone
				}
			}, PULL_TIMEOUT_MS);
			p.on("exit", () => {
				clearTimeout(timer);
				resolve(undefined);
			});
			p.on("error", () => {
				clearTimeout(timer);
				resolve(undefined);
			});
		});
	}

	#release() {
		if (this.#ws) {
			leftovers.delete(this.#ws.path);
			this.#ws.remove();
		}
		if (this.#private) {
			rmtree(this.#private);
			leftovers.delete(this.#private);
		}
		this.#private = null;
	}

	/**
	 * What the prewarm pool and the resident box borrow from the session.
	 * @returns {import("./resident.cjs").ResidentSession}
	 */
	#session() {
		return {
			workspace: () => /** @type {Workspace} */ (this.#ws).path,
			cfg: this.#cfg,
			kern: () => this.#kern,
			argv: (command, timeoutS, req) => this.#argv(command, timeoutS, req),
			envLines: (withPyc) => this.#envLines(withPyc),
			writeEnvFile: (withPyc) => this.#writeEnvFile(withPyc),
			withPyc: () => this.#pycDir !== null,
			kernEnv: () => this.#kernEnv(),
		};
	}

	/**
	 * End the kernels and the prewarm pool, delete a temporary workspace and
	 * the package's private files. Idempotent.
	 */
	async close() {
		if (this.#closed && !this.#opening) return;
		this.#closed = true;
		this.#ready = false;
		const opening = this.#opening;
		this.#opening = null;
		if (opening) await opening.catch(() => undefined);
		await Promise.all([...this.#kernels].map((k) => k.close()));
		this.#kernels.clear();
		if (this.#pool) await this.#pool.close();
		this.#pool = null;
		// A temporary workspace goes now: so does the box that binds it.
		if (this.#resident && this.#cfg.workspace === null) await this.#resident.destroy();
		this.#resident = null;
		this.#release();
	}

	/**
	 * With persist: stop the resident box (`kern stop`); the next call
	 * starts a new one. A named workspace's resident box otherwise outlives
	 * the Sandbox (up to an hour), for the next session with the same
	 * configuration. Without persist: nothing.
	 */
	async destroy() {
		if (this.#resident) await this.#resident.destroy();
	}

	/** Boxes the prewarm pool holds ready now (0 without prewarm). */
	get prewarmed() {
		return this.#pool ? this.#pool.readyCount() : 0;
	}

	async [asyncDispose]() {
		await this.close();
	}

	/**
	 * The workspace of an open session, now; null while it opens or once
	 * closed (then #workspace() says why). A call on an open session so
	 * runs without a turn of the event loop up to its kern start: of 100
	 * calls made at once, the first box starts while the others are still
	 * writing their scratch files, as with Python's threads, instead of
	 * after every call has written its files and scanned the workspace.
	 * @returns {Workspace | null}
	 */
	#openWorkspace() {
		return this.#ready && !this.#closed ? this.#ws : null;
	}

	/** @returns {Promise<Workspace>} */
	async #workspace() {
		await this.open();
		return /** @type {Workspace} */ (this.#ws);
	}

	/** .deps exists as a directory (bound read-only when depsReadonly). */
	#hasDeps() {
		try {
			// (no ENOENT error built and thrown on every call: most workspaces have no .deps)
			const st = fs.lstatSync(path.join(/** @type {Workspace} */ (this.#ws).path, ".deps"), { throwIfNoEntry: false });
			return st !== undefined && st.isDirectory();
		} catch {
			return false;
		}
	}

	/**
	 * The env-file of a box: PYTHONPATH=/workspace/.deps, `env`, and
	 * PYTHONPYCACHEPREFIX when the bytecode cache is bound; 0600 in the
	 * private 0700 directory, never through a planted name. Its content is
	 * the session's, so it is written once per variant and removed with the
	 * private directory (kern reads it before the box starts).
	 * @param {boolean} withPyc @returns {string}
	 */
	#writeEnvFile(withPyc) {
		const file = path.join(/** @type {string} */ (this.#private), withPyc ? "env-pyc" : "env");
		if (this.#envFiles.has(file)) return file;
		const c = fs.constants;
		const fd = fs.openSync(file, c.O_WRONLY | c.O_CREAT | c.O_EXCL | c.O_NOFOLLOW, 0o600);
		try {
			fs.writeSync(fd, this.#envLines(withPyc));
		} finally {
			fs.closeSync(fd);
		}
		this.#envFiles.add(file);
		return file;
	}

	/** The env-file's lines. @param {boolean} withPyc */
	#envLines(withPyc) {
		/** @type {Record<string, string>} */
		const env = { PYTHONPATH: DEPS, ...this.#cfg.env };
		if (withPyc) env.PYTHONPYCACHEPREFIX = PYC_DIR;
		return Object.entries(env).map(([k, v]) => `${k}=${v}\n`).join("");
	}

	/** Environment of the kern process. */
	#kernEnv() {
		const env = { ...process.env };
		if (this.#cfg.enforceLimits) delete env.KERN_NO_SCOPE;
		else env.KERN_NO_SCOPE = "1";
		return env;
	}

	/**
	 * The argv of one box of this session (kernel, pool and resident boxes
	 * are built here too); re-checks that the kern binary is still kern.
	 * @param {string[]} command @param {number} timeoutS
	 * @param {Partial<import("./argv.cjs").BoxRequest>} [req]
	 */
	#argv(command, timeoutS, req = {}) {
		this.#kern = locateKern();
		const readOnly = req.readOnly !== false;
		return boxArgv(this.#cfg, /** @type {Workspace} */ (this.#ws).path, {
			name: req.name || boxName(),
			command,
			kernTimeout: req.kernTimeout ?? deadlineBackstop(timeoutS),
			readOnly,
			depsRo: req.depsRo ?? (this.#cfg.depsReadonly && this.#hasDeps()),
			pycDir: readOnly ? this.#pycDir : null,
			network: req.network,
			tmpfs: req.tmpfs,
			envFile: req.envFile,
			extra: req.extra,
		});
	}

	/**
	 * Run one box to its end (or deadline) and return what it left.
	 * @param {string[]} command @param {number} timeoutS @param {CallOptions} call
	 * @param {Partial<import("./argv.cjs").BoxRequest>} [req]
	 */
	async #box(command, timeoutS, call, req = {}) {
		const name = req.name || boxName();
		const envFile = this.#writeEnvFile(req.readOnly !== false && this.#pycDir !== null);
		const argv = this.#argv(command, timeoutS, { ...req, name, envFile });
		return runKern({
			kern: this.#kern.path,
			argv,
			env: this.#kernEnv(),
			name,
			timeoutS,
			maxOutputBytes: this.#cfg.maxOutputBytes,
			alive: true,
			onStdout: call.onStdout,
			onStderr: call.onStderr,
			signal: call.signal,
		});
	}

	/**
	 * What one kern process left, for the classifier.
	 * @param {import("./spawn.cjs").RunOutcome} done @param {number} timeoutS @param {boolean} [resident]
	 * @returns {import("./faults.cjs").Observation}
	 */
	#observe(done, timeoutS, resident = false) {
		return {
			residentExec: resident,
			execReportsStart: this.#kern.execReportsStart,
			exitCode: done.exitCode,
			started: done.started,
			stdout: text(done.stdout),
			stderr: text(done.stderr),
			deadlineFired: done.deadlineFired,
			// An older kern writes nothing on the alive pipe: no information.
			alive: done.aliveBytes || null,
			aliveOpen: done.aliveOpen,
			memoryMb: this.#cfg.memoryMb,
			timeoutS,
			image: this.#cfg.image,
		};
	}

	/**
	 * One call: a fresh box, classified, with files and rich results.
	 * @param {string[]} command @param {CallOptions} call @param {string | null} [resultsFile]
	 */
	async #call(command, call, resultsFile = null) {
		const timeoutS = call.timeoutS === undefined ? this.#cfg.timeoutS : checkTimeout(call.timeoutS);
		const ws = this.#openWorkspace() ?? (await this.#workspace());
		throwIfAborted(call.signal);
		const before = this.#cfg.trackFiles ? ws.stamps() : null;
		const callbacks = {
			onStdout: call.onStdout ?? this.#cfg.onStdout ?? undefined,
			onStderr: call.onStderr ?? this.#cfg.onStderr ?? undefined,
			signal: call.signal,
		};
		const resident = this.#resident !== null;
		const done = resident ? await /** @type {Resident} */ (this.#resident).run(command, timeoutS, callbacks) : await this.#box(command, timeoutS, callbacks);
		if (done.aborted) throwIfAborted(call.signal);
		const obs = this.#observe(done, timeoutS, resident);
		const v = classify(obs);
		if (v.raises) throw new SandboxError(/** @type {import("./results.cjs").SandboxFault} */ (v.fault).message);
		/** @type {import("./results.cjs").Result[]} */
		let results = [];
		if (resultsFile !== null) {
			const blob = await ws.readScratch(resultsFile, RESULTS_MAX);
			results = blob ? parseResults(blob) : [];
		}
		const split = splitStderr(/** @type {string} */ (obs.stderr));
		return new ExecutionResult({
			stdout: /** @type {string} */ (obs.stdout),
			stderr: /** @type {string} */ (obs.stderr),
			exitCode: v.exitCode,
			durationMs: done.durationMs,
			fault: v.fault,
			files: before ? changes(before, ws.stamps()) : [],
			results,
			truncated: done.truncated,
			codeStderr: split.codeStderr,
			runtimeNotes: split.runtimeNotes,
		});
	}

	/**
	 * Run code in a fresh, network-off box on the workspace.
	 * language: "python" (rich results: a trailing expression, display(),
	 * open matplotlib figures), "bash", "sh" or "node"; an interpreter the
	 * image lacks gives an exec_failed fault.
	 * @param {string} code @param {CallOptions & {language?: string}} [opts]
	 */
	async runCode(code, opts = {}) {
		if (typeof code !== "string") throw new SandboxError(`code must be a string, not ${typeof code}`);
		const language = opts.language ?? "python";
		if (!LANGUAGES.includes(language)) throw new SandboxError(`language must be one of ${LANGUAGES.join(", ")}, not ${JSON.stringify(language)}`);
		if (opts.timeoutS !== undefined) checkTimeout(opts.timeoutS);
		throwIfAborted(opts.signal);
		const ws = this.#openWorkspace() ?? (await this.#workspace());
		const pooled = language === "python" && !opts.onStdout && !opts.onStderr && !this.#cfg.onStdout && !this.#cfg.onStderr;
		if (pooled && this.#pool) {
			// Callbacks force a cold box: a pooled box answers with one reply.
			const limit = opts.timeoutS === undefined ? this.#cfg.timeoutS : opts.timeoutS;
			const box = await this.#pool.take(limit);
			if (box) {
				const before = this.#cfg.trackFiles ? ws.stamps() : null;
				const result = await this.#pool.serve(box, code, limit, opts.signal);
				throwIfAborted(opts.signal);
				if (before) Object.assign(result, { files: changes(before, ws.stamps()) });
				return result;
			}
		}
		const id = hex(8);
		if (language === "python") {
			const cell = `.cell-${id}.py`;
			const run = `.run-${id}.py`;
			const res = `.res-${id}.json`;
			try {
				ws.createScratch(cell, code);
				ws.createScratch(run, runnerSource(`${WORKSPACE}/${cell}`, `${WORKSPACE}/${res}`));
				return await this.#call(["python3", "-u", `${WORKSPACE}/${run}`], opts, res);
			} finally {
				ws.removeScratch(cell, run);
				ws.removeScratchMaybe(res);
			}
		}
		if (code.includes("\0")) throw new SandboxError(`${language} code cannot contain NUL`);
		const program = language === "node" ? "node" : language;
		if (Buffer.byteLength(code, "utf8") <= ARGV_CODE_MAX) return this.#call([program, language === "node" ? "-e" : "-c", code], opts);
		const cell = `.cell-${id}.${language === "node" ? "js" : "sh"}`;
		try {
			ws.createScratch(cell, code);
			return await this.#call([program, `${WORKSPACE}/${cell}`], opts);
		} finally {
			ws.removeScratch(cell);
		}
	}

	/**
	 * Run a command (a non-empty array of strings, never a shell string) in
	 * a fresh, network-off box on the workspace.
	 * @param {string[]} argv @param {CallOptions} [opts]
	 */
	async run(argv, opts = {}) {
		if (!Array.isArray(argv) || !argv.length) throw new SandboxError("argv must be a non-empty array of strings (never a shell string)");
		for (const a of argv) {
			if (typeof a !== "string" || a.includes("\0")) throw new SandboxError(`argv entries must be strings without NUL, not ${JSON.stringify(a)}`);
		}
		if (opts.timeoutS !== undefined) checkTimeout(opts.timeoutS);
		return this.#call([...argv], opts);
	}

	/**
	 * Write a workspace file (a string as UTF-8, or bytes), creating parent
	 * directories. Symlinks, FIFOs, devices, sockets, `..` and paths outside
	 * /workspace are refused.
	 * @param {string} p @param {string | Uint8Array} data
	 */
	async writeFile(p, data) {
		await (await this.#workspace()).writeFile(p, data);
	}

	/**
	 * The bytes of a regular workspace file: SandboxError over maxBytes or
	 * for anything that is not a regular file; an ENOENT error if missing.
	 * @param {string} p @param {{maxBytes?: number | null}} [opts]
	 */
	async readFile(p, opts = {}) {
		return (await this.#workspace()).readFile(p, opts.maxBytes ?? null);
	}

	/**
	 * Regular files under the workspace (or `subdir`), sorted by path; .deps
	 * and the package's scratch files left out, symlinks skipped.
	 * @param {string} [subdir]
	 */
	async listFiles(subdir = "") {
		return (await this.#workspace()).listFiles(subdir);
	}

	/**
	 * Save the workspace to `dest` as a portable .tar.gz (gzip level 1,
	 * USTAR): regular files and directories, .deps included.
	 * @param {string} dest
	 */
	async snapshot(dest) {
		await snapshots.snapshot(await this.#workspace(), dest);
	}

	/**
	 * Replace the workspace's content with a snapshot's. Archives with
	 * absolute, `..`, sparse, symlink, hard link, device or FIFO members are
	 * refused before anything changes.
	 * @param {string} src
	 */
	async restore(src) {
		await snapshots.restore(await this.#workspace(), src);
	}

	/**
	 * Start a kernel: one warm python3 in one long-lived box, for cells that
	 * share in-memory state. Raises SandboxError when it cannot start.
	 * @param {{timeoutS?: number}} [opts] the default deadline of its cells
	 * @returns {Promise<Kernel>}
	 */
	async kernel(opts = {}) {
		if (opts.timeoutS !== undefined) checkTimeout(opts.timeoutS);
		const cfg = this.#cfg;
		const ws = await this.#workspace();
		const script = `.kernel-${hex(8)}.py`;
		const envFile = this.#writeEnvFile(this.#pycDir !== null);
		const name = boxName();
		let box;
		try {
			ws.createScratch(script, driverSource(cfg.maxOutputBytes, RESULTS_CAP, true));
			box = await DriverBox.start({
				kern: this.#kern.path,
				argv: this.#argv(["python3", `${WORKSPACE}/${script}`], cfg.timeoutS, { name, envFile, kernTimeout: KERNEL_LIFETIME_S }),
				name,
				env: this.#kernEnv(),
				outCap: cfg.maxOutputBytes,
				replyLimit: replyCap(cfg.maxOutputBytes, RESULTS_CAP),
				memoryMb: cfg.memoryMb,
			});
			const failure = await box.waitHello(KERNEL_START_MS);
			if (failure !== null) throw new SandboxError(`kernel() could not start: ${await startFailure(box, failure, cfg.image)}`);
		} finally {
			// It was read when python3 started (or will never be).
			ws.removeScratch(script);
		}
		box.idle(true);
		const k = new Kernel({
			box,
			ws,
			image: cfg.image,
			timeoutS: opts.timeoutS ?? cfg.timeoutS,
			trackFiles: cfg.trackFiles,
			maxOutputBytes: cfg.maxOutputBytes,
			onStdout: cfg.onStdout,
			onStderr: cfg.onStderr,
			onClose: () => this.#kernels.delete(k),
		});
		this.#kernels.add(k);
		return k;
	}

	/**
	 * The setup box (§6): network on, a writable root, no tmpfs, .deps
	 * writable; the only network window a session has.
	 * @param {string} setup
	 */
	async #runSetup(setup) {
		const limit = Math.max(this.#cfg.timeoutS, SETUP_MIN_TIMEOUT_S);
		const done = await this.#box(setupCommand(setup), limit, {}, { network: "host", readOnly: false, tmpfs: false, depsRo: false });
		const v = classify(this.#observe(done, limit));
		if (done.exitCode !== 0 || v.fault !== null) {
			const out = strip(splitStderr(text(done.stderr)).codeStderr) || strip(text(done.stdout));
			const why = v.fault ? v.fault.message : Array.from(out).slice(-2000).join("");
			throw new SandboxError(`setup failed (exit ${done.exitCode}): ${why}`);
		}
		if (this.#cfg.depsReadonly && this.#hasDeps()) {
			// Bytecode compiled now, by a network-off box, is the only bytecode
			// .deps will hold: later calls cannot write there.
			await this.#box(["python3", "-m", "compileall", "-q", DEPS], limit, {}, { network: "none", depsRo: false });
		}
	}
}

/** @param {Sandbox} sbx */
const configOf = (sbx) => configs.get(sbx);
/** @param {Sandbox} sbx */
const poolOf = (sbx) => pools.get(sbx);

module.exports = { Sandbox, LANGUAGES, throwIfAborted, configOf, poolOf };
