// Type-checked (tsc --strict), never run: the `import` entry as a
// TypeScript user writes against it.
import { Sandbox, runCode, withSandbox, SandboxError, MountRefused, ExecutionResult, Kernel, version } from "kern-sandbox";
import type { SandboxOptions, FaultType, ResultFormat } from "kern-sandbox";

const opts: SandboxOptions = { image: "host", memoryMb: 256, timeoutS: 5, mounts: { "/srv/data": ["/data", "ro"] }, egressAllow: ["pypi.org"] };

export async function main(): Promise<string> {
	const r: ExecutionResult = await runCode("print(1)", { image: "host", language: "python", timeoutS: 2 });
	const ok: boolean = r.success;
	const code: number = r.exitCode;
	const fault: FaultType | string | undefined = r.fault?.type;
	await using sbx = await Sandbox.create(opts);
	const ctl = new AbortController();
	const r2 = await sbx.run(["ls", "-l"], { signal: ctl.signal, onStdout: (c: Buffer) => void c.length });
	const formats: ResultFormat[] = r2.results.flatMap((x) => x.formats());
	const png: string | null = r2.results[0]?.png ?? null;
	await sbx.writeFile("a.txt", "x");
	await sbx.writeFile("b.bin", new Uint8Array([1, 2]));
	const data: Buffer = await sbx.readFile("a.txt", { maxBytes: 10 });
	const files = await sbx.listFiles();
	const first: string | undefined = files[0]?.path;
	await sbx.snapshot("/tmp/s.tgz");
	await sbx.restore("/tmp/s.tgz");
	const k: Kernel = await sbx.kernel({ timeoutS: 3 });
	const cell = await k.runCode("a = 1", { timeoutS: 1 });
	await k.close();
	const ready: number = sbx.prewarmed;
	await sbx.destroy();
	const n = await withSandbox({ image: "host" }, async (s) => (await s.runCode("echo", { language: "bash" })).stdout.length);
	const m = await withSandbox(async (s) => s.workspace);
	try {
		new Sandbox({ mounts: { "/etc": "/etc" } });
	} catch (e) {
		if (e instanceof MountRefused || e instanceof SandboxError) return e.message;
	}
	return [ok, code, fault, formats, png, data.length, first, cell.codeStderr, cell.runtimeNotes, n, m, ready, version].join();
}
