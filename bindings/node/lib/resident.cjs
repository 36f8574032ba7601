"use strict";
// persist: true: one resident box per workspace, reused through `kern exec`
// (python-binding.md §14; the Python package's resident.py). The box is
// `kern-sbx-<12 hex of the workspace path>`, started detached (`-d --init
// -- sleep <ttl>`, kern's --timeout ttl+5) with the session's whole
// configuration and the label kern.sbx.cfg=<16 hex of that configuration>
// (boxkey.cjs, the same hash as Python's: a box either package started is
// reused by the other when the configurations match). Each call is `kern
// exec NAME -w /workspace [-u USER] -- COMMAND` with the one-shot pipes,
// so it is classified like a one-shot run. Processes a call leaves running
// stay in the box, and so does /tmp: that is the point, and the trade. A
// box found with another configuration is replaced; a box that went away
// is started again once per call, with a warning.

const crypto = require("node:crypto");
const fs = require("node:fs");
const { spawn } = require("node:child_process");
const { configKey } = require("./boxkey.cjs");
const { userIsRoot } = require("./imagecache.cjs");
const { runKern } = require("./spawn.cjs");
const { SandboxError } = require("./errors.cjs");
const { WORKSPACE } = require("./rules.cjs");
const { strip } = require("./faults.cjs");

const TTL_S = 3600;
const LABEL = "kern.sbx.cfg";
// `kern box -d` returns once the workload runs; a first pull is the
// Sandbox's job, so this is about starting a box.
const CREATE_TIMEOUT_MS = 120 * 1000;
const QUICK_TIMEOUT_MS = 15 * 1000;
const GONE = "no running box named";

/**
 * @typedef {import("./boxkey.cjs").KeySession & {writeEnvFile: (withPyc: boolean) => string, workspace: () => string}} ResidentSession
 */

/**
 * Run a kern subcommand to its end.
 * @param {string} kern @param {string[]} argv @param {number} timeoutMs @param {Record<string, string | undefined>} [env]
 * @returns {Promise<{code: number, stdout: string, stderr: string}>}
 */
function kernRun(kern, argv, timeoutMs, env) {
	return new Promise((resolve) => {
		const p = spawn(kern, argv, { stdio: ["ignore", "pipe", "pipe"], env: env || process.env, detached: true });
		/** @type {Buffer[]} */
		const out = [];
		/** @type {Buffer[]} */
		const err = [];
		p.stdout.on("data", (d) => out.push(d));
		p.stderr.on("data", (d) => err.push(d));
		const timer = setTimeout(() => {
			try {
				process.kill(-(/** @type {number} */ (p.pid)), "SIGKILL");
			} catch {
				// gone
			}
		}, timeoutMs);
		p.on("error", (e) => {
			clearTimeout(timer);
			resolve({ code: -1, stdout: "", stderr: e.message });
		});
		p.on("close", (code, signal) => {
			clearTimeout(timer);
			const timedOut = signal === "SIGKILL" && code === null;
			resolve({
				code: code ?? -1,
				stdout: Buffer.concat(out).toString("utf8"),
				stderr: timedOut ? `kern ${argv[0]} did not return within ${timeoutMs / 1000} s` : Buffer.concat(err).toString("utf8"),
			});
		});
	});
}

class Resident {
	/** @param {ResidentSession} session */
	constructor(session) {
		this.session = session;
		const digest = crypto.createHash("sha256").update(fs.realpathSync(session.workspace()), "utf8").digest("hex");
		this.name = `kern-sbx-${digest.slice(0, 12)}`;
		this.running = false; // seen running with our label since the last fault
		this.killed = false; // the last call was killed: the box may be ending
		/** @type {string[] | null} */
		this.userFlag = null;
		this.startStderr = "";
		/** @type {Promise<void> | null} one ensure() at a time */
		this.ensuring = null;
	}

	/** Our box's `kern ps --json` row, when it is running. */
	async ps() {
		const r = await kernRun(this.session.kern().path, ["ps", "--filter", `name=${this.name}`, "--json"], QUICK_TIMEOUT_MS);
		let rows;
		try {
			rows = JSON.parse(r.stdout || "[]");
		} catch {
			return null;
		}
		if (!Array.isArray(rows)) return null;
		return rows.find((row) => row && typeof row === "object" && row.name === this.name && row.status === "running") || null;
	}

	async stopBox() {
		await kernRun(this.session.kern().path, ["stop", this.name], QUICK_TIMEOUT_MS);
	}

	async label() {
		return (await configKey(this.session, this.session.cfg.timeoutS)).slice(0, 16);
	}

	/** Make sure our box runs with this session's configuration. */
	ensure() {
		if (this.running) return Promise.resolve();
		if (!this.ensuring) {
			this.ensuring = (async () => {
				const label = await this.label();
				const row = await this.ps();
				if (row) {
					const labels = row.labels;
					if (labels && typeof labels === "object" && labels[LABEL] === label) {
						this.running = true;
						return;
					}
					// Another configuration (an older session's): replace it.
					await this.stopBox();
				}
				await this.create(label);
				this.running = true;
			})().finally(() => {
				this.ensuring = null;
			});
		}
		return this.ensuring;
	}

	/** @param {string} label */
	async create(label) {
		const s = this.session;
		const envFile = s.writeEnvFile(s.withPyc());
		const argv = s.argv(["sleep", String(TTL_S)], s.cfg.timeoutS, {
			name: this.name,
			envFile,
			kernTimeout: TTL_S + 5,
			extra: ["-d", "--init", "--label", `${LABEL}=${label}`],
		});
		const r = await kernRun(s.kern().path, argv, CREATE_TIMEOUT_MS, s.kernEnv());
		this.startStderr = r.stderr;
		if (r.code === 0) return;
		// Another process may have started the same box at the same moment:
		// the loser adopts the winner's box.
		const row = await this.ps();
		if (row && row.labels && row.labels[LABEL] === label) return;
		const tail = Array.from(strip(r.stderr)).slice(-500).join("");
		throw new SandboxError(`persist: the resident box ${this.name} could not start (kern exit ${r.code}): ${tail}`);
	}

	/** Stop the resident box (`kern stop`); the next call starts a new one. */
	async destroy() {
		await this.stopBox();
		this.running = false;
	}

	async userArgs() {
		if (this.userFlag === null) {
			const user = this.session.cfg.user;
			/** @type {string[]} */
			let flag = [];
			if (user !== null && !userIsRoot(user)) {
				const help = await kernRun(this.session.kern().path, ["exec", "--help"], QUICK_TIMEOUT_MS);
				const t = help.stdout + help.stderr;
				if (!(t.includes("-u,") || t.includes("-u <") || t.includes("--user"))) {
					throw new SandboxError(`persist with user ${JSON.stringify(user)} needs \`kern exec -u\`, which this kern (${this.session.kern().path}) does not offer`);
				}
				flag = ["-u", user];
			}
			this.userFlag = flag;
		}
		return this.userFlag;
	}

	/**
	 * One call in the resident box, started (again) when needed.
	 * @param {string[]} command @param {number} timeoutS
	 * @param {{onStdout?: (c: Buffer) => unknown, onStderr?: (c: Buffer) => unknown, signal?: AbortSignal}} call
	 */
	async run(command, timeoutS, call) {
		const s = this.session;
		for (let attempt = 1; ; attempt++) {
			await this.ensure();
			const argv = ["exec", this.name, "-w", WORKSPACE, ...(await this.userArgs()), "--", ...command];
			const done = await runKern({
				kern: s.kern().path,
				argv,
				env: s.kernEnv(),
				name: this.name,
				execClient: true,
				timeoutS,
				maxOutputBytes: s.cfg.maxOutputBytes,
				alive: true,
				onStdout: call.onStdout,
				onStderr: call.onStderr,
				signal: call.signal,
			});
			const gone = done.started.length === 0 && done.exitCode === 1 && done.stderr.toString("utf8").includes(GONE);
			if (gone && attempt === 1) {
				if (!this.killed) {
					process.emitWarning(`the resident box ${this.name} was gone (stopped from outside, or past its ${TTL_S} s life); starting it again`, { code: "KERN_SANDBOX_RESIDENT_GONE" });
				}
				this.running = false;
				continue;
			}
			// A kill may have been the whole box's (an OOM kills every task in
			// it, and the box may still be ending): look again before the next
			// call, and do not warn when it is gone.
			this.killed = [137, 143, 159].includes(done.exitCode);
			if (this.killed || gone) this.running = false;
			return done;
		}
	}
}

module.exports = { Resident, TTL_S, LABEL };
