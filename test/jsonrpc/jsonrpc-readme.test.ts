/**
 * The JSON-RPC examples in docs/bindings.md work when pasted: the block runs under bash (set -e:
 * every curl must exit 0) against the whole service on loopback, found through A2A_HTTP.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import { ROOT } from "../cli/cli-helpers.js";

let s: A2ATestServer;
beforeAll(async () => {
  s = await startA2AServer({ env: { A2A_HTTP_LISTEN: "127.0.0.1:0" }, advertiseBoundAddress: true });
});
afterAll(() => s.close());

/** Runs the first sh block under `heading` of docs/bindings.md against the server. */
async function runDocBlock(heading: string): Promise<string> {
  const doc = readFileSync(join(ROOT, "docs/bindings.md"), "utf8");
  const script = /```sh\n([\s\S]*?)```/.exec(doc.slice(doc.indexOf(`${heading}\n`)))?.[1];
  if (script === undefined) throw new Error(`no sh block under ${heading}`);
  expect(script).toContain("curl -sN");
  const result = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
    execFile(
      "bash",
      ["-euo", "pipefail", "-c", script],
      { cwd: ROOT, timeout: 60_000, env: { PATH: process.env.PATH, A2A_HTTP: `http://127.0.0.1:${s.app.cardPort}` } },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    ),
  );
  if (result.code !== 0) throw new Error(`exit ${result.code}\n${result.stderr}\n${result.stdout.slice(-2000)}`);
  expect(result.stdout).not.toContain('"error"');
  return result.stdout;
}

test("R-JRPC-7, R-JRPC-12: the JSON-RPC block of docs/bindings.md runs, blocking, streaming and listing", async () => {
  const stdout = await runDocBlock("## JSON-RPC");
  expect(stdout).toMatch(/^\{"jsonrpc":"2\.0","id":1,"result":\{"task":\{.*"TASK_STATE_COMPLETED"/m);
  expect(stdout).toMatch(/^data: \{"jsonrpc":"2\.0","id":2,"result":\{"task":/m);
  expect(stdout).toMatch(/^\{"jsonrpc":"2\.0","id":3,"result":\{"tasks":\[/m);
}, 90_000);

test("R-HTTP-1, R-HTTP-13: the HTTP+JSON block of docs/bindings.md runs: send, get, stream, subscribe", async () => {
  const stdout = await runDocBlock("## HTTP+JSON");
  expect(stdout).toMatch(/^\{"task":\{"id":"[^"]+".*"TASK_STATE_COMPLETED"/m);
  expect(stdout).toMatch(/^\{"id":"[^"]+","contextId":/m); // GetTask: the task itself
  expect(stdout).toMatch(/^data: \{"task":\{"id":/m);
  expect(stdout).toMatch(/^data: \{"statusUpdate":\{.*"step 1\/2"/m); // the subscription followed the running job
  expect(stdout.trimEnd().split("\n").at(-1)).toMatch(/^data: \{"statusUpdate":\{.*"TASK_STATE_COMPLETED"/);
}, 90_000);

test("R-JRPC-7, R-JRPC-12: the README's Bindings block runs as pasted, blocking then streaming", async () => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("## Bindings and protocol versions\n"));
  const script = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (script === undefined) throw new Error("no sh block under Bindings and protocol versions");
  expect(script).toContain("curl -sN http://127.0.0.1:8080/");
  const result = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
    execFile(
      "bash",
      ["-euo", "pipefail", "-c", script.replaceAll("http://127.0.0.1:8080/", `http://127.0.0.1:${s.app.cardPort}/`)],
      { cwd: ROOT, timeout: 60_000, env: { PATH: process.env.PATH } },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    ),
  );
  if (result.code !== 0) throw new Error(`exit ${result.code}\n${result.stderr}\n${result.stdout.slice(-2000)}`);
  expect(result.stdout).not.toContain('"error"');
  expect(result.stdout).toMatch(/^\{"jsonrpc":"2\.0","id":1,"result":\{"task":\{.*"TASK_STATE_COMPLETED"/m);
  expect(result.stdout).toMatch(/^data: \{"jsonrpc":"2\.0","id":2,"result":.*"TASK_STATE_COMPLETED"/m);
  // HTTP+JSON: the task read back by the id the send returned, then the bare StreamResponse events.
  expect(result.stdout).toMatch(/^\{"id":"[^"]+","contextId":"[^"]+","status":\{"state":"TASK_STATE_COMPLETED"/m);
  expect(result.stdout).toMatch(/^data: \{"task":\{/m);
  expect(result.stdout).toMatch(/^data: \{"statusUpdate":\{.*"TASK_STATE_COMPLETED"/m);
}, 90_000);

test("R-V03-10, R-V03-32: the README's Protocol versions block runs as pasted, v0.3 send then stream", async () => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const script = /```sh\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf("### Protocol versions\n")))?.[1];
  if (script === undefined) throw new Error("no sh block under Protocol versions");
  expect(script).not.toContain("A2A-Version");
  const result = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
    execFile(
      "bash",
      ["-euo", "pipefail", "-c", script.replaceAll("http://127.0.0.1:8080/", `http://127.0.0.1:${s.app.cardPort}/`)],
      { cwd: ROOT, timeout: 60_000, env: { PATH: process.env.PATH } },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    ),
  );
  if (result.code !== 0) throw new Error(`exit ${result.code}\n${result.stderr}\n${result.stdout.slice(-2000)}`);
  expect(result.stdout).not.toContain('"error"');
  expect(result.stdout).toMatch(/^\{"jsonrpc":"2\.0","id":1,"result":\{"kind":"task",.*"state":"completed"/m);
  expect(
    result.stdout
      .split("\n")
      .filter((line) => line.startsWith("data: "))
      .at(-1),
  ).toMatch(/"kind":"status-update".*"final":true/);
}, 90_000);
