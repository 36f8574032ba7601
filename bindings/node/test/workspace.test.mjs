// Workspace I/O against what a box leaves behind (python-binding.md §4):
// symlinks out of the workspace, FIFOs, directories, `..`, and a file
// swapped for a symlink between two calls. Real boxes on the host image.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync, lstatSync, existsSync, rmSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { kern } from "./helpers.mjs";

const { Sandbox, SandboxError } = kern;
let sbx;
// Links point at a decoy outside the workspace, never at a real host file:
// a regression must not be able to damage the host the test runs on.
let decoy;
before(async () => {
	sbx = await Sandbox.create({ image: "host", timeoutS: 20 });
	decoy = mkdtempSync(path.join(tmpdir(), "kern-node-decoy-"));
	writeFileSync(path.join(decoy, "secret"), "host secret\n");
});
after(async () => {
	await sbx.close();
	rmSync(decoy, { recursive: true, force: true });
});
const sh = (script) => sbx.run(["sh", "-c", script]);

test("writeFile/readFile round trip: strings as UTF-8, bytes as they are, parents created", async () => {
	await sbx.writeFile("deep/er/a.txt", "grüß\n");
	await sbx.writeFile("/workspace/b.bin", Buffer.from([0, 255, 10]));
	assert.equal((await sbx.readFile("deep/er/a.txt")).toString(), "grüß\n");
	assert.deepEqual([...(await sbx.readFile("b.bin"))], [0, 255, 10]);
	const r = await sh("cat deep/er/a.txt; od -An -tu1 b.bin");
	assert.equal(r.stdout, "grüß\n   0 255  10\n");
});

test("a symlink the box planted is refused, whatever it points at", async () => {
	assert.equal((await sh(`ln -s ${decoy}/secret shadow; ln -s ${decoy} etc; ln -s a.txt rel`)).exitCode, 0);
	await assert.rejects(sbx.readFile("shadow"), (e) => e instanceof SandboxError && /refused: it is a symlink/.test(e.message));
	await assert.rejects(sbx.readFile("etc/secret"), (e) => e instanceof SandboxError && /'etc' is a symlink or not a directory/.test(e.message));
	await assert.rejects(sbx.readFile("rel"), SandboxError);
	await assert.rejects(sbx.writeFile("shadow", "x"), SandboxError);
	await assert.rejects(sbx.writeFile("etc/x", "x"), SandboxError);
	// Nothing went through the links on the host.
	assert.ok(lstatSync(path.join(sbx.workspace, "shadow")).isSymbolicLink());
	assert.equal(readFileSync(path.join(decoy, "secret"), "utf8"), "host secret\n");
	assert.equal(existsSync(path.join(decoy, "x")), false);
});

test("a FIFO is refused at once: the box cannot make the host wait", async () => {
	assert.equal((await sh("mkfifo out.png")).exitCode, 0);
	const t0 = Date.now();
	await assert.rejects(sbx.readFile("out.png"), /'out\.png' refused: it is a FIFO/);
	await assert.rejects(sbx.writeFile("out.png", "x"), /'out\.png' refused: it is not a regular file/);
	assert.ok(Date.now() - t0 < 2000);
});

test("directories, `..`, absolute paths outside /workspace and NUL are refused", async () => {
	await assert.rejects(sbx.readFile("deep"), /refused: it is a directory/);
	await assert.rejects(sbx.readFile("no-such-file"), { code: "ENOENT" });
	for (const p of ["../x", "a/../../x", "/etc/passwd", "/workspace/../etc/passwd", "a\0b", "", "/workspace"]) {
		await assert.rejects(sbx.readFile(p), SandboxError, p);
		await assert.rejects(sbx.writeFile(p, "x"), SandboxError, p);
	}
});

test("a file swapped for a symlink between calls is refused on the next read", async () => {
	await sbx.writeFile("swap.txt", "mine");
	assert.equal((await sbx.readFile("swap.txt")).toString(), "mine");
	await sh(`rm swap.txt; ln -s ${decoy}/secret swap.txt; mkdir -p d; mv deep/er d/er2; rm -rf deep; ln -s ${decoy} deep`);
	await assert.rejects(sbx.readFile("swap.txt"), /symlink/);
	await assert.rejects(sbx.readFile("deep/er/a.txt"), /'deep' is a symlink or not a directory/);
	assert.equal((await sbx.readFile("d/er2/a.txt")).toString(), "grüß\n");
});

test("readFile maxBytes: over it is an error, at it is fine", async () => {
	await sbx.writeFile("ten.txt", "0123456789");
	assert.equal((await sbx.readFile("ten.txt", { maxBytes: 10 })).length, 10);
	await assert.rejects(sbx.readFile("ten.txt", { maxBytes: 9 }), /larger than maxBytes=9/);
});

test("listFiles: regular files only, .deps and the binding's scratch left out, symlinks skipped", async () => {
	await sh("mkdir -p .deps/pkg sub/x && echo 1 > .deps/pkg/m.py && echo 22 > sub/x/f && echo x > .run-0123abcd.py");
	const all = (await sbx.listFiles()).map((f) => f.path);
	assert.ok(all.includes("sub/x/f") && all.includes("ten.txt"));
	assert.ok(!all.some((p) => p.startsWith(".deps") || p.startsWith(".run-") || p === "shadow" || p === "out.png"), all.join());
	const sub = await sbx.listFiles("sub");
	assert.deepEqual(sub.map((f) => [f.path, f.size, f.change]), [["sub/x/f", 3, null]]);
	await assert.rejects(sbx.listFiles("deep"), SandboxError);
});

test("files: what a call created and modified, nothing it only read", async () => {
	await sbx.writeFile("keep.txt", "k");
	await sbx.writeFile("mod.txt", "1");
	const r = await sh("cat keep.txt >/dev/null; echo 22 > mod.txt; echo n > new.txt; mkdir -p n/m; echo q > n/m/q; ln -s new.txt lnk");
	const got = r.files.map((f) => [f.path, f.change, f.size]).sort();
	assert.deepEqual(got, [["mod.txt", "modified", 3], ["n/m/q", "created", 2], ["new.txt", "created", 2]]);
	const quiet = new Sandbox({ image: "host", trackFiles: false });
	try {
		assert.deepEqual((await quiet.run(["sh", "-c", "echo x > y"])).files, []);
	} finally {
		await quiet.close();
	}
});

test("a workspace path persists; a temporary one is removed by close()", async () => {
	const tmp = await Sandbox.create({ image: "host" });
	await tmp.run(["sh", "-c", "mkdir -p ro && echo x > ro/f && chmod 000 ro"]);
	const dir = tmp.workspace;
	assert.ok(existsSync(dir));
	await tmp.close();
	assert.equal(existsSync(dir), false);
	const kept = path.join(path.dirname(dir), `kern-node-kept-${process.pid}`);
	const a = await Sandbox.create({ image: "host", workspace: kept });
	await a.runCode("echo persisted > p.txt", { language: "sh" });
	await a.close();
	const b = await Sandbox.create({ image: "host", workspace: kept });
	assert.equal((await b.readFile("p.txt")).toString(), "persisted\n");
	await b.close();
	assert.equal(readFileSync(path.join(kept, "p.txt"), "utf8"), "persisted\n");
	rmSync(kept, { recursive: true }); // the caller's to remove
});
