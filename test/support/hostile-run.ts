/**
 * One run of the hostile-input suite (test/support/hostile-fuzzer.ts) against a fresh server:
 * `npm test` runs a short seeded run in process (test/hostile/hostile.test.ts); run as a program,
 * `node --import tsx test/support/hostile-run.ts [--cases=N] [--seed=S] [--idle-s=30]
 * [--malloc-arena-max=N]` is the long run (what `npm run bench -- hostile` starts): N seeded cases
 * (default 100,000) over all 11 RPCs against src/main.ts in a process of its own on 127.0.0.1,
 * half with JWT authentication on and half off, each beside as many plain, valid calls. It reports
 * statuses by code, hangs, wedged connections, INTERNAL/UNKNOWN statuses, what the HTTP/2 layer
 * refused, and the server's memory before, right after and after an idle period.
 */
import * as grpc from "@grpc/grpc-js";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fork } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { fileURLToPath, pathToFileURL } from "node:url";
import v8 from "node:v8";
import vm from "node:vm";
import { pino } from "pino";
import { exportSPKI, generateKeyPair, SignJWT, type CryptoKey } from "jose";
import { createApp } from "../../src/app.js";
import { apiKeyLine, newApiKey } from "../../src/auth/index.js";
import { loadConfig } from "../../src/config/index.js";
import type { Agent } from "../../src/lifecycle/ports/agent.js";
import { startServer } from "../../src/protocol/server.js";
import { a2aStatusMapper } from "../../src/protocol/status-mapper.js";
import { GetTaskRequest, ListTasksRequest, SendMessageRequest } from "../../gen/ts-proto/lf/a2a/v1/a2a.js";
import { runHostile, type HostileOptions, type HostileReport } from "./hostile-fuzzer.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const ISSUER = "https://issuer.hostile.test";
const AUDIENCE = "a2a-hostile";
/** The suite's agent: plain JavaScript, which server processes load as A2A_AGENT_MODULE. */
const AGENT_MODULE = "./hostile-agent.mjs";

export interface HostileRunOptions {
  readonly cases: number;
  readonly seed: number;
  readonly auth: boolean;
  /** With auth: API keys instead of JWT, and a valid key on every case (issue 33), so every case's input is read. */
  readonly apiKeyOnEveryCase?: boolean;
  readonly inFlight?: number;
  /** Print figures to stderr every 5,000 cases. */
  readonly progress?: boolean;
  readonly onCase?: HostileOptions["onCase"];
  /** Run the server as src/main.ts in a process of its own, so that its memory is its own. Default: in this process. */
  readonly serverProcess?: boolean;
  /** With serverProcess: how long the server idles after the run before its memory is read once more. */
  readonly idleMs?: number;
  /** The baseline: as many plain, valid calls (GetTask, ListTasks, a SendMessage answered by a message) instead of hostile cases. */
  readonly plain?: boolean;
  /** With serverProcess: more environment for the server (e.g. MALLOC_ARENA_MAX). */
  readonly serverEnv?: Readonly<Record<string, string>>;
}

/** The server's memory, MB: after a forced full GC in process; a server process's heap is not read (NaN). */
export interface MemoryFigures {
  readonly heapMb: number;
  readonly rssMb: number;
}

export interface HostileRunResult extends HostileReport {
  readonly auth: boolean;
  readonly plain: boolean;
  readonly before: MemoryFigures;
  readonly after: MemoryFigures;
  /** After the idle period (serverProcess only). */
  readonly idle: MemoryFigures | undefined;
}

interface Target {
  readonly address: string;
  memory(): Promise<MemoryFigures>;
  stop(): Promise<void>;
}

const mb = (n: number) => Math.round((n / 1024 / 1024) * 10) / 10;

function collectGarbage(): void {
  v8.setFlagsFromString("--expose-gc");
  (vm.runInNewContext("gc") as () => void)();
}

/** Our server in this process (the test's way: no start-up cost); its memory includes the client's. */
async function inProcessTarget(env: Record<string, string>): Promise<Target> {
  const config = loadConfig({ argv: [], env: { ...env, A2A_LISTEN: "127.0.0.1:0" } });
  const logger = pino({ level: "silent" });
  const server = await startServer({ listen: config.listen, logger, maxMessageBytes: config.maxMessageBytes });
  const agent = ((await import(AGENT_MODULE)) as { default: Agent }).default;
  const app = await createApp(config, logger, { agent });
  server.onShutdown(() => app.close(0));
  server.useHandlers(app.handlers, a2aStatusMapper);
  return {
    address: `127.0.0.1:${server.port}`,
    async memory() {
      collectGarbage();
      const m = process.memoryUsage();
      return { heapMb: mb(m.heapUsed), rssMb: mb(m.rss) };
    },
    stop: () => server.shutdown(0),
  };
}

async function freePort(): Promise<number> {
  const server = createServer().listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

/** src/main.ts in a process of its own, loading the suite's agent as any agent module is loaded; its RSS read from /proc. */
async function processTarget(env: Record<string, string>, extra: Readonly<Record<string, string>>): Promise<Target> {
  const port = await freePort();
  const child = fork(join(ROOT, "src/main.ts"), [], {
    cwd: ROOT,
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "ignore", "inherit", "ipc"],
    env: {
      ...process.env,
      ...env,
      A2A_AGENT_MODULE: "test/support/hostile-agent.mjs",
      A2A_LOG_LEVEL: "warn",
      A2A_LOG_FORMAT: "json",
      ...extra,
      A2A_LISTEN: `127.0.0.1:${port}`,
    },
  });
  return {
    address: `127.0.0.1:${port}`,
    async memory() {
      const rssKb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"))?.[1] ?? Number.NaN);
      return { heapMb: Number.NaN, rssMb: Math.round(rssKb / 102.4) / 10 };
    },
    async stop() {
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      await exited;
    },
  };
}

/** One run: a fresh server (auth on or off), some tasks of two principals, then the cases. */
export async function hostileRun(options: HostileRunOptions): Promise<HostileRunResult> {
  const dir = mkdtempSync(join(tmpdir(), "a2a-hostile-"));
  const { publicKey, privateKey } = await generateKeyPair("ES256");
  writeFileSync(join(dir, "issuer.pem"), await exportSPKI(publicKey));
  const other = await generateKeyPair("ES256");
  const sign = (sub: string, opts: { exp?: number; aud?: string; key?: CryptoKey } = {}) =>
    new SignJWT({ sub })
      .setProtectedHeader({ alg: "ES256" })
      .setIssuer(ISSUER)
      .setAudience(opts.aud ?? AUDIENCE)
      .setExpirationTime(opts.exp ?? Math.floor(Date.now() / 1000) + 3600)
      .sign(opts.key ?? privateKey);
  const env: Record<string, string> = { A2A_STORE: "memory", A2A_CARD_LISTEN: "off", A2A_PUBLIC_GRPC_ADDRESS: "127.0.0.1:50051" };
  const apiKeys = options.auth && options.apiKeyOnEveryCase === true ? { alice: newApiKey(), bob: newApiKey() } : undefined;
  if (apiKeys !== undefined) {
    const line = (key: string, principal: string) => apiKeyLine(key, { principal, tenants: undefined, scopes: [] });
    writeFileSync(join(dir, "keys"), `${line(apiKeys.alice, "alice")}\n${line(apiKeys.bob, "bob")}\n`);
    Object.assign(env, { A2A_AUTH: "api-key", A2A_API_KEYS_FILE: join(dir, "keys") });
  } else if (options.auth)
    Object.assign(env, { A2A_AUTH: "jwt", A2A_JWT_PUBLIC_KEY_FILE: join(dir, "issuer.pem"), A2A_JWT_ISSUER: ISSUER, A2A_JWT_AUDIENCE: AUDIENCE });
  // The public per-principal limits and the failed-authentication limit (issue 33) would answer most
  // cases RESOURCE_EXHAUSTED before their input is read: the suite is about input.
  if (options.auth) Object.assign(env, { A2A_LIMIT_RATE: "0", A2A_AUTH_FAILURE_RATE: "0" });
  const target = options.serverProcess ? await processTarget(env, options.serverEnv ?? {}) : await inProcessTarget(env);
  try {
    const credential = async (who: "alice" | "bob"): Promise<Record<string, string>> =>
      apiKeys !== undefined ? { "x-api-key": apiKeys[who] } : options.auth ? { authorization: `Bearer ${await sign(who)}` } : {};
    const valid = await credential("alice");
    const bob = await credential("bob");
    const refused =
      options.auth && apiKeys === undefined
        ? [
            { authorization: `Bearer ${await sign("alice", { exp: Math.floor(Date.now() / 1000) - 3600 })}` },
            { authorization: `Bearer ${await sign("alice", { aud: "someone-else" })}` },
            { authorization: `Bearer ${await sign("mallory", { key: other.privateKey })}` },
          ]
        : [];
    let aliceTasks: string[] = [];
    await waitUntil(async () => {
      aliceTasks = await seedTasks(target.address, valid, 4);
    });
    const taskIds = [...aliceTasks, ...(await seedTasks(target.address, bob, 4))];
    const before = await target.memory();
    const onProgress = options.progress
      ? (done: number, r: HostileReport) => {
          if (done % 5000 === 0)
            process.stderr.write(
              `  ${options.plain ? "plain" : "hostile"} ${options.auth ? "jwt" : "off"} ${done} cases ${(r.ms / 1000).toFixed(0)} s: hangs ${r.hangs}, wedged ${r.wedged}, internal ${r.internal}, header-refused ${r.headerRefused}, resets ${r.transportResets}, deadline ${r.deadlineExceeded} ${JSON.stringify(r.byCode)}\n`,
            );
        }
      : undefined;
    const report = options.plain
      ? await runPlain({ target: target.address, cases: options.cases, credentials: valid, taskIds: aliceTasks, inFlight: options.inFlight ?? 16, onProgress })
      : await runHostile({
          target: target.address,
          seed: options.seed,
          cases: options.cases,
          credentials: { valid, refused, onEveryCase: apiKeys !== undefined },
          taskIds,
          inFlight: options.inFlight,
          onProgress,
          onCase: options.onCase,
        });
    await new Promise((r) => setTimeout(r, 200));
    const after = await target.memory();
    let idle: MemoryFigures | undefined;
    if (options.serverProcess && (options.idleMs ?? 0) > 0) {
      await new Promise((r) => setTimeout(r, options.idleMs));
      idle = await target.memory();
    }
    return { ...report, auth: options.auth, plain: options.plain === true, before, after, idle };
  } finally {
    await target.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Retries `attempt` until it succeeds (a server process still starting refuses connections). */
async function waitUntil(attempt: () => Promise<void>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

interface PlainOptions {
  readonly target: string;
  readonly cases: number;
  readonly credentials: Readonly<Record<string, string>>;
  readonly taskIds: readonly string[];
  readonly inFlight: number;
  readonly onProgress?: (done: number, report: HostileReport) => void;
}

/** The baseline load: plain, valid unary calls in turn (GetTask, ListTasks, SendMessage answered by a message), 4 connections. */
async function runPlain(options: PlainOptions): Promise<HostileReport> {
  const started = performance.now();
  const identity = (b: Buffer) => b;
  const clients = Array.from(
    { length: 4 },
    (_, i) => new grpc.Client(options.target, grpc.credentials.createInsecure(), { "grpc.channel_id": `plain-${i}` } as grpc.ChannelOptions),
  );
  const requests: Array<[string, Buffer]> = [
    ["GetTask", Buffer.from(GetTaskRequest.encode(GetTaskRequest.fromPartial({ id: options.taskIds[0] ?? "" })).finish())],
    ["ListTasks", Buffer.from(ListTasksRequest.encode(ListTasksRequest.fromPartial({ pageSize: 1 })).finish())],
    [
      "SendMessage",
      Buffer.from(
        SendMessageRequest.encode(
          SendMessageRequest.fromPartial({ message: { messageId: "plain", role: 1, parts: [{ content: { $case: "text", value: "echo" } }] } }),
        ).finish(),
      ),
    ],
  ];
  const byCode: Record<string, number> = {};
  let next = 0;
  const worker = async () => {
    while (next < options.cases) {
      const n = next++;
      const [method, body] = requests[n % requests.length]!;
      const md = new grpc.Metadata();
      md.set("a2a-version", "1.0");
      for (const [k, v] of Object.entries(options.credentials)) md.set(k, v);
      const code = await new Promise<number>((resolve) =>
        clients[n % clients.length]!.makeUnaryRequest(`/lf.a2a.v1.A2AService/${method}`, identity, identity, body, md, { deadline: Date.now() + 10_000 }, (e) =>
          resolve(e ? (e as grpc.ServiceError).code : grpc.status.OK),
        ),
      );
      const name = grpc.status[code] ?? String(code);
      byCode[name] = (byCode[name] ?? 0) + 1;
      if ((n + 1) % 1000 === 0) options.onProgress?.(n + 1, report());
    }
  };
  const report = (): HostileReport => ({
    cases: options.cases,
    byCode: { ...byCode },
    hangs: 0,
    wedged: 0,
    internal: (byCode["INTERNAL"] ?? 0) + (byCode["UNKNOWN"] ?? 0),
    headerRefused: 0,
    transportResets: 0,
    deadlineExceeded: byCode["DEADLINE_EXCEEDED"] ?? 0,
    deadlineSamples: [],
    internalSamples: [],
    ms: performance.now() - started,
  });
  try {
    await Promise.all(Array.from({ length: options.inFlight }, worker));
  } finally {
    for (const client of clients) client.close();
  }
  return report();
}

/** Tasks of one caller, left INPUT_REQUIRED (so follow-ups, cancels and subscriptions reach them). */
async function seedTasks(target: string, credentials: Record<string, string>, n: number): Promise<string[]> {
  const { A2AServiceClient } = await import("../../gen/ts-proto/lf/a2a/v1/a2a.js");
  const client = new A2AServiceClient(target, grpc.credentials.createInsecure());
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const md = new grpc.Metadata();
    md.set("a2a-version", "1.0");
    for (const [k, v] of Object.entries(credentials)) md.set(k, v);
    const id = await new Promise<string>((resolve, reject) =>
      client.sendMessage(
        {
          tenant: "",
          message: {
            messageId: `seed-${i}`,
            contextId: "",
            taskId: "",
            role: 1,
            parts: [{ content: { $case: "text", value: "hi" }, filename: "", mediaType: "", metadata: undefined }],
            extensions: [],
            referenceTaskIds: [],
            metadata: undefined,
          },
          configuration: undefined,
          metadata: undefined,
        },
        md,
        (e, r) => (e ? reject(e) : resolve(r.payload?.$case === "task" ? r.payload.value.id : "")),
      ),
    );
    ids.push(id);
  }
  client.close();
  return ids;
}

/** The long run's report (Markdown), as `npm run bench -- hostile` prints it. */
export async function hostileLongRun(args: readonly string[]): Promise<string> {
  const arg = (name: string, fallback: number) => Number(args.find((a) => a.startsWith(`--${name}=`))?.split("=")[1] ?? fallback);
  const cases = arg("cases", 100_000);
  const seed = arg("seed", 18);
  const idleMs = arg("idle-s", 30) * 1000;
  const arenas = args.find((a) => a.startsWith("--malloc-arena-max="))?.split("=")[1];
  const serverEnv: Record<string, string> = arenas === undefined ? {} : { MALLOC_ARENA_MAX: arenas };
  const rows: HostileRunResult[] = [];
  for (const auth of [true, false]) {
    for (const plain of [false, true]) {
      process.stderr.write(`hostile: ${cases / 2} ${plain ? "plain (baseline)" : "hostile"} cases, seed ${seed}, auth ${auth ? "on (jwt)" : "off"}\n`);
      rows.push(
        await hostileRun({ cases: Math.ceil(cases / 2), seed: seed + (auth ? 1 : 0), auth, plain, progress: true, serverProcess: true, idleMs, serverEnv }),
      );
      process.stderr.write(`${JSON.stringify(rows.at(-1))}\n`);
    }
  }
  const codes = [...new Set(rows.flatMap((r) => Object.keys(r.byCode)))].sort();
  const memory = (m: MemoryFigures | undefined) => (m === undefined ? "-" : `${Number.isNaN(m.heapMb) ? "-" : m.heapMb} / ${m.rssMb}`);
  return [
    `### Hostile-input suite: ${cases.toLocaleString("en")} seeded cases (seed ${seed}) over all 11 RPCs, half with JWT auth on, half off; each beside a baseline of as many plain calls`,
    "",
    `Server: src/main.ts in its own process${arenas === undefined ? "" : `, MALLOC_ARENA_MAX=${arenas}`}; memory is its RSS in MB, idle = after ${idleMs / 1000} s more.`,
    "",
    "| load | auth | cases | s | hangs | wedged connections | INTERNAL/UNKNOWN from our code | header refused by the HTTP/2 layer (own connection closed) | other HTTP/2 resets | DEADLINE_EXCEEDED | before | after | idle | " +
      codes.join(" | ") +
      " |",
    "|" + " --- |".repeat(13 + codes.length),
    ...rows.map(
      (r) =>
        `| ${r.plain ? "plain" : "hostile"} | ${r.auth ? "jwt" : "off"} | ${r.cases} | ${(r.ms / 1000).toFixed(1)} | ${r.hangs} | ${r.wedged} | ${r.internal} | ${r.headerRefused} | ${r.transportResets} | ${r.deadlineExceeded} | ${memory(r.before)} | ${memory(r.after)} | ${memory(r.idle)} | ${codes.map((c) => r.byCode[c] ?? 0).join(" | ")} |`,
    ),
    ...rows.flatMap((r) => r.internalSamples.map((s) => `- INTERNAL sample (${r.auth ? "jwt" : "off"}): ${s}`)),
    ...rows.flatMap((r) => r.deadlineSamples.map((s) => `- DEADLINE_EXCEEDED sample (${r.auth ? "jwt" : "off"}): ${s}`)),
  ].join("\n");
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  hostileLongRun(process.argv.slice(2)).then(
    (report) => process.stdout.write(`${report}\n`),
    (error: unknown) => {
      process.stderr.write(`${(error as Error)?.stack ?? error}\n`);
      process.exitCode = 1;
    },
  );
}
