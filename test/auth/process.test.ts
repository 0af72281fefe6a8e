/**
 * The entry point as an operator runs it: the secure default and the keygen command.
 * No server binds in these runs (the refusal comes before any listen).
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";
import { hashApiKey, parseApiKeyFile } from "../../src/auth/index.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../..");

function run(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { NODE_OPTIONS: _dropped, ...parentEnv } = process.env;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", "src/main.ts", ...args],
      { cwd: ROOT, env: { ...parentEnv, ...env }, timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stdout, stderr }),
    );
  });
}

describe("secure default and keygen (A-30)", () => {
  test("A-30: without A2A_AUTH, a non-loopback listen address refuses to start: exit 2, one line naming both ways out", async () => {
    const { code, stderr } = await run([], { A2A_LISTEN: "0.0.0.0:0", A2A_STORE: "memory", A2A_CARD_LISTEN: "off", A2A_AUTH: "" });
    expect(code).toBe(2);
    const lines = stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/A2A_AUTH .*jwt, api-key or mtls.*A2A_AUTH=none/);
  });

  test("A-30: keygen prints a new key and its hashed line; the line parses and holds only the key's digest", async () => {
    const { code, stdout } = await run(["keygen", "--principal=carol", "--tenants=acme", "--scopes=tasks.read,tasks.write"], {});
    expect(code).toBe(0);
    const [key, line] = stdout.trim().split("\n");
    expect(key).toMatch(/^a2a_[A-Za-z0-9_-]{43}$/);
    expect(line).not.toContain(key!);
    const entries = parseApiKeyFile(line!);
    expect(entries.get(hashApiKey(key!))).toEqual({ principal: "carol", tenants: ["acme"], scopes: ["tasks.read", "tasks.write"] });
  });

  test("A-30: keygen without --principal is a usage error (exit 2)", async () => {
    const { code, stderr } = await run(["keygen"], {});
    expect(code).toBe(2);
    expect(stderr).toMatch(/--principal/);
  });
});
