import * as grpc from "@grpc/grpc-js";
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { HealthCheckRequest, HealthCheckResponse_ServingStatus, HealthClient } from "../../gen/ts-proto/grpc/health/v1/health.js";
import { A2AServiceClient, Role, SendMessageRequest, TaskState, type StreamResponse } from "../../gen/ts-proto/lf/a2a/v1/a2a.js";
import { unary } from "./helpers.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const GRACE_MS = 5000;

interface Child {
  readonly proc: ChildProcess;
  readonly stdout: string[];
  readonly stderr: string[];
  readonly exited: Promise<{ code: number | null; at: number }>;
  /** Resolves with the first stdout/stderr line that matches. */
  line(pattern: RegExp, stream?: "stdout" | "stderr"): Promise<string>;
}

/** The real entry point in a child process, as an operator runs it (sources through tsx). */
function runService(script: string, env: Record<string, string>, args: string[] = []): Child {
  const { NODE_OPTIONS: _dropped, ...parentEnv } = process.env;
  const proc = spawn(process.execPath, ["--import", "tsx", script, ...args], {
    cwd: ROOT,
    env: { ...parentEnv, A2A_LOG_FORMAT: "json", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines = { stdout: [] as string[], stderr: [] as string[] };
  const waiters: Array<{ pattern: RegExp; stream: "stdout" | "stderr"; resolve: (l: string) => void }> = [];
  for (const stream of ["stdout", "stderr"] as const) {
    let rest = "";
    proc[stream]!.on("data", (chunk: Buffer) => {
      const parts = (rest + chunk.toString()).split("\n");
      rest = parts.pop()!;
      for (const l of parts) {
        lines[stream].push(l);
        for (const w of [...waiters])
          if (w.stream === stream && w.pattern.test(l)) {
            waiters.splice(waiters.indexOf(w), 1);
            w.resolve(l);
          }
      }
    });
  }
  const exited = once(proc, "exit").then(([code]) => ({ code: code as number | null, at: Date.now() }));
  return {
    proc,
    ...lines,
    exited,
    line(pattern, stream = "stdout") {
      const seen = lines[stream].find((l) => pattern.test(l));
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        waiters.push({ pattern, stream, resolve });
        void exited.then(() => reject(new Error(`exited before printing ${pattern}; stderr: ${lines.stderr.join("\n")}`)));
      });
    },
  };
}

const serviceEnv = {
  A2A_LISTEN: "127.0.0.1:0",
  A2A_STORE: "memory",
  A2A_CARD_LISTEN: "off",
  A2A_SHUTDOWN_GRACE_MS: String(GRACE_MS),
  A2A_AGENT_MODULE: "test/foundation/fixtures/slow-agent.ts",
};

async function startService(): Promise<{ child: Child; target: string }> {
  const child = runService("src/main.ts", serviceEnv);
  const listening = JSON.parse(await child.line(/"msg":"listening on /)) as { address: string };
  return { child, target: listening.address };
}

const a2aMetadata = () => {
  const md = new grpc.Metadata();
  md.set("a2a-version", "1.0");
  return md;
};
const message = (text: string) =>
  SendMessageRequest.fromPartial({
    message: { messageId: `m-${text}`, role: Role.ROLE_USER, parts: [{ content: { $case: "text", value: text } }] },
  });

describe("the service process", () => {
  let children: Child[] = [];
  afterEach(() => {
    for (const c of children) if (c.proc.exitCode === null) c.proc.kill("SIGKILL");
    children = [];
  });

  test("FND-SIGTERM: a blocking SendMessage in flight finishes OK, then the process exits 0 within the grace period", async () => {
    const { child, target } = await startService();
    children.push(child);
    const client = new A2AServiceClient(target, grpc.credentials.createInsecure());
    const reply = unary(client, client.sendMessage, message("slow"), a2aMetadata());
    await child.line(/agent: slow started/, "stderr");
    const signalled = Date.now();
    child.proc.kill("SIGTERM");
    const { response, error } = await reply;
    client.close();
    expect(error).toBeUndefined();
    expect(response?.payload?.$case === "task" && response.payload.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const { code, at } = await child.exited;
    expect(code).toBe(0);
    expect(at - signalled).toBeLessThan(GRACE_MS);
  });

  test("FND-SIGTERM / ISSUE33-15: the stream of a task still running after the grace gets FAILED 'the server shut down' and ends OK; the process exits 0", async () => {
    const { child, target } = await startService();
    children.push(child);
    const client = new A2AServiceClient(target, grpc.credentials.createInsecure());
    const stream = client.sendStreamingMessage(message("hang"), a2aMetadata());
    const events: StreamResponse[] = [];
    stream.on("data", (event: StreamResponse) => events.push(event));
    const ended = new Promise<grpc.ServiceError | undefined>((resolve) => (stream.on("error", resolve), stream.on("end", () => resolve(undefined))));
    await child.line(/agent: hang started/, "stderr");
    const signalled = Date.now();
    child.proc.kill("SIGTERM");
    expect(await ended).toBeUndefined();
    client.close();
    const last = events.at(-1)?.payload;
    const status = last?.$case === "statusUpdate" ? last.value.status : undefined;
    expect(status?.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(status?.message?.parts[0]?.content).toEqual({ $case: "text", value: expect.stringMatching(/the server shut down/) });
    const { code, at } = await child.exited;
    expect(code).toBe(0);
    expect(at - signalled).toBeGreaterThanOrEqual(GRACE_MS - 100); // the agent had its grace
    expect(at - signalled).toBeLessThan(GRACE_MS + 2000);
  });

  test("FND-HEALTHCHECK: the container probe exits 0 while the server is SERVING", async () => {
    const { child, target } = await startService();
    children.push(child);
    const health = new HealthClient(target, grpc.credentials.createInsecure());
    const { response } = await unary(health, health.check, HealthCheckRequest.fromPartial({}));
    health.close();
    expect(response?.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    const probe = runService("src/healthcheck.ts", { ...serviceEnv, A2A_LISTEN: target.replace("127.0.0.1", "0.0.0.0") });
    expect((await probe.exited).code).toBe(0);
    expect(probe.stdout).toEqual(["SERVING"]);
    child.proc.kill("SIGINT");
    expect((await child.exited).code).toBe(0);
    const down = runService("src/healthcheck.ts", { ...serviceEnv, A2A_LISTEN: target });
    expect((await down.exited).code).toBe(1);
  });

  test("ISSUE33-10: a malformed A2A_PUSH_SIGNING_SECRET stops start-up (exit 2) naming the setting, without printing the secret", async () => {
    const secret = "whsec_c2hvcnQtYnV0LXNlY3JldA=="; // base64 of 18 bytes: too short, and secret all the same
    const child = runService("src/main.ts", { ...serviceEnv, A2A_PUSH_SIGNING_SECRET: secret });
    children.push(child);
    expect((await child.exited).code).toBe(2);
    const printed = [...child.stdout, ...child.stderr].join("\n");
    expect(printed).toContain("A2A_PUSH_SIGNING_SECRET (--push-signing-secret)");
    expect(printed).not.toContain(secret.slice("whsec_".length, "whsec_".length + 8));
  });

  test.each([
    [{ A2A_LISTEN: "not-an-address" }, [], "A2A_LISTEN (--listen)"],
    [{ A2A_TLS_KEY: "/tmp/key.pem" }, [], "A2A_TLS_CERT (--tls-cert)"],
    [{}, ["--max-message-bytes=huge"], "A2A_MAX_MESSAGE_BYTES (--max-message-bytes)"],
    [{}, ["--no-such-flag"], "unknown flag --no-such-flag"],
  ])("FND-CONFIG-EXIT: invalid configuration %j %j exits 2 with one line naming the setting", async (env, args, named) => {
    const child = runService("src/main.ts", { ...serviceEnv, ...env }, args);
    children.push(child);
    const { code } = await child.exited;
    expect(code).toBe(2);
    const stderr = child.stderr.filter((l) => l.trim() !== "");
    expect(stderr).toHaveLength(1);
    expect(stderr[0]).toContain(named);
    expect(child.stdout.filter((l) => l.trim() !== "")).toEqual([]);
  });
});
