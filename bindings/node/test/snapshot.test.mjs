// snapshot() and restore() (python-binding.md §4): a portable .tar.gz,
// and archives from anywhere, so every hostile member kind refuses the
// whole archive before anything is written. Hostile archives are made by
// Python's tarfile, independently of this package's tar code. Most
// hostile kinds and Python-written archives are cases of the shared table
// (cases.test.mjs), which the Python package runs too.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, readFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { tmpdir } from "node:os";
import path from "node:path";
import { kern, pyArchive } from "./helpers.mjs";

const { Sandbox, SandboxError } = kern;
const PY = "/usr/bin/python3";
let dir;
let sbx;
before(async () => {
	dir = mkdtempSync(path.join(tmpdir(), "kern-node-snap-"));
	sbx = await Sandbox.create({ image: "host" });
});
after(async () => {
	await sbx.close();
	rmSync(dir, { recursive: true, force: true });
});

test("round trip: files, empty directories and modes; symlinks and FIFOs are left out", async () => {
	await sbx.writeFile("a/b.txt", "hello");
	await sbx.writeFile("big.bin", Buffer.alloc(300000, 7));
	await sbx.run(["sh", "-c", "mkdir -p empty/inner && chmod +x big.bin && ln -s /etc/passwd link && mkfifo fifo"]);
	const snap = path.join(dir, "rt.tgz");
	await sbx.snapshot(snap);
	const listing = execFileSync("tar", ["tzvf", snap], { encoding: "utf8" });
	assert.match(listing, /^-rwxr-xr-x .* big\.bin$/m);
	assert.doesNotMatch(listing, /link|fifo/);
	const other = await Sandbox.create({ image: "host" });
	try {
		await other.restore(snap);
		assert.equal((await other.readFile("a/b.txt")).toString(), "hello");
		const r = await other.run(["sh", "-c", "test -x big.bin && test -d empty/inner && od -An -tu1 -N2 big.bin && wc -c < big.bin"]);
		assert.equal(r.stdout, "   7   7\n300000\n");
	} finally {
		await other.close();
	}
});

test("the archive is gzip level 1 USTAR that Python's tarfile reads", async () => {
	const snap = path.join(dir, "py-read.tgz");
	await sbx.snapshot(snap);
	const out = execFileSync(PY, ["-c", "import sys,tarfile\nt=tarfile.open(sys.argv[1])\nprint(sorted((m.name,m.size) for m in t if m.isfile()))\nprint({m.name: t.extractfile(m).read().decode() for m in t if m.name=='a/b.txt'})", snap], { encoding: "utf8" });
	assert.match(out, /\('a\/b\.txt', 5\)/);
	assert.match(out, /'a\/b\.txt': 'hello'/);
	assert.equal(readFileSync(snap)[0], 0x1f);
	assert.equal(readFileSync(snap)[8], 4, "gzip XFL 4: fastest compression");
});

// The hostile member kinds (absolute, `..`, sparse, links, devices,
// FIFOs) are cases of the shared table (cases.test.mjs), which Python runs
// too.

test("restore refuses a truncated archive", async () => {
	const good = path.join(dir, "trunc-src.tgz");
	pyArchive(good, [["big.txt", "0", "y".repeat(100000)]]);
	const raw = execFileSync("gzip", ["-dc", good]);
	const cut = path.join(dir, "trunc.tgz");
	execFileSync("sh", ["-c", `head -c 20000 | gzip -1 > '${cut}'`], { input: raw });
	await assert.rejects(sbx.restore(cut), SandboxError);
});

test("restore replaces the workspace's content; .deps is part of a snapshot, scratch is not; plain tar works too", async () => {
	const a = await Sandbox.create({ image: "host" });
	const b = await Sandbox.create({ image: "host" });
	try {
		await a.run(["sh", "-c", "mkdir -p .deps/pkg && echo m > .deps/pkg/m.py && echo keep > keep.txt && echo s > .run-0000aaaa.py"]);
		const snap = path.join(dir, "deps.tgz");
		await a.snapshot(snap);
		const names = execFileSync("tar", ["tzf", snap], { encoding: "utf8" }).split("\n");
		assert.ok(names.includes(".deps/pkg/m.py") && names.includes("keep.txt"), names.join());
		assert.ok(!names.some((n) => n.startsWith(".run-")), names.join());
		await b.writeFile("old.txt", "to be replaced");
		await b.restore(snap);
		assert.deepEqual((await b.listFiles()).map((f) => f.path), ["keep.txt"]);
		assert.equal((await b.run(["cat", ".deps/pkg/m.py"])).stdout, "m\n");
		const plain = path.join(dir, "plain.tar");
		execFileSync("sh", ["-c", `gzip -dc '${snap}' > '${plain}'`]);
		await b.writeFile("old.txt", "again");
		await b.restore(plain);
		assert.deepEqual((await b.listFiles()).map((f) => f.path), ["keep.txt"]);
	} finally {
		await a.close();
		await b.close();
	}
});
