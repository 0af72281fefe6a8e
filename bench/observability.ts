/**
 * What metrics and tracing cost: blocking SendMessage (the trivial agent, memory store) on three
 * copies of our server in one run, measured in interleaved rounds:
 *   - metrics off   (A2A_METRICS_LISTEN=off): the baseline;
 *   - metrics on    (the default), scraped every 5 s meanwhile;
 *   - tracing on    (metrics on as well, OTEL_TRACES_EXPORTER=otlp, every call sampled
 *                    (parentbased_always_on), OTLP/HTTP protobuf to a receiver in this process on
 *                    loopback that counts the spans);
 *   - 1 in 10       the same with OTEL_TRACES_SAMPLER=parentbased_traceidratio, ARG 0.1: what a
 *                    production setting costs (no target; for comparison).
 * Targets: server CPU per call, metrics on ≤ 1.05× off, tracing on ≤ 1.3× off (medians of the
 * per-round ratios).
 *
 *   npm run build && npm run bench -- observability [--quick] [--profile]
 *
 * Our server runs compiled (dist/).
 */
import { mkdirSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { create, toBinary } from "@bufbuild/protobuf";
import { MessageSchema, Role, SendMessageRequestSchema } from "../gen/es/lf/a2a/v1/a2a_pb.js";
import { profileSummary } from "./lib/cpu-profile.js";
import { loadClient, runLoad, type LoadClient } from "./lib/load.js";
import { drive, measurePhase, waitUntilServing, type PhaseResult } from "./lib/measure.js";
import { freePort, startServerProcess, type ServerProcess } from "./lib/server-process.js";
import { median } from "./lib/stats.js";
import { formatNumber, formatRatio, markdownTable, targetsTable } from "./lib/table.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SEND = "/lf.a2a.v1.A2AService/SendMessage";

export interface ObservabilityOptions {
  readonly quick: boolean;
  /** After the rounds, one more phase per server under the V8 CPU profiler; the summaries go in the report. */
  readonly profile?: boolean;
}

const RESULTS = join(ROOT, "bench", "results");

const FULL = { inFlight: 32, warmup: 3_000, calls: 36_000, rounds: 12 };
const QUICK: typeof FULL = { inFlight: 32, warmup: 1_000, calls: 9_000, rounds: 6 };

type Kind = "off" | "metrics" | "tracing" | "sampled";
const KINDS: readonly Kind[] = ["off", "metrics", "tracing", "sampled"];
const LABEL: Record<Kind, string> = {
  off: "metrics off",
  metrics: "metrics on (default)",
  tracing: "metrics + tracing on, every call sampled",
  sampled: "metrics + tracing on, 1 in 10 sampled",
};
/** Each round measures the servers one after the other; the order turns so that no server always goes first. */
const ROUND_ORDERS: ReadonlyArray<readonly Kind[]> = KINDS.map((_, r) => KINDS.map((_, i) => KINDS[(i + r) % KINDS.length]!));

const sendRequest = Buffer.from(
  toBinary(
    SendMessageRequestSchema,
    create(SendMessageRequestSchema, {
      message: create(MessageSchema, { messageId: "bench-message-1", role: Role.USER, parts: [{ content: { case: "text", value: "What is 2 + 2?" } }] }),
    }),
  ),
);

/** The OTLP/HTTP endpoint the traced server exports to: it counts the requests and their bytes, and answers at once. */
async function startSpanSink(): Promise<{ server: Server; endpoint: string; requests: () => number; bytes: () => number }> {
  let requests = 0;
  let bytes = 0;
  const server = createServer((req, res) => {
    req.on("data", (chunk: Buffer) => (bytes += chunk.length));
    req.on("end", () => {
      requests++;
      res.writeHead(200, { "Content-Type": "application/x-protobuf" }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests: () => requests, bytes: () => bytes };
}

/** Prometheus scrapes every 15 s or so; this scrapes more often, to count the scrape's own cost too. */
const SCRAPE_EVERY_MS = 5_000;

async function startOurs(kind: Kind, otlpEndpoint: string): Promise<Served> {
  // The metrics get a listener of their own on a known port, so that the benchmark can scrape them.
  const metricsPort = kind === "off" ? undefined : await freePort();
  const server = await startServerProcess({
    name: LABEL[kind],
    script: join(ROOT, "dist/src/main.js"),
    cwd: ROOT,
    env: (port) => ({
      A2A_LISTEN: `127.0.0.1:${port}`,
      A2A_LOG_LEVEL: "warn",
      A2A_LOG_FORMAT: "json",
      A2A_STORE: "memory",
      A2A_AGENT_MODULE: "bench/agents/trivial-agent.mjs",
      A2A_CARD_LISTEN: "off",
      A2A_METRICS_LISTEN: metricsPort === undefined ? "off" : `127.0.0.1:${metricsPort}`,
      ...(kind === "tracing" || kind === "sampled"
        ? {
            OTEL_TRACES_EXPORTER: "otlp",
            OTEL_EXPORTER_OTLP_ENDPOINT: otlpEndpoint,
            OTEL_SERVICE_NAME: "a2a-bench",
            // Thousands of spans a second: a queue and batches that hold them, so none is dropped.
            OTEL_BSP_MAX_QUEUE_SIZE: "65536",
            OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "2048",
            OTEL_BSP_SCHEDULE_DELAY: "500",
            // The target's setting: every call sampled (the OpenTelemetry default, parentbased_always_on),
            // and for comparison what a production setting costs: a tenth of the traces.
            OTEL_TRACES_SAMPLER: kind === "tracing" ? "parentbased_always_on" : "parentbased_traceidratio",
            ...(kind === "sampled" ? { OTEL_TRACES_SAMPLER_ARG: "0.1" } : {}),
          }
        : { OTEL_TRACES_EXPORTER: "none" }),
    }),
  });
  const lc = loadClient(server.address, { "a2a-version": "1.0" });
  await waitUntilServing(server, () => lc.call(SEND, sendRequest), 60_000);
  let scrapes = 0;
  let scraper: NodeJS.Timeout | undefined;
  if (metricsPort !== undefined) {
    const url = `http://127.0.0.1:${metricsPort}/metrics`;
    const first = await fetch(url);
    if (!first.ok || !(await first.text()).includes("rpc_server_call_duration_seconds_count")) throw new Error(`${LABEL[kind]}: no RPC metrics at ${url}`);
    scraper = setInterval(
      () =>
        void fetch(url)
          .then((r) => r.text())
          .then(
            () => scrapes++,
            () => {},
          ),
      SCRAPE_EVERY_MS,
    );
  }
  return { kind, server, lc, scrapes: () => scrapes, stopScraping: () => clearInterval(scraper) };
}

interface Served {
  readonly kind: Kind;
  readonly server: ServerProcess;
  readonly lc: LoadClient;
  scrapes(): number;
  stopScraping(): void;
}

export async function runObservability(options: ObservabilityOptions): Promise<string> {
  const cfg = options.quick ? QUICK : FULL;
  const log = (s: string) => process.stderr.write(`[observability] ${s}\n`);
  const sink = await startSpanSink();
  const served: Served[] = [];
  try {
    for (const kind of KINDS) served.push(await startOurs(kind, sink.endpoint));
    const load = { path: SEND, request: sendRequest, inFlight: cfg.inFlight };
    log(`warm-up: ${cfg.warmup} calls per server`);
    for (const s of served) await drive(s.server, s.lc, load, cfg.warmup);
    for (const s of served) await s.server.usageAfterGc(); // see bench/issue3.ts: a full GC in each before measuring
    for (const s of served) await drive(s.server, s.lc, load, Math.ceil(cfg.warmup / 3));
    const perRound = Math.ceil(cfg.calls / cfg.rounds);
    const phases = new Map<Kind, PhaseResult[]>(served.map((s) => [s.kind, []]));
    const spansBefore = { requests: sink.requests(), bytes: sink.bytes() };
    for (let round = 0; round < cfg.rounds; round++) {
      log(`round ${round + 1}/${cfg.rounds}`);
      for (const kind of ROUND_ORDERS[round % ROUND_ORDERS.length]!) {
        const s = served.find((x) => x.kind === kind)!;
        phases.get(kind)!.push(await measurePhase(s.server, s.lc, { ...load, calls: perRound }));
      }
    }
    // Let the last batches of spans go out before counting them.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const exported = { requests: sink.requests() - spansBefore.requests, kib: (sink.bytes() - spansBefore.bytes) / 1024 };
    const profiles: string[] = [];
    if (options.profile) {
      mkdirSync(RESULTS, { recursive: true });
      for (const s of served) {
        log(`profiling ${LABEL[s.kind]}`);
        const file = join(RESULTS, `observability-${s.kind}-${Date.now()}.cpuprofile`);
        await s.server.profileStart();
        const run = await runLoad(s.lc, { ...load, calls: perRound });
        await s.server.profileStop(file);
        profiles.push(`## Profile: ${LABEL[s.kind]}`, "", profileSummary(file, run.calls), "", `Profile: ${file}`, "");
      }
    }
    return [report(cfg, phases, exported), "", ...profiles].join("\n");
  } finally {
    for (const s of served) {
      s.stopScraping();
      s.lc.close();
      await s.server.stop();
    }
    sink.server.close();
    sink.server.closeAllConnections();
  }
}

function report(cfg: typeof FULL, phases: Map<Kind, PhaseResult[]>, exported: { requests: number; kib: number }): string {
  const off = phases.get("off")!;
  const ratios = (kind: Kind) => phases.get(kind)!.map((p, i) => p.serverCpuPerCall / off[i]!.serverCpuPerCall);
  const metricsRatios = ratios("metrics");
  const tracingRatios = ratios("tracing");
  const sampledRatios = ratios("sampled");
  const range = (r: number[]) => `${formatRatio(Math.min(...r))}–${formatRatio(Math.max(...r))}`;
  const rows = KINDS.map((kind) => {
    const p = phases.get(kind)!;
    const cpu = median(p.map((x) => x.serverCpuPerCall));
    const ratio = kind === "off" ? "1.00×" : `${formatRatio(median(ratios(kind)))} (${range(ratios(kind))})`;
    return [
      LABEL[kind],
      formatNumber(cpu, 1),
      ratio,
      formatNumber(median(p.map((x) => x.callsPerSec))),
      formatNumber(median(p.map((x) => x.p50Ms)), 2),
      formatNumber(median(p.map((x) => x.p99Ms)), 2),
    ];
  });
  const perRound = markdownTable(
    ["round", "off µs/call", "metrics µs/call", "tracing µs/call", "1 in 10 µs/call", "metrics ÷ off", "tracing ÷ off", "1 in 10 ÷ off"],
    off.map((p, i) => [
      String(i + 1),
      formatNumber(p.serverCpuPerCall, 1),
      formatNumber(phases.get("metrics")![i]!.serverCpuPerCall, 1),
      formatNumber(phases.get("tracing")![i]!.serverCpuPerCall, 1),
      formatNumber(phases.get("sampled")![i]!.serverCpuPerCall, 1),
      formatRatio(metricsRatios[i]),
      formatRatio(tracingRatios[i]),
      formatRatio(sampledRatios[i]),
    ]),
  );
  const calls = cfg.rounds * Math.ceil(cfg.calls / cfg.rounds);
  return [
    `# Observability cost (blocking SendMessage, memory store, ${cfg.inFlight} in flight)`,
    "",
    `${new Date().toISOString()}; ${cpus().length} cores (${cpus()[0]?.model ?? "?"}), load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")} at the end; shared machine.`,
    `${cfg.rounds} interleaved rounds of ${Math.ceil(cfg.calls / cfg.rounds)} calls per server; figures are medians of the rounds, ratios medians of the per-round ratios (range in brackets).`,
    "",
    markdownTable(["", "server CPU µs/call", "× metrics off", "calls/s", "p50 ms", "p99 ms"], rows),
    "",
    targetsTable([
      { what: "server CPU per call, metrics on ÷ off", actual: median(metricsRatios), op: "<=", limit: 1.05, format: formatRatio },
      { what: "server CPU per call, tracing on (every call sampled) ÷ metrics off", actual: median(tracingRatios), op: "<=", limit: 1.3, format: formatRatio },
    ]),
    "",
    `Spans exported while measuring: ${formatNumber(exported.requests)} OTLP/HTTP requests, ${formatNumber(exported.kib)} KiB (${formatNumber((exported.kib * 1024) / calls, 0)} B per call).`,
    "",
    "Per round:",
    "",
    perRound,
  ].join("\n");
}
