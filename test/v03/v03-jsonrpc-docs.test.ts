/**
 * The v0.3 JSON-RPC example in docs/protocol-versions.md works when pasted: the block runs under
 * bash (set -e: every curl must exit 0) against the whole service on loopback, found through
 * A2A_HTTP, as the 1.0 example of docs/bindings.md is run by test/jsonrpc/jsonrpc-readme.test.ts.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../../src/config/load-config.js";
import { startBindingsListener } from "../../src/http-bindings.js";
import { ROOT } from "../cli/cli-helpers.js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";

let s: A2ATestServer;
beforeAll(async () => {
  s = await startA2AServer({ env: { A2A_HTTP_LISTEN: "127.0.0.1:0" }, advertiseBoundAddress: true });
});
afterAll(() => s.close());

test("R-V03-10, R-V03-21, R-V03-32: the v0.3 curl block of docs/protocol-versions.md runs, blocking and streaming", async () => {
  const doc = readFileSync(join(ROOT, "docs/protocol-versions.md"), "utf8");
  const script = /```sh\n([\s\S]*?)```/.exec(doc.slice(doc.indexOf("## Try it\n")))?.[1];
  if (script === undefined) throw new Error("no sh block under Try it");
  expect(script).not.toContain("-H 'A2A-Version");
  const result = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
    execFile(
      "bash",
      ["-euo", "pipefail", "-c", script],
      { cwd: ROOT, timeout: 30_000, env: { PATH: process.env.PATH, A2A_HTTP: `http://127.0.0.1:${s.app.cardPort}` } },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    ),
  );
  if (result.code !== 0) throw new Error(`exit ${result.code}\n${result.stderr}\n${result.stdout.slice(-2000)}`);
  expect(result.stdout).not.toContain('"error"');
  expect(result.stdout).toMatch(/^\{"jsonrpc":"2\.0","id":1,"result":\{"kind":"task",.*"state":"completed"/m);
  expect(result.stdout).toMatch(/^data: \{"jsonrpc":"2\.0","id":2,"result":\{"kind":"task"/m);
  const events = result.stdout.split("\n").filter((line) => line.startsWith("data: "));
  expect(events.at(-1)).toMatch(/"kind":"status-update".*"final":true/);
}, 60_000);

test("A-36: A2A_V03=off, or its JSON-RPC path off, serves no v0.3 JSON-RPC endpoint (the 1.0 one stays)", async () => {
  for (const env of [{ A2A_V03: "off" }, { A2A_V03_JSONRPC_PATH: "off" }]) {
    const config = loadConfig({ env: { A2A_HTTP_LISTEN: "127.0.0.1:0", ...env } });
    const listener = await startBindingsListener(config, undefined, () => undefined);
    try {
      const post = (path: string) =>
        fetch(`http://127.0.0.1:${listener!.port}${path}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
      // No binding at the 0.3 path: the listener's own answer, not a JSON-RPC response.
      expect(await (await post("/a2a/v0.3/jsonrpc")).text()).not.toContain('"jsonrpc"');
      expect(await (await post("/a2a/jsonrpc")).text()).toContain('"jsonrpc"');
    } finally {
      await listener?.close();
    }
  }
});
