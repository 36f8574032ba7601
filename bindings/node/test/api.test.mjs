// The surface a program written against the published package uses (new
// Sandbox, open/close, withSandbox, per-call and session options), rich
// results from matplotlib and pandas (python-binding.md §5; the rest of §5
// is in the shared table, cases.test.mjs), setup= and .deps (§6),
// egressAllow (§7): each on real boxes.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync } from "node:fs";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { kern, assertNothingLeft } from "./helpers.mjs";

const { Sandbox, SandboxError, withSandbox, runCode } = kern;

after(async () => {
	await assertNothingLeft(assert);
});

/** Debian's python3 on the host has this module (the host image runs it). */
const hostHas = (mod) => spawnSync("/usr/bin/python3", ["-c", `import ${mod}`]).status === 0;

test("drop-in: new Sandbox(opts), open(), per-call { language, timeoutS, onStdout, onStderr }, session callbacks, close()", async () => {
	const session = [];
	const sbx = new Sandbox({ image: "host", timeoutS: 20, memoryMb: 256, onStdout: (c) => session.push(c) });
	assert.equal(sbx.workspace, null);
	await sbx.open();
	await sbx.open(); // idempotent
	const ws = sbx.workspace;
	assert.ok(ws && existsSync(ws));
	try {
		// The session's callback gets what a call without its own prints.
		const a = await sbx.runCode("print('to the session')");
		assert.equal(Buffer.concat(session).toString(), "to the session\n");
		assert.ok(session.every((c) => Buffer.isBuffer(c)));
		assert.equal(a.stdout, "to the session\n");
		// A call's own callbacks replace the session's.
		const out = [];
		const err = [];
		const b = await sbx.runCode("echo out; echo err >&2; exit 4", { language: "bash", onStdout: (c) => out.push(c), onStderr: (c) => err.push(c) });
		assert.equal(Buffer.concat(out).toString(), "out\n");
		assert.equal(Buffer.concat(err).toString(), "err\n");
		assert.equal(Buffer.concat(session).toString(), "to the session\n");
		assert.deepEqual([b.exitCode, b.fault, b.success], [4, null, false]);
		// A call's deadline overrides the session's.
		const t = await sbx.runCode("import time; time.sleep(30)", { timeoutS: 1 });
		assert.equal(t.fault?.type, "timeout");
		assert.ok(t.durationMs < 15000, String(t.durationMs));
		assert.equal(t.exitCode, 137);
		// readFile(path, { maxBytes }) and the workspace the calls share.
		await sbx.writeFile("in.txt", "abc");
		assert.equal((await sbx.runCode("print(open('in.txt').read().upper())")).stdout, "ABC\n");
		assert.equal((await sbx.readFile("in.txt", { maxBytes: 3 })).toString(), "abc");
	} finally {
		await sbx.close();
	}
	await sbx.close(); // idempotent
	assert.equal(existsSync(ws), false);
});

// (withSandbox(fn) alone takes the default image, a registry pull: its
// overload is checked by tsc in package.test; here the image is the host.)
test("withSandbox(opts, fn): fn's value comes back, the sandbox is closed whatever fn does", async () => {
	let seen = null;
	const v = await withSandbox({ image: "host" }, async (s) => {
		seen = s.workspace;
		return (await s.runCode("print(2 + 2)")).stdout;
	});
	assert.equal(v, "4\n");
	assert.ok(seen && !existsSync(seen));
	let inner = null;
	await assert.rejects(
		withSandbox({ image: "host", env: { GREETING: "hi" } }, async (s) => {
			inner = s.workspace;
			assert.equal((await s.run(["sh", "-c", "echo $GREETING"])).stdout, "hi\n");
			throw new Error("fn failed");
		}),
		/fn failed/,
	);
	assert.ok(inner && !existsSync(inner));
	// Bad options throw before fn runs.
	let ran = false;
	await assert.rejects(withSandbox({ image: "host", memoryMb: -1 }, () => { ran = true; }), SandboxError);
	assert.equal(ran, false);
});

test("rich results: a matplotlib figure without savefig is a PNG; a pandas DataFrame is HTML", { skip: hostHas("matplotlib") && hostHas("pandas") ? false : "python3-matplotlib or python3-pandas is not installed on the host" }, async () => {
	await withSandbox({ image: "host", env: { MPLCONFIGDIR: "/tmp" } }, async (s) => {
		const r = await s.runCode("import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\nplt.plot([1, 4, 9])\nprint('plotted')");
		assert.equal(r.success, true, r.stderr);
		assert.equal(r.stdout, "plotted\n");
		const figs = r.results.filter((x) => x.png);
		assert.equal(figs.length, 1);
		assert.deepEqual(Buffer.from(figs[0].png, "base64").subarray(0, 8), Buffer.from("89504e470d0a1a0a", "hex"));
		assert.match(figs[0].text, /Figure/);
		assert.deepEqual(r.files, []);
		await s.writeFile("data.csv", "a,b\n1,2\n3,4\n");
		const df = await s.runCode("import pandas as pd\npd.read_csv('data.csv').describe()");
		assert.equal(df.success, true, df.stderr);
		assert.match(df.results[0].html, /<table[\s\S]*mean/);
		assert.ok(df.results[0].formats().includes("html"));
	});
});

// setup= (python-binding.md §6, workspace, setup and dependencies): one box
// with the network and a writable root writes .deps; calls import from it and
// cannot change it.
const SETUP = "mkdir -p /workspace/.deps/kmod && printf 'VALUE = 1\\n' > /workspace/.deps/kmod/__init__.py && echo setup-ran > /tmp/only-in-setup";
// A cell that plants bytecode for kmod, which a later import would run.
const PLANT = [
	"import importlib.util, os, kmod",
	"src = kmod.__file__",
	"st = os.stat(src)",
	"code = compile('VALUE = 666\\n', src, 'exec')",
	"from importlib._bootstrap_external import _code_to_timestamp_pyc",
	"data = _code_to_timestamp_pyc(code, st.st_mtime, st.st_size)",
	"pyc = importlib.util.cache_from_source(src)",
	"os.makedirs(os.path.dirname(pyc), exist_ok=True)",
	"try:",
	"    open(pyc, 'wb').write(data)",
	"    print('planted')",
	"except OSError as e:",
	"    print(e.strerror)",
].join("\n");

test("setup: .deps is importable and read-only to the calls (planted bytecode is refused); the setup box's root is gone", async () => {
	await withSandbox({ image: "host", setup: SETUP }, async (s) => {
		assert.equal((await s.runCode("import kmod; print(kmod.VALUE)")).stdout, "1\n");
		assert.equal((await s.run(["ls", "/tmp"])).stdout, "");
		assert.ok(readdirSync(path.join(s.workspace, ".deps", "kmod", "__pycache__")).length > 0);
		assert.match((await s.runCode("open('/workspace/.deps/kmod/x.py', 'w')")).stderr, /Read-only file system/);
		const p = await s.runCode(PLANT);
		assert.equal(p.stdout, "Read-only file system\n", p.stderr);
		assert.equal((await s.runCode("import kmod; print(kmod.VALUE)")).stdout, "1\n");
		assert.equal((await s.runCode("open('ok.txt', 'w').write('1')")).success, true);
	});
	// The check above is not vacuous: with depsReadonly false the plant works.
	await withSandbox({ image: "host", setup: SETUP, depsReadonly: false }, async (s) => {
		assert.equal((await s.runCode(PLANT)).stdout, "planted\n");
		assert.equal((await s.runCode("import kmod; print(kmod.VALUE)")).stdout, "666\n");
	});
	await assert.rejects(Sandbox.create({ image: "host", setup: "echo broken >&2; exit 3" }), (e) => e instanceof SandboxError && /setup failed \(exit 3\): broken/.test(e.message));
});

test("egressAllow: the box's HTTP goes through kern's proxy, which refuses an unlisted name (403) and IP literals; no other way out", async () => {
	// Nothing leaves the host: the proxy refuses before it resolves.
	await withSandbox({ image: "host", egressAllow: ["pypi.org"] }, async (s) => {
		const env = await s.run(["sh", "-c", "echo $http_proxy; echo $https_proxy"]);
		const [httpProxy, httpsProxy] = env.stdout.trim().split("\n");
		assert.match(httpProxy, /^http:\/\/[0-9.]+:\d+\/?$/);
		assert.equal(httpsProxy, httpProxy);
		const probe = [
			"import socket, urllib.request, urllib.error",
			"for url in ('http://unlisted.example/', 'http://192.0.2.1/'):",
			"    try:",
			"        urllib.request.urlopen(url, timeout=10)",
			"        print('reached', url)",
			"    except urllib.error.HTTPError as e:",
			"        print(e.code)",
			"s = socket.socket()",
			"s.settimeout(5)",
			"try:",
			"    s.connect(('192.0.2.1', 80))",
			"    print('connected')",
			"except OSError as e:",
			"    print(type(e).__name__)",
		].join("\n");
		const r = await s.runCode(probe);
		assert.equal(r.success, true, r.stderr);
		const lines = r.stdout.trim().split("\n");
		assert.deepEqual(lines.slice(0, 2), ["403", "403"]);
		assert.notEqual(lines[2], "connected");
	});
});
