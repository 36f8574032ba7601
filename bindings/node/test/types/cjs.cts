// Type-checked (tsc --strict), never run: the `require` entry.
import kern = require("kern-sandbox");

export async function main(): Promise<number> {
	const s = new kern.Sandbox({ image: "host" });
	await s.open();
	const r = await s.runCode("echo hi", { language: "sh" });
	await s.close();
	return r.exitCode + kern.version.length;
}
