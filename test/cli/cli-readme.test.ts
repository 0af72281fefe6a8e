/**
 * The README's command-line client examples work when pasted: the section's shell block
 * runs under bash (set -e: every command must exit 0) with `a2a` on PATH, against the
 * whole service on loopback, found through A2A_SERVER and A2A_CARD_URL.
 */
import { execFile } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import { cliCommand, ROOT } from "./cli-helpers.js";

let s: A2ATestServer;
let bin: string;
beforeAll(async () => {
  s = await startA2AServer({ env: { A2A_CARD_LISTEN: "127.0.0.1:0" }, advertiseBoundAddress: true });
  bin = mkdtempSync(join(tmpdir(), "a2a-bin-"));
  const quoted = cliCommand([])
    .map((a) => `'${a}'`)
    .join(" ");
  writeFileSync(join(bin, "a2a"), `#!/bin/sh\nexec ${quoted} "$@"\n`);
  chmodSync(join(bin, "a2a"), 0o755);
});
afterAll(async () => {
  rmSync(bin, { recursive: true, force: true });
  await s.close();
});

function readmeBlock(heading: string): string {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf(`## ${heading}\n`));
  const block = /```sh\n([\s\S]*?)```/.exec(section);
  if (!block) throw new Error(`no sh block under ${heading}`);
  return block[1]!;
}

test("the README's Command-line client block runs, every command exiting 0", async () => {
  const script = readmeBlock("Command-line client");
  expect(script).toContain("a2a send story --stream");
  const result = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
    execFile(
      "bash",
      ["-euo", "pipefail", "-c", script],
      {
        cwd: ROOT,
        timeout: 90_000,
        env: { PATH: `${bin}:${process.env.PATH}`, HOME: process.env.HOME, A2A_SERVER: s.target, A2A_CARD_URL: `http://127.0.0.1:${s.app.cardPort}` },
      },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    ),
  );
  if (result.code !== 0) throw new Error(`exit ${result.code}\n${result.stderr}\n${result.stdout.slice(-2000)}`);
  // What the commands printed (JSON: stdout is not a terminal here).
  expect(result.stdout).toContain('"name":"A2A demo agent"');
  expect(result.stdout).toContain("TASK_STATE_CANCELED");
  expect(result.stdout).toContain('"status":"SERVING"');
}, 120_000);
