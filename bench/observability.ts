/**
 * What metrics and tracing cost: blocking SendMessage (the trivial agent) on copies of our server
 * in one run, on the memory store and on SQLite (the default store), measured in interleaved rounds:
 *   - metrics off   (A2A_METRICS_LISTEN=off): the baseline of its store;
 *   - metrics on    (the default), scraped once per round after its phase's window (the scrape's
 *                    CPU, with what it leaves behind, is measured apart and reported per call at a
 *                    15 s scrape interval);
 *   - tracing on    (metrics on as well, OTEL_TRACES_EXPORTER=otlp, every call sampled
 *                    (parentbased_always_on), OTLP/HTTP protobuf to a receiver in this process on
 *                    loopback that counts the spans);
 *   - 1 in 10       (memory store only) the same with OTEL_TRACES_SAMPLER=parentbased_traceidratio,
 *                    ARG 0.1: what a production setting costs (no target; for comparison).
 * Targets, on each store: server CPU per call, metrics on ≤ 1.1× off and tracing on (every call
 * sampled) ≤ 1.6× off, medians of the per-round ratios.
 *
 * A server's CPU in a round is everything it spent from the start of its phase to SETTLE_MS after
 * its last call (read while the next server's phase runs): work a call leaves behind (the last
 * span batch exported within the processor's delay, a commit) counts for the calls that caused it.
 *
 *   npm run build && npm run bench -- observability [--quick] [--profile] [--store=memory|sqlite|both]
 *     [--kinds=metrics,tracing,sampled,als,unsampled] [--rounds=N] [--calls=N] [--together] [--no-scrape]
 *     [--baseline=DIR]
 *
 * --baseline=DIR: A/B of a change to tracing. DIR is another checkout, built (its dist/); on each
 * store it runs one more server, DIR's build with tracing on as "tracing" is, in the same rounds,
 * and the report gives this build's tracing ÷ DIR's per round.
 *
 * Our server runs compiled (dist/).
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { create, toBinary } from "@bufbuild/protobuf";
import { MessageSchema, Role, SendMessageRequestSchema } from "../gen/es/lf/a2a/v1/a2a_pb.js";
import { profileSummary } from "./lib/cpu-profile.js";
import { loadClient, runLoad, type LoadClient, type LoadResult } from "./lib/load.js";
import { drive, waitUntilServing } from "./lib/measure.js";
import { cpuMicros, freePort, startServerProcess, type ServerProcess, type Usage } from "./lib/server-process.js";
import { median, percentiles } from "./lib/stats.js";
import { formatNumber, formatRatio, markdownTable, targetsTable } from "./lib/table.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SEND = "/lf.a2a.v1.A2AService/SendMessage";

type Kind = "off" | "metrics" | "tracing" | "sampled" | "als" | "unsampled" | "baseline";
type StoreName = "memory" | "sqlite";
const KINDS: readonly Kind[] = ["off", "metrics", "tracing", "sampled", "als", "unsampled"];
/**
 * Diagnosis variants, run only when --kinds names them (memory store): where an unsampled call's
 * tracing cost goes.
 *   - als:       metrics off, plus one AsyncLocalStorage enabled before the server starts
 *                (bench/lib/enable-async-local-storage.mjs) and nothing else: Node 20's async
 *                hooks on every promise, which tracing's context manager needs;
 *   - unsampled: tracing as in "sampled" but every span dropped (parentbased_always_off): the
 *                tracing machinery of a call that is not sampled, with no span recorded or sent.
 */
const DIAGNOSIS: readonly Kind[] = ["als", "unsampled"];
const STORES: readonly StoreName[] = ["memory", "sqlite"];
/** The 1 in 10 variant has no target: it runs on the memory store only, to keep the run short. */
const KINDS_OF: Record<StoreName, readonly Kind[]> = { memory: KINDS, sqlite: ["off", "metrics", "tracing"] };
const ENABLE_ALS = join(ROOT, "bench", "lib", "enable-async-local-storage.mjs");

export interface ObservabilityOptions {
  readonly quick: boolean;
  /** After the rounds, one more phase per server under the V8 CPU profiler; the summaries go in the report. */
  readonly profile?: boolean;
  /** Which stores (default both). */
  readonly stores?: readonly StoreName[];
  /** Only these variants (the baseline "off" is always run). */
  readonly kinds?: readonly Kind[];
  readonly rounds?: number;
  /** Calls per server per round. */
  readonly calls?: number;
  /**
   * Load every server at once in each round instead of one after the other: on a machine others
   * load too, the servers then share the same moments (a diagnosis mode; the targets are judged
   * on interleaved rounds).
   */
  readonly together?: boolean;
  /** Do not scrape /metrics during the rounds (diagnosis: the scrape's after-effects). */
  readonly noScrape?: boolean;
  /** Another checkout (built): its tracing server runs in the same rounds (see the header). */
  readonly baseline?: string;
}

/** Parses the command line's options (see the header). */
export function observabilityOptions(args: readonly string[]): ObservabilityOptions {
  const value = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const store = value("store") ?? "both";
  if (store !== "both" && !STORES.includes(store as StoreName)) throw new Error(`--store=${store}: memory, sqlite or both`);
  const kinds = value("kinds")?.split(",") as Kind[] | undefined;
  for (const k of kinds ?? []) if (!KINDS.includes(k)) throw new Error(`--kinds: ${k} is not one of ${KINDS.join(", ")}`);
  const number = (name: string) => (value(name) === undefined ? undefined : Number(value(name)));
  return {
    quick: args.includes("--quick"),
    profile: args.includes("--profile"),
    stores: store === "both" ? STORES : [store as StoreName],
    kinds,
    rounds: number("rounds"),
    calls: number("calls"),
    together: args.includes("--together"),
    noScrape: args.includes("--no-scrape"),
    baseline: value("baseline"),
  };
}

const RESULTS = join(ROOT, "bench", "results");

const FULL = { inFlight: 32, warmup: 3_000, callsPerRound: 1_000, rounds: 20 };
const QUICK: typeof FULL = { inFlight: 32, warmup: 2_000, callsPerRound: 700, rounds: 8 };

const LABEL: Record<Kind, string> = {
  off: "metrics off",
  metrics: "metrics on (default)",
  tracing: "metrics + tracing on, every call sampled",
  sampled: "metrics + tracing on, 1 in 10 sampled",
  als: "metrics off + an AsyncLocalStorage enabled (diagnosis)",
  unsampled: "metrics + tracing on, no call sampled (diagnosis)",
  baseline: "metrics + tracing on, every call sampled: the --baseline build",
};

/** The span processor's delay: short, so that a round's spans are exported (and counted) within the round. */
const BSP_DELAY_MS = 200;
/**
 * A phase's CPU window closes this long after its last call: the spans still queued then are sent
 * within the span processor's delay, and a commit or a collection the calls left behind happens in
 * it too. Longer would count the idle servers' timers more than calls do in a busy server.
 */
const SETTLE_MS = BSP_DELAY_MS + 150;

const sendRequest = Buffer.from(
  toBinary(
    SendMessageRequestSchema,
    create(SendMessageRequestSchema, {
      message: create(MessageSchema, { messageId: "bench-message-1", role: Role.USER, parts: [{ content: { case: "text", value: "What is 2 + 2?" } }] }),
    }),
  ),
);

/** The OTLP/HTTP endpoint the traced servers export to: it counts the requests and their bytes, and answers at once. */
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

/** Prometheus's usual scrape interval (its example configuration's 15 s), for the scrape's cost per call. */
const SCRAPE_EVERY_S = 15;

interface Served {
  readonly store: StoreName;
  readonly kind: Kind;
  readonly name: string;
  readonly server: ServerProcess;
  readonly lc: LoadClient;
  readonly dataDir: string | undefined;
  /** Reads /metrics once (servers with metrics on). */
  readonly scrape: (() => Promise<void>) | undefined;
}

async function startOurs(store: StoreName, kind: Kind, otlpEndpoint: string, baseline: string | undefined): Promise<Served> {
  const name = `${store}: ${LABEL[kind]}`;
  // The metrics get a listener of their own on a known port, so that the benchmark can scrape them.
  const metricsPort = kind === "off" || kind === "als" ? undefined : await freePort();
  const traced = kind === "tracing" || kind === "sampled" || kind === "unsampled" || kind === "baseline";
  const root = kind === "baseline" ? baseline! : ROOT;
  const dataDir = store === "sqlite" ? mkdtempSync(join(tmpdir(), "a2a-obs-bench-")) : undefined;
  const server = await startServerProcess({
    name,
    script: join(root, "dist/src/main.js"),
    cwd: root,
    ...(kind === "als" ? { nodeFlags: ["--import", ENABLE_ALS] } : {}),
    env: (port) => ({
      A2A_LISTEN: `127.0.0.1:${port}`,
      A2A_LOG_LEVEL: "warn",
      A2A_LOG_FORMAT: "json",
      A2A_STORE: store,
      ...(dataDir !== undefined ? { A2A_DATA_DIR: dataDir } : {}),
      A2A_AGENT_MODULE: "bench/agents/trivial-agent.mjs",
      A2A_CARD_LISTEN: "off",
      A2A_METRICS_LISTEN: metricsPort === undefined ? "off" : `127.0.0.1:${metricsPort}`,
      ...(traced
        ? {
            OTEL_TRACES_EXPORTER: "otlp",
            OTEL_EXPORTER_OTLP_ENDPOINT: otlpEndpoint,
            OTEL_SERVICE_NAME: "a2a-bench",
            // Thousands of spans a second: a queue and batches that hold them, so none is dropped.
            OTEL_BSP_MAX_QUEUE_SIZE: "65536",
            OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "2048",
            OTEL_BSP_SCHEDULE_DELAY: String(BSP_DELAY_MS),
            // The target's setting: every call sampled (the OpenTelemetry default, parentbased_always_on),
            // and for comparison what a production setting costs: a tenth of the traces.
            OTEL_TRACES_SAMPLER:
              { tracing: "parentbased_always_on", baseline: "parentbased_always_on", unsampled: "parentbased_always_off" }[kind as string] ??
              "parentbased_traceidratio",
            ...(kind === "sampled" ? { OTEL_TRACES_SAMPLER_ARG: "0.1" } : {}),
          }
        : { OTEL_TRACES_EXPORTER: "none" }),
    }),
  });
  const lc = loadClient(server.address, { "a2a-version": "1.0" });
  await waitUntilServing(server, () => lc.call(SEND, sendRequest), 60_000);
  let scrape: (() => Promise<void>) | undefined;
  if (metricsPort !== undefined) {
    const url = `http://127.0.0.1:${metricsPort}/metrics`;
    scrape = async () => {
      const response = await fetch(url);
      if (!response.ok || !(await response.text()).includes("rpc_server_call_duration_seconds_count")) throw new Error(`${name}: no RPC metrics at ${url}`);
    };
    await scrape();
  }
  return { store, kind, name, server, lc, dataDir, scrape };
}

/** One server's phase in one round: its calls, and its CPU from this phase's start to its next phase's start. */
interface Phase {
  readonly load: LoadResult;
  readonly start: Usage;
  cpuMicros: number;
}

export async function runObservability(options: ObservabilityOptions): Promise<string> {
  const base = options.quick ? QUICK : FULL;
  const cfg = { ...base, rounds: options.rounds ?? base.rounds, callsPerRound: options.calls ?? base.callsPerRound };
  const log = (s: string) => process.stderr.write(`[observability] ${s}\n`);
  const startedAt = Date.now();
  const sink = await startSpanSink();
  const served: Served[] = [];
  try {
    for (const store of options.stores ?? STORES) {
      for (const kind of KINDS_OF[store]) {
        if (kind !== "off" && (options.kinds ?? KINDS.filter((k) => !DIAGNOSIS.includes(k))).includes(kind) === false) continue;
        served.push(await startOurs(store, kind, sink.endpoint, options.baseline));
      }
      if (options.baseline !== undefined) served.push(await startOurs(store, "baseline", sink.endpoint, options.baseline));
    }
    log(`${served.length} servers up after ${((Date.now() - startedAt) / 1000).toFixed(1)} s; warm-up: ${cfg.warmup} calls each`);
    const load = { path: SEND, request: sendRequest, inFlight: cfg.inFlight };
    for (const s of served) await drive(s.server, s.lc, load, cfg.warmup);
    for (const s of served) await s.server.usageAfterGc(); // see bench/unary.ts: a full GC in each before measuring
    for (const s of served) await drive(s.server, s.lc, load, Math.ceil(cfg.warmup / 3));
    const phases = new Map<Served, Phase[]>(served.map((s) => [s, []]));
    const spansBefore = { requests: sink.requests(), bytes: sink.bytes() };
    const readings: Promise<void>[] = [];
    const windows = new Map<Served, Promise<void>>();
    const scrapeCpu = new Map<Served, number[]>(served.map((s) => [s, []]));
    for (let round = 0; round < cfg.rounds; round++) {
      log(`round ${round + 1}/${cfg.rounds}`);
      const phase = async (s: Served) => {
        await windows.get(s); // the same server's previous window closes before this phase starts
        const start = await s.server.usage();
        const result = await runLoad(s.lc, { ...load, calls: cfg.callsPerRound });
        if (result.errors > 0) throw new Error(`${s.name}: ${result.errors} of ${result.calls} calls failed, first: ${result.firstError}`);
        const measured: Phase = { load: result, start, cpuMicros: Number.NaN };
        phases.get(s)!.push(measured);
        // The window closes SETTLE_MS after the last call, while the next server's phase runs.
        const settle = () => new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
        const window = settle()
          .then(() => s.server.usage())
          .then(async (end) => {
            measured.cpuMicros = cpuMicros(start, end);
            if (s.scrape === undefined || options.noScrape) return;
            // Once per round, after the calls' window and measured apart with its own settling
            // time (what a scrape leaves behind counts for the scrape): its cost is per scrape, not per call.
            await s.scrape();
            await settle();
            scrapeCpu.get(s)!.push(cpuMicros(end, await s.server.usage()));
          });
        windows.set(s, window);
        readings.push(window);
      };
      if (options.together) await Promise.all(served.map(phase));
      // The order turns each round, so that no server always follows the same one.
      else for (let i = 0; i < served.length; i++) await phase(served[(i + round) % served.length]!);
    }
    await Promise.all(readings);
    const exported = { requests: sink.requests() - spansBefore.requests, bytes: sink.bytes() - spansBefore.bytes };
    const profiles: string[] = [];
    if (options.profile) {
      mkdirSync(RESULTS, { recursive: true });
      for (const s of served) {
        log(`profiling ${s.name}`);
        const file = join(RESULTS, `observability-${s.store}-${s.kind}-${Date.now()}.cpuprofile`);
        await s.server.profileStart();
        const run = await runLoad(s.lc, { ...load, calls: cfg.callsPerRound * 2 });
        await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
        await s.server.profileStop(file);
        profiles.push(`## Profile: ${s.name}`, "", profileSummary(file, run.calls), "", `Profile: ${file}`, "");
      }
    }
    const elapsedS = (Date.now() - startedAt) / 1000;
    return [report(options, cfg, served, phases, exported, scrapeCpu, elapsedS), "", ...profiles].join("\n");
  } finally {
    for (const s of served) {
      s.lc.close();
      await s.server.stop();
      if (s.dataDir !== undefined) rmSync(s.dataDir, { recursive: true, force: true });
    }
    sink.server.close();
    sink.server.closeAllConnections();
  }
}

const cpuPerCall = (p: Phase) => p.cpuMicros / p.load.calls;

/** "median (middle half p25–p75; all min–max)" of per-round ratios. */
function spread(ratios: readonly number[]): string {
  const [p25, p75] = percentiles(Float64Array.from(ratios), [25, 75]);
  return `${formatRatio(median(ratios))} (${formatRatio(p25)}–${formatRatio(p75)}; ${formatRatio(Math.min(...ratios))}–${formatRatio(Math.max(...ratios))})`;
}

function report(
  options: ObservabilityOptions,
  cfg: typeof FULL,
  served: readonly Served[],
  phases: Map<Served, Phase[]>,
  exported: { requests: number; bytes: number },
  scrapeCpu: Map<Served, number[]>,
  elapsedS: number,
): string {
  const sections: string[] = [];
  const targets: Parameters<typeof targetsTable>[0][number][] = [];
  let tracedCalls = 0;
  for (const store of options.stores ?? STORES) {
    const ofStore = served.filter((s) => s.store === store);
    const off = phases.get(ofStore.find((s) => s.kind === "off")!)!;
    const ratios = (s: Served) => phases.get(s)!.map((p, i) => cpuPerCall(p) / cpuPerCall(off[i]!));
    const rows = ofStore.map((s) => {
      const p = phases.get(s)!;
      const rate = (x: Phase) => (x.load.calls * 1000) / x.load.elapsedMs;
      const latency = (q: number) => median(p.map((x) => percentiles(x.load.latenciesMs, [q])[0]!));
      return [
        LABEL[s.kind],
        formatNumber(median(p.map(cpuPerCall)), 1),
        s.kind === "off" ? "1.00×" : spread(ratios(s)),
        formatNumber(median(p.map(rate))),
        formatNumber(latency(50), 2),
        formatNumber(latency(99), 2),
      ];
    });
    const perRound = markdownTable(
      ["round", ...ofStore.map((s) => `${s.kind} µs/call`), ...ofStore.filter((s) => s.kind !== "off").map((s) => `${s.kind} ÷ off`)],
      off.map((_, i) => [
        String(i + 1),
        ...ofStore.map((s) => formatNumber(cpuPerCall(phases.get(s)![i]!), 1)),
        ...ofStore.filter((s) => s.kind !== "off").map((s) => formatRatio(ratios(s)[i])),
      ]),
    );
    for (const s of ofStore)
      if (s.kind === "tracing" || s.kind === "sampled" || s.kind === "baseline") tracedCalls += phases.get(s)!.reduce((n, p) => n + p.load.calls, 0);
    const metrics = ofStore.find((s) => s.kind === "metrics");
    const tracing = ofStore.find((s) => s.kind === "tracing");
    const metricsNote: string[] = [];
    if (metrics !== undefined) {
      targets.push({
        what: `${store}: server CPU per call, metrics on ÷ metrics off`,
        actual: median(ratios(metrics)),
        op: "<=",
        limit: 1.1,
        format: formatRatio,
      });
    }
    if (tracing !== undefined) {
      targets.push({
        what: `${store}: server CPU per call, tracing on (every call sampled) ÷ metrics off`,
        actual: median(ratios(tracing)),
        op: "<=",
        limit: 1.6,
        format: formatRatio,
      });
    }
    const baseline = ofStore.find((s) => s.kind === "baseline");
    const ab =
      tracing !== undefined && baseline !== undefined
        ? [
            `This build's tracing ÷ the --baseline build's (${options.baseline}), CPU per call, per round: ${spread(phases.get(tracing)!.map((p, i) => cpuPerCall(p) / cpuPerCall(phases.get(baseline)![i]!)))}.`,
            "",
          ]
        : [];
    const scrapes = ofStore.flatMap((s) => scrapeCpu.get(s) ?? []);
    const scrapeMs = scrapes.length > 0 ? median(scrapes) / 1000 : undefined;
    const offRate = median(off.map((x) => (x.load.calls * 1000) / x.load.elapsedMs));
    sections.push(
      `## ${store} store`,
      "",
      markdownTable(["", "server CPU µs/call", "× metrics off: median (p25–p75; min–max)", "calls/s", "p50 ms", "p99 ms"], rows),
      "",
      ...metricsNote,
      ...ab,
      ...(scrapeMs === undefined
        ? []
        : [
            `A scrape of /metrics (once per round, after the calls' window) cost the server ${formatNumber(scrapeMs, 2)} ms of CPU with ${SETTLE_MS} ms after it (median of ${scrapes.length}): every ${SCRAPE_EVERY_S} s at the metrics-off server's ${formatNumber(offRate)} calls/s that is ${formatNumber((scrapeMs * 1000) / (SCRAPE_EVERY_S * offRate), 2)} µs per call, not in the ratios above.`,
            "",
          ]),
      "Per round:",
      "",
      perRound,
      "",
    );
  }
  return [
    `# Observability cost (blocking SendMessage, ${cfg.inFlight} in flight)`,
    "",
    `${new Date().toISOString()}; ${cpus().length} cores (${cpus()[0]?.model ?? "?"}), load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")} at the end; ${elapsedS.toFixed(0)} s in all.`,
    `${cfg.rounds} ${options.together ? "rounds (every server loaded at once: --together)" : "interleaved rounds"} of ${cfg.callsPerRound} calls per server; CPU per call is a server's CPU from its phase's start to ${SETTLE_MS} ms after its last call (deferred span exports included) ÷ the phase's calls. Figures are medians of the rounds; ratios are medians of the per-round ratios to the same store's metrics-off server, with the middle half and the whole range of them in brackets.`,
    "",
    targetsTable(targets),
    "",
    `Spans exported while measuring: ${formatNumber(exported.requests)} OTLP/HTTP requests, ${formatNumber(exported.bytes / 1024)} KiB (${formatNumber(tracedCalls === 0 ? 0 : exported.bytes / tracedCalls, 0)} B per traced call, the 1 in 10 server's included).`,
    "",
    ...sections,
  ].join("\n");
}
