/**
 * `npm run bench -- auth [--quick]`: blocking SendMessage against two servers of ours
 * in the same run, JWT authentication off and on (one ES256 token reused, as a client does),
 * interleaved rounds; server CPU per call, on ÷ off (target ≤ 1.15×: verified tokens are cached
 * until they expire). Then the limits' memory: the rate and concurrency tables after 1,000 and
 * 100,000 distinct principals (the rate table is capped; the concurrency tables hold only what runs).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import v8 from "node:v8";
import vm from "node:vm";
import { exportSPKI, generateKeyPair, SignJWT } from "jose";
import { SendMessageRequest } from "../gen/ts-proto/lf/a2a/v1/a2a.js";
import { ConcurrencyLimiter, RateLimiter } from "../src/limits/index.js";
import { loadClient } from "./lib/load.js";
import { drive, measurePhase, waitUntilServing, type PhaseResult } from "./lib/measure.js";
import { startServerProcess } from "./lib/server-process.js";
import { median } from "./lib/stats.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SEND = "/lf.a2a.v1.A2AService/SendMessage";

export async function runAuthBench(options: { quick: boolean }): Promise<string> {
  const rounds = options.quick ? 3 : 6;
  const calls = options.quick ? 1500 : 4000;
  const inFlight = 32;
  const dir = mkdtempSync(join(tmpdir(), "a2a-auth-bench-"));
  const { publicKey, privateKey } = await generateKeyPair("ES256");
  writeFileSync(join(dir, "issuer.pem"), await exportSPKI(publicKey));
  const token = await new SignJWT({ sub: "bench", scope: "a2a" })
    .setProtectedHeader({ alg: "ES256" })
    .setIssuer("https://issuer.bench")
    .setAudience("a2a-bench")
    .setExpirationTime("2h")
    .sign(privateKey);
  const base = {
    A2A_STORE: "memory",
    A2A_CARD_LISTEN: "off",
    A2A_AGENT_MODULE: "bench/agents/trivial-agent.mjs",
    A2A_LOG_LEVEL: "warn",
    A2A_LOG_FORMAT: "json",
  };
  const start = (name: string, extra: Record<string, string>) =>
    startServerProcess({
      name,
      script: join(ROOT, "src/main.ts"),
      tsx: true,
      cwd: ROOT,
      env: (port) => ({ ...base, ...extra, A2A_LISTEN: `127.0.0.1:${port}` }),
    });
  const off = await start("auth off", {});
  const on = await start("auth jwt", {
    A2A_AUTH: "jwt",
    A2A_JWT_PUBLIC_KEY_FILE: join(dir, "issuer.pem"),
    A2A_JWT_ISSUER: "https://issuer.bench",
    A2A_JWT_AUDIENCE: "a2a-bench",
    // What authentication costs, not the public per-principal limits it brings (issue 33): as with auth off.
    A2A_LIMIT_RATE: "50000",
    A2A_LIMIT_RUNS_PER_PRINCIPAL: "10000",
    A2A_LIMIT_STREAMS_PER_PRINCIPAL: "10000",
  });
  const request = Buffer.from(
    SendMessageRequest.encode(
      SendMessageRequest.fromPartial({
        message: { messageId: "bench", role: 1, parts: [{ content: { $case: "text", value: "hello" } }] },
      }),
    ).finish(),
  );
  const clients = {
    off: loadClient(off.address, { "a2a-version": "1.0" }),
    on: loadClient(on.address, { "a2a-version": "1.0", authorization: `Bearer ${token}` }),
  };
  const results: { off: PhaseResult[]; on: PhaseResult[] } = { off: [], on: [] };
  try {
    await waitUntilServing(off, () => clients.off.call(SEND, request));
    await waitUntilServing(on, () => clients.on.call(SEND, request));
    await drive(off, clients.off, { path: SEND, request, inFlight }, calls);
    await drive(on, clients.on, { path: SEND, request, inFlight }, calls);
    for (let round = 0; round < rounds; round++) {
      // Interleaved, alternating which goes first: a busy moment of the shared machine hits both.
      const order = round % 2 === 0 ? (["off", "on"] as const) : (["on", "off"] as const);
      for (const which of order) results[which].push(await measurePhase(which === "off" ? off : on, clients[which], { path: SEND, request, inFlight, calls }));
    }
  } finally {
    clients.off.close();
    clients.on.close();
    await off.stop?.();
    await on.stop?.();
    rmSync(dir, { recursive: true, force: true });
  }
  const cpu = (r: PhaseResult[]) => median(r.map((p) => p.serverCpuPerCall));
  const rate = (r: PhaseResult[]) => median(r.map((p) => p.callsPerSec));
  const ratios = results.on.map((p, i) => p.serverCpuPerCall / results.off[i]!.serverCpuPerCall);
  const memory = limitsMemory();
  return [
    `### Blocking SendMessage, JWT auth on vs off: ${rounds} interleaved rounds × ${calls} calls, ${inFlight} in flight (machine shared)`,
    "",
    "| | server CPU µs/call (median) | calls/s (median) |",
    "| --- | --- | --- |",
    `| auth off | ${cpu(results.off).toFixed(1)} | ${rate(results.off).toFixed(0)} |`,
    `| auth jwt (ES256, token reused) | ${cpu(results.on).toFixed(1)} | ${rate(results.on).toFixed(0)} |`,
    `| **on ÷ off** | **${(cpu(results.on) / cpu(results.off)).toFixed(2)}×** (per-round ratios ${ratios.map((r) => r.toFixed(2)).join(", ")}; target ≤ 1.15×) | ${(rate(results.on) / rate(results.off)).toFixed(2)}× |`,
    "",
    "### Limits' memory (heap after a full GC, in process)",
    "",
    "| principals | rate table entries | rate table KiB | concurrency table entries while all run | after all released |",
    "| --- | --- | --- | --- | --- |",
    ...memory.map(
      (m) =>
        `| ${m.principals.toLocaleString("en")} | ${m.rateEntries.toLocaleString("en")} | ${m.rateKiB.toFixed(0)} | ${m.concurrent.toLocaleString("en")} | ${m.afterRelease} |`,
    ),
  ].join("\n");
}

function gc(): void {
  v8.setFlagsFromString("--expose-gc");
  (vm.runInNewContext("gc") as () => void)();
}

function limitsMemory(): Array<{ principals: number; rateEntries: number; rateKiB: number; concurrent: number; afterRelease: number }> {
  return [1_000, 100_000, 300_000].map((principals) => {
    gc();
    const before = process.memoryUsage().heapUsed;
    const rate = new RateLimiter(10, 20);
    const streams = new ConcurrencyLimiter(10);
    for (let i = 0; i < principals; i++) {
      rate.take(`principal-${i}`);
      streams.acquire(`principal-${i}`);
    }
    const concurrent = streams.principals;
    for (let i = 0; i < principals; i++) streams.release(`principal-${i}`);
    gc();
    const used = process.memoryUsage().heapUsed - before;
    return { principals, rateEntries: rate.principals, rateKiB: used / 1024, concurrent, afterRelease: streams.principals };
  });
}
