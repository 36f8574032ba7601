// Shared by the Node tests: the package through both entries, kern, and
// checks that a box left nothing behind.
import { createRequire } from "node:module";
import { execFileSync, spawnSync } from "node:child_process";
import { readdirSync, mkdirSync, openSync, ftruncateSync, writeSync, closeSync, readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { fileURLToPath } from "node:url";
import path from "node:path";

export const require = createRequire(import.meta.url);
export const PKG = fileURLToPath(new URL("..", import.meta.url));
export const TOP = path.resolve(PKG, "..", "..");
export const DEPS = path.join(PKG, "test", "deps", "node_modules");
export const kern = require("../index.cjs");
export const KERN = process.env.KERN_BIN || "kern";
export const isRoot = process.getuid() === 0;

/** A package the test setup installs from npm, or null (the test skips, saying why). */
export function dep(name) {
	try {
		return createRequire(path.join(DEPS, "x.js"))(name);
	} catch {
		return null;
	}
}
export const depMissing = (name) => `${name} is not installed in test/deps (npm unreachable? see test/run)`;

/** Names of running boxes. */
export function boxes() {
	return execFileSync(KERN, ["ps", "-q"], { encoding: "utf8" }).split("\n").filter(Boolean);
}

/**
 * Boxes running now that were not in `before` (a list from boxes()). A box
 * of an earlier test may end between the two looks, so a count would see
 * a start where there was an end.
 */
export function boxesStartedSince(before) {
	const seen = new Set(before);
	return boxes().filter((n) => !seen.has(n));
}

/**
 * kern's runtime directory for this user (box-cli.md §7.1): the one a box
 * would use, as `kern box --plan` names it (the candidates and their checks
 * are kern's: /dev/shm/kern-<uid> on a host without a login session).
 */
export function runtimeDir() {
	const plan = execFileSync(KERN, ["box", "nodesbx-probe", "--plan", "--image", "host", "--allow-uncapped", "--", "true"], { encoding: "utf8" });
	const m = / --runtime (\S+) /.exec(plan);
	if (!m) throw new Error(`kern box --plan names no --runtime: ${plan}`);
	return m[1];
}

const listed = (dir) => {
	try {
		return readdirSync(dir);
	} catch {
		return [];
	}
};

/**
 * Everything of the package's boxes (names starting `prefix`) that is
 * still there: listed boxes, registry records, scratch dirs, cgroups.
 */
export function leftovers(prefix = "nodesbx-") {
	const rt = runtimeDir();
	const left = [
		...boxes().filter((n) => n.startsWith(prefix)).map((n) => `box ${n}`),
		...listed(path.join(rt, "instances")).filter((n) => n.startsWith(prefix)).map((n) => `record ${n}`),
		...listed(path.join(rt, "scratch")).filter((n) => n.startsWith(prefix)).map((n) => `scratch ${n}`),
	];
	const cg = spawnSync("find", ["/sys/fs/cgroup", "-maxdepth", "5", "-type", "d", "-name", `kern-box-${prefix}*`], { encoding: "utf8" });
	for (const d of cg.stdout.split("\n").filter(Boolean)) left.push(`cgroup ${d}`);
	return left;
}

/** Poll until fn() is truthy or ms pass; returns its last value. */
export async function until(fn, ms = 10000, step = 50) {
	const end = Date.now() + ms;
	let v = await fn();
	while (!v && Date.now() < end) {
		await new Promise((r) => setTimeout(r, step));
		v = await fn();
	}
	return v;
}

/** Nothing of the package's boxes is left, within 10 s (kern drops a killed box's record by itself). */
export async function assertNothingLeft(assert, prefix = "nodesbx-") {
	await until(() => leftovers(prefix).length === 0, 10000);
	const left = leftovers(prefix);
	assert.deepEqual(left, [], `left behind: ${left.join(", ")}`);
}

/**
 * The loopback registry of the bats tests (tests/helpers/fixtures.bash)
 * with the busybox fixture pushed as `busybox:1`; null with the reason
 * when this host cannot run it.
 * @returns {{port: number, ref: (tag?: string) => string, stop: () => void} | {skip: string}}
 */
export function startRegistry(dir) {
	const script = `
set -e
. "${TOP}/tests/helpers/fixtures.bash"
FIX=$(fixture_busybox) || { echo "skip: cannot build the busybox fixture"; exit 0; }
registry_start "$1" >&2
registry_push "$FIX/busybox" busybox:1 oci
echo "$REG_PORT $REG_PID"
`;
	const r = spawnSync("bash", ["-c", script, "registry", dir], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
	const line = (r.stdout || "").trim().split("\n").pop() || "";
	if (r.status !== 0 || line.startsWith("skip:") || !/^\d+ \d+$/.test(line)) {
		return { skip: line.startsWith("skip:") ? line.slice(6) : `the loopback registry did not start: ${r.stderr.slice(-500)}` };
	}
	const [port, pid] = line.split(" ").map(Number);
	return {
		port,
		ref: (tag = "1") => `127.0.0.1:${port}/busybox:${tag}`,
		stop: () => {
			try {
				process.kill(pid, "SIGTERM");
			} catch {
				// gone
			}
		},
	};
}

/**
 * An archive of `members` [name, tar type char, data?, linkname?, pax records?] written
 * by Debian's Python tarfile (gzip level 1), independently of this
 * package's tar code; `format` names tarfile's USTAR_FORMAT, GNU_FORMAT or
 * PAX_FORMAT. The Python package's shared-case adapter writes the same.
 */
export function pyArchive(file, members, format = "USTAR_FORMAT") {
	const script = `
import io, json, sys, tarfile
with tarfile.open(sys.argv[1], "w:gz", compresslevel=1, format=getattr(tarfile, sys.argv[3])) as t:
    for name, kind, data, link, pax in json.loads(sys.argv[2]):
        i = tarfile.TarInfo(name)
        i.type = kind.encode()
        i.linkname = link or ""
        i.pax_headers = pax or {}
        b = (data or "").encode()
        i.size = len(b) if kind == "0" else 0
        t.addfile(i, io.BytesIO(b) if kind == "0" else None)
`;
	const rows = members.map(([n, k, d, l, p]) => [n, k, d ?? null, l ?? null, p ?? null]);
	execFileSync("/usr/bin/python3", ["-c", script, file, JSON.stringify(rows), format]);
	return file;
}

/**
 * An archive GNU tar wrote with --sparse (format "gnu" or "pax", and a
 * pax sparse_version) of one file with holes: `size` bytes, `text` at each
 * [offset, text] of `writes`; made in the fresh directory `work`. The
 * Python package's shared-case adapter writes the same. Throws when tar
 * made no sparse member (a GNU 'S' header or pax GNU.sparse records).
 * @param {string} file @param {{format: string, sparse_version?: string | null, name: string, size: number, writes: [number, string][]}} spec @param {string} work
 */
export function sparseTar(file, spec, work) {
	mkdirSync(work);
	const fd = openSync(path.join(work, spec.name), "wx", 0o644);
	try {
		ftruncateSync(fd, spec.size);
		for (const [offset, text] of spec.writes) writeSync(fd, Buffer.from(text), 0, Buffer.byteLength(text), offset);
	} finally {
		closeSync(fd);
	}
	const version = spec.sparse_version ? [`--sparse-version=${spec.sparse_version}`] : [];
	execFileSync("tar", ["--sparse", `--format=${spec.format}`, ...version, "-czf", file, "-C", work, spec.name]);
	const raw = gunzipSync(readFileSync(file));
	if (raw[156] !== 0x53 && !raw.includes("GNU.sparse.")) throw new Error("tar wrote no sparse member");
	return file;
}
