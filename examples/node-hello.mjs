// The README's first Node example: Python in kern's built-in host image,
// offline, right after ./install.sh and
//   npm install /path/to/kern/bindings/node
import { runCode } from "kern-sandbox";

const r = await runCode("print(6 * 7)", { image: "host" });
process.stdout.write(r.stdout);
