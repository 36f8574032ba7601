// Drives kern-mcp with the official MCP TypeScript SDK, the way an MCP
// client application does, and prints what it saw as one JSON object for
// test_mcp_ts_client.py to check.
//
//   node client.mjs '<server argv as JSON>' '<python code of the image cell>'
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [serverArgv, chartCode] = [JSON.parse(process.argv[2]), process.argv[3]];
const transport = new StdioClientTransport({
  command: serverArgv[0],
  args: serverArgv.slice(1),
  env: { ...process.env },
  stderr: "inherit",
});
const client = new Client({ name: "kern-mcp-ts-test", version: "1.0.0" });
const seen = {};

const text = (result) => result.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");

try {
  await client.connect(transport);
  seen.server = client.getServerVersion();
  seen.capabilities = client.getServerCapabilities();

  const listed = await client.listTools();
  seen.tools = listed.tools.map((t) => ({
    name: t.name,
    annotations: t.annotations ?? null,
    hasOutputSchema: Boolean(t.outputSchema),
    languages: t.inputSchema?.properties?.language?.enum ?? null,
  }));

  // callTool validates structuredContent against the tool's outputSchema
  // and throws when a tool with a schema returns none.
  const run = await client.callTool({ name: "run_code", arguments: { code: "print(6 * 7)" } });
  seen.run = { text: text(run), isError: run.isError, structured: run.structuredContent };

  const failing = await client.callTool({
    name: "run_code",
    arguments: { code: "import sys; print('to stderr', file=sys.stderr); sys.exit(3)" },
  });
  seen.failing = { text: text(failing), isError: failing.isError, structured: failing.structuredContent };

  await client.callTool({ name: "write_file", arguments: { path: "notes/a.txt", content: "hello from ts\n" } });
  const read = await client.callTool({ name: "read_file", arguments: { path: "notes/a.txt" } });
  seen.read = { text: text(read), isError: read.isError };

  const chart = await client.callTool({ name: "run_code", arguments: { code: chartCode } });
  seen.chart = {
    isError: chart.isError,
    text: text(chart),
    images: chart.content
      .filter((c) => c.type === "image")
      .map((c) => ({ mimeType: c.mimeType, head: Buffer.from(c.data, "base64").subarray(0, 8).toString("hex"), bytes: Buffer.from(c.data, "base64").length })),
  };

  let progress = 0;
  const slow = await client.callTool(
    { name: "run_code", arguments: { code: "import time; time.sleep(4.5); print('slept')" } },
    undefined,
    { onprogress: () => { progress += 1; }, resetTimeoutOnProgress: true },
  );
  seen.slow = { text: text(slow), progress };

  let invalid;
  try {
    invalid = await client.callTool({ name: "run_code", arguments: { code: 5 } });
    seen.invalid = { isError: invalid.isError, text: text(invalid) };
  } catch (e) {
    seen.invalid = { thrown: String(e) };
  }
  seen.pingOk = (await client.ping()) !== undefined;
} catch (e) {
  seen.error = String(e && e.stack ? e.stack : e);
} finally {
  await client.close();
}
process.stdout.write(JSON.stringify(seen) + "\n");
