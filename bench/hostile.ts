/**
 * `npm run bench -- hostile [--cases=N] [--seed=S]`: the hostile-input suite's long run (issue
 * #18): N seeded cases (default 100,000) over all 11 RPCs against our server on 127.0.0.1,
 * half with JWT authentication on and half with it off. Reports statuses by code, hangs, wedged
 * connections, INTERNAL/UNKNOWN statuses, and the server's memory before and after (after a GC).
 * `npm test` runs a short seeded run of the same suite (test/hostile/hostile.test.ts).
 */
import * as grpc from "@grpc/grpc-js";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import v8 from "node:v8";
import vm from "node:vm";
import { pino } from "pino";
import { exportSPKI, generateKeyPair, SignJWT, type CryptoKey } from "jose";
import { createApp } from "../src/app.js";
import { loadConfig } from "../src/config/index.js";
import type { Agent } from "../src/lifecycle/agent.js";
import { startServer } from "../src/protocol/server.js";
import { a2aStatusMapper } from "../src/protocol/status-mapper.js";
import { runHostile, type HostileOptions, type HostileReport } from "./lib/hostile.js";

const ISSUER = "https://issuer.hostile.test";
const AUDIENCE = "a2a-hostile";

/** Bounded agent: replies, or works and completes with a small artifact, or asks for input. */
const agent: Agent = {
  card: { skills: [{ id: "h", name: "hostile", description: "target of the hostile suite", tags: ["test"] }] } as Agent["card"],
  async execute(ctx) {
    const first = ctx.message.parts[0]?.content;
    const text = first?.case === "text" ? first.value.slice(0, 100) : "";
    if (text === "echo") return ctx.reply("echo");
    await ctx.working();
    if (text === "hi") return ctx.requireInput("more?");
    await ctx.artifact({ parts: [text || "empty"] });
    await ctx.complete("done");
  },
};

export interface HostileRunOptions {
  readonly cases: number;
  readonly seed: number;
  readonly auth: boolean;
  readonly inFlight?: number;
  /** Print figures to stderr every 5,000 cases. */
  readonly progress?: boolean;
  readonly onCase?: HostileOptions["onCase"];
}

export interface HostileRunResult extends HostileReport {
  readonly auth: boolean;
  readonly heapBeforeMb: number;
  readonly heapAfterMb: number;
  readonly rssBeforeMb: number;
  readonly rssAfterMb: number;
}

function collectGarbage(): void {
  v8.setFlagsFromString("--expose-gc");
  (vm.runInNewContext("gc") as () => void)();
}

/** One run: a fresh server on 127.0.0.1:0 (auth on or off), some tasks of two principals, then the cases. */
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
  const env: Record<string, string> = { A2A_LISTEN: "127.0.0.1:0", A2A_STORE: "memory", A2A_CARD_LISTEN: "off", A2A_PUBLIC_GRPC_ADDRESS: "127.0.0.1:50051" };
  if (options.auth)
    Object.assign(env, { A2A_AUTH: "jwt", A2A_JWT_PUBLIC_KEY_FILE: join(dir, "issuer.pem"), A2A_JWT_ISSUER: ISSUER, A2A_JWT_AUDIENCE: AUDIENCE });
  const config = loadConfig({ argv: [], env });
  const logger = pino({ level: "silent" });
  const server = await startServer({ listen: config.listen, logger, maxMessageBytes: config.maxMessageBytes });
  const app = await createApp(config, logger, { agent });
  server.onShutdown(() => app.close(0));
  server.useHandlers(app.handlers, a2aStatusMapper);
  const target = `127.0.0.1:${server.port}`;
  try {
    const valid: Record<string, string> = options.auth ? { authorization: `Bearer ${await sign("alice")}` } : {};
    const bob: Record<string, string> = options.auth ? { authorization: `Bearer ${await sign("bob")}` } : {};
    const refused = options.auth
      ? [
          { authorization: `Bearer ${await sign("alice", { exp: Math.floor(Date.now() / 1000) - 3600 })}` },
          { authorization: `Bearer ${await sign("alice", { aud: "someone-else" })}` },
          { authorization: `Bearer ${await sign("mallory", { key: other.privateKey })}` },
        ]
      : [];
    const taskIds = [...(await seedTasks(target, valid, 4)), ...(await seedTasks(target, bob, 4))];
    collectGarbage();
    const before = process.memoryUsage();
    const onProgress = options.progress
      ? (done: number, r: HostileReport) => {
          if (done % 5000 === 0)
            process.stderr.write(
              `  ${options.auth ? "jwt" : "off"} ${done} cases ${(r.ms / 1000).toFixed(0)} s: hangs ${r.hangs}, wedged ${r.wedged}, internal ${r.internal}, resets ${r.transportResets}, rss ${Math.round(process.memoryUsage().rss / 1048576)} MB ${JSON.stringify(r.byCode)}\n`,
            );
        }
      : undefined;
    const report = await runHostile({
      target,
      seed: options.seed,
      cases: options.cases,
      credentials: { valid, refused },
      taskIds,
      inFlight: options.inFlight,
      onProgress,
      onCase: options.onCase,
    });
    await new Promise((r) => setTimeout(r, 200));
    collectGarbage();
    const after = process.memoryUsage();
    const mb = (n: number) => Math.round((n / 1024 / 1024) * 10) / 10;
    return {
      ...report,
      auth: options.auth,
      heapBeforeMb: mb(before.heapUsed),
      heapAfterMb: mb(after.heapUsed),
      rssBeforeMb: mb(before.rss),
      rssAfterMb: mb(after.rss),
    };
  } finally {
    await server.shutdown(0);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Tasks of one caller, left INPUT_REQUIRED (so follow-ups, cancels and subscriptions reach them). */
async function seedTasks(target: string, credentials: Record<string, string>, n: number): Promise<string[]> {
  const { A2AServiceClient } = await import("../gen/ts-proto/lf/a2a/v1/a2a.js");
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

export async function runHostileBench(args: readonly string[]): Promise<string> {
  const arg = (name: string, fallback: number) => Number(args.find((a) => a.startsWith(`--${name}=`))?.split("=")[1] ?? fallback);
  const cases = arg("cases", 100_000);
  const seed = arg("seed", 18);
  const rows: HostileRunResult[] = [];
  for (const auth of [true, false]) {
    process.stderr.write(`hostile: ${cases / 2} cases, seed ${seed}, auth ${auth ? "on (jwt)" : "off"}\n`);
    rows.push(await hostileRun({ cases: Math.ceil(cases / 2), seed: seed + (auth ? 1 : 0), auth, progress: true }));
    process.stderr.write(`${JSON.stringify(rows.at(-1))}\n`);
  }
  const codes = [...new Set(rows.flatMap((r) => Object.keys(r.byCode)))].sort();
  return [
    `### Hostile-input suite: ${cases.toLocaleString("en")} seeded cases (seed ${seed}) over all 11 RPCs, half with JWT auth off, half on`,
    "",
    "| auth | cases | s | hangs | wedged connections | INTERNAL/UNKNOWN from our code | HTTP/2 resets (oversized headers, counted as INTERNAL by the client) | heap MB before → after GC | RSS MB before → after | " +
      codes.join(" | ") +
      " |",
    "|" + " --- |".repeat(9 + codes.length),
    ...rows.map(
      (r) =>
        `| ${r.auth ? "jwt" : "off"} | ${r.cases} | ${(r.ms / 1000).toFixed(1)} | ${r.hangs} | ${r.wedged} | ${r.internal} | ${r.transportResets} | ${r.heapBeforeMb} → ${r.heapAfterMb} | ${r.rssBeforeMb} → ${r.rssAfterMb} | ${codes.map((c) => r.byCode[c] ?? 0).join(" | ")} |`,
    ),
    ...rows.flatMap((r) => r.internalSamples.map((s) => `- INTERNAL sample (${r.auth ? "jwt" : "off"}): ${s}`)),
  ].join("\n");
}
