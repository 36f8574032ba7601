// A session: files persist between calls, each call is a fresh box, a
// fault is a field of the result, a kernel keeps Python state.
import { Sandbox } from "kern-sandbox";

const sbx = await Sandbox.create({ image: "host", memoryMb: 256, timeoutS: 10 });
try {
	await sbx.writeFile("data.csv", "a,b\n1,2\n3,4\n");
	const count = await sbx.runCode("rows = open('data.csv').read().splitlines()[1:]\nlen(rows)");
	console.log(`rows: ${count.results[0].text}`);

	const made = await sbx.runCode("echo 'sum,10' > out.csv", { language: "sh" });
	console.log(`created: ${made.files.map((f) => f.path).join(", ")}`);
	console.log(`read back: ${(await sbx.readFile("out.csv")).toString().trim()}`);

	const slow = await sbx.runCode("while True: pass", { timeoutS: 1 });
	console.log(`fault: ${slow.fault.type}`);

	const k = await sbx.kernel();
	await k.runCode("total = 0");
	for (const n of [1, 2, 3]) await k.runCode(`total += ${n}`);
	console.log(`kernel total: ${(await k.runCode("total")).results[0].text}`);
	await k.close();
} finally {
	await sbx.close();
}
