/**
 * Operators first: a listen address that cannot be bound ends the real service process with one
 * line on stderr naming the setting and the address, exit 2, no stack trace, no grpc-js line.
 */
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { createServer, type Server } from "node:net";
import { fileURLToPath } from "node:url";
import { SETTINGS } from "../../src/config/settings.js";
import { describeListenFailure } from "../../src/listen-failure.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

interface Outcome {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The real entry point as an operator runs it (sources through tsx), until it exits. */
async function runService(env: Record<string, string>, asUser?: number): Promise<Outcome> {
  const { NODE_OPTIONS: _dropped, ...parentEnv } = process.env;
  const node = [process.execPath, "--import", "tsx", "src/main.ts"];
  const [command, ...args] = asUser === undefined ? node : ["setpriv", `--reuid=${asUser}`, `--regid=${asUser}`, "--clear-groups", ...node];
  const child = spawn(command!, args, {
    cwd: ROOT,
    env: { ...parentEnv, A2A_STORE: "memory", A2A_LOG_FORMAT: "json", A2A_LISTEN: "127.0.0.1:0", A2A_CARD_LISTEN: "off", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const out = { stdout: "", stderr: "" };
  child.stdout.on("data", (chunk: Buffer) => (out.stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (out.stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
  const [code] = (await once(child, "exit")) as [number | null];
  clearTimeout(timer);
  return { code, ...out };
}

/** A port this test holds on 127.0.0.1, so the service finds it in use. */
async function holdPort(): Promise<Server & { port: number }> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return Object.assign(server, { port: (server.address() as { port: number }).port });
}

describe("a listen address that cannot be bound", () => {
  let held: Server & { port: number };
  beforeAll(async () => {
    held = await holdPort();
  });
  afterAll(() => held.close());

  test.each([
    ["gRPC", "A2A_LISTEN", {}],
    ["agent card", "A2A_CARD_LISTEN", {}],
    ["metrics", "A2A_METRICS_LISTEN", { A2A_CARD_LISTEN: "127.0.0.1:0" }],
  ] as const)("the %s listener's port in use: one line naming %s and the address, exit 2", async (_name, setting, extra) => {
    const address = `127.0.0.1:${held.port}`;
    const { code, stdout, stderr } = await runService({ ...extra, [setting]: address });
    expect(stderr).toBe(`${setting} ${address} is in use\n`);
    expect(code).toBe(2);
    expect(stdout).toBe(""); // nothing was logged: no fatal record, no stack
  });

  test("two listeners given one address: one line naming both, exit 2, before anything binds", async () => {
    const address = `127.0.0.1:${held.port}`;
    const { code, stdout, stderr } = await runService({ A2A_CARD_LISTEN: address, A2A_METRICS_LISTEN: address });
    expect(stderr).toBe(`A2A_METRICS_LISTEN ${address} is also A2A_CARD_LISTEN; give each listener its own port\n`);
    expect(code).toBe(2);
    expect(stdout).toBe("");
  });

  const root = process.getuid?.() === 0 && spawnSync("setpriv", ["--version"]).status === 0;
  (root ? test : test.skip)("a port below 1024 for a user without the privilege (EACCES): one line, exit 2", async () => {
    const { code, stdout, stderr } = await runService({ A2A_LISTEN: "127.0.0.1:81" }, 65534);
    expect(stderr).toBe("A2A_LISTEN 127.0.0.1:81 may not be bound by this user (permission denied; ports below 1024 need privileges)\n");
    expect(code).toBe(2);
    expect(stdout).toBe("");
  });

  test("Node's and grpc-js's messages for an address not on this machine name the right listener", () => {
    const listeners = [
      { setting: SETTINGS.cardListen, address: "[::1]:8080" },
      { setting: SETTINGS.metricsListen, address: "[fd00::5]:8080" },
    ];
    const node = Object.assign(new Error("EADDRNOTAVAIL: listen EADDRNOTAVAIL: address not available fd00::5:8080"), { code: "EADDRNOTAVAIL" });
    expect(describeListenFailure(node, listeners)).toBe("A2A_METRICS_LISTEN [fd00::5]:8080 is not an address of this machine");
    const grpcJs = new Error("No address added out of total 1 resolved errors: [listen EADDRNOTAVAIL: address not available 10.9.9.9:50051]");
    expect(describeListenFailure(grpcJs, [{ setting: SETTINGS.listen, address: "10.9.9.9:50051" }])).toBe(
      "A2A_LISTEN 10.9.9.9:50051 is not an address of this machine",
    );
    expect(describeListenFailure(new Error("disk full"), listeners)).toBeUndefined();
  });
});
