/**
 * Key file reloads are loud (issue 33 finding 11): a reload (SIGHUP) of a key file that does not
 * parse logs an error naming FILE:LINE and counts in a2a_auth_key_reload_failures_total (read from
 * the real /metrics listener); `a2a-grpc-server keys check FILE` validates a file before a reload:
 * exit 0 with a summary, 1 with `FILE:LINE: reason`, 2 for bad arguments.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { apiKeyLine, newApiKey } from "../../src/auth/index.js";
import { rpc, sendRequest, userMessage } from "../e2e/e2e-helpers.js";
import { startA2AServer } from "../support/a2a-server.js";
import { withAuth } from "./auth-support.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../..");
const alice = newApiKey();
const goodLines = `# keys\n${apiKeyLine(alice, { principal: "alice", tenants: ["acme"], scopes: [] })}\n${apiKeyLine(newApiKey(), { principal: "bob", tenants: undefined, scopes: [] })}\n`;
let dir: string;
beforeAll(() => (dir = mkdtempSync(join(tmpdir(), "a2a-key-reload-"))));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function keysCommand(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { NODE_OPTIONS: _dropped, ...env } = process.env;
  return new Promise((resolve) => {
    execFile(process.execPath, ["--import", "tsx", "src/main.ts", "keys", ...args], { cwd: ROOT, env, timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stdout, stderr }),
    );
  });
}

async function reloadFailures(port: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith("a2a_auth_key_reload_failures_total "));
  return Number(line?.split(" ")[1]);
}

describe("issue 33 #11: key file reloads", () => {
  test("A-30: a reload of a file that does not parse logs an error with FILE:LINE and counts in a2a_auth_key_reload_failures_total", async () => {
    const file = join(dir, "keys-reload");
    writeFileSync(file, goodLines);
    const s = await startA2AServer({ env: { A2A_AUTH: "api-key", A2A_API_KEYS_FILE: file, A2A_METRICS_LISTEN: "127.0.0.1:0" } });
    try {
      const port = s.app.metricsPort!;
      expect(await reloadFailures(port)).toBe(0);
      writeFileSync(file, `${goodLines}sha256:abc principal=typo\n`); // line 4
      process.emit("SIGHUP", "SIGHUP");
      const failed = s.lines.filter((l) => String(l["msg"]).startsWith("could not reload the API key file"));
      expect(failed).toHaveLength(1);
      expect(failed[0]!["level"]).toBe(50); // error
      expect(failed[0]!["line"]).toBe(4);
      expect(String(failed[0]!["msg"])).toContain(`${file}:4: the first field must be sha256:`);
      expect(await reloadFailures(port)).toBe(1);
      // The keys it still lists stay in force.
      expect((await rpc(s).send(sendRequest(userMessage("hi"), undefined, "acme"), withAuth({ "x-api-key": alice }))).error).toBeUndefined();
    } finally {
      await s.close();
    }
  });

  test("A-30: keys check FILE: exit 0 with a summary of a good file", async () => {
    const file = join(dir, "keys-good");
    writeFileSync(file, goodLines);
    const { code, stdout } = await keysCommand(["check", file]);
    expect(code).toBe(0);
    expect(stdout).toBe(`${file}: ok: 2 key(s) for 2 principal(s), 1 limited to named tenants\n`);
  }, 60_000);

  test("A-30: keys check FILE: exit 1 with FILE:LINE: reason for a bad line, FILE: reason for a missing file; 2 for bad arguments", async () => {
    const file = join(dir, "keys-bad");
    writeFileSync(file, `${goodLines}\n${apiKeyLine(newApiKey(), { principal: "carol", tenants: undefined, scopes: [] })} colour=blue\n`);
    // Four processes at once: each spends seconds starting tsx on a loaded machine.
    const [bad, missing, noFile, unknown] = await Promise.all([
      keysCommand(["check", file]),
      keysCommand(["check", join(dir, "nope")]),
      keysCommand(["check"]),
      keysCommand(["verify", file]),
    ]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}:5: unknown field "colour=blue"`));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/nope: cannot read the file \(ENOENT\)/);
    expect(noFile.code).toBe(2);
    expect(unknown.stderr).toMatch(/Usage: a2a-grpc-server keys check FILE/);
  }, 120_000);
});
