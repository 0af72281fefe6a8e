/**
 * What the Prometheus metrics cost per blocking SendMessage (the trivial agent), measured finer than
 * `bench -- observability` does. The servers, per store:
 *   - off      A2A_METRICS_LISTEN=off: the baseline of its store;
 *   - metrics  the default (its own listener, so the benchmark can scrape it), scraped every 15 s
 *              between rounds: the scrape's CPU, with what it leaves behind, is reported apart;
 *   - off2     a second metrics-off server (on unless --no-aa): the A/A ratio, i.e. the noise of the
 *              method, reported beside the A/B one;
 *   - pieces   (--pieces=eld,gc,channels,defaults) a metrics-off server with one piece of what the
 *              metrics switch on, preloaded alone (bench/lib/metrics-pieces.mjs): where the cost is;
 *   - before   (--baseline=DIR) metrics on, the server of another build: DIR a built checkout
 *              (DIR/dist/src/main.js) or a dist directory (DIR/src/main.js); it resolves its own
 *              node_modules.
 * Target, on each store: the median of the per-round ratios metrics ÷ off ≤ 1.05, printed with
 * the A/A ratio off2 ÷ off of the same rounds beside it.
 *
 * How a round is run:
 *   - interleaved (the default): each server process (2 a variant, --processes) gets 1,000 calls (--calls) in phases of 250 (--chunk),
 *     one server at a time, the servers taking turns in an order and its reverse (A B C, C B A,
 *     ...), and a server's CPU in its own phases (plus 100 ms after the round) ÷ its calls is its
 *     figure for the round (its idle timers between phases are the idle CPU, apart). The
 *     phases are short (~0.1–0.3 s), so every server of a round goes through the same moments of a
 *     machine others load, at the same mean time; each still runs alone, so none competes with the
 *     others for the cores. Why: with one phase of 5,000 calls per server (--chunk=5000, the
 *     method before) the A/A ratio spread 0.90–1.19× round to round on the shared machine, wider
 *     than the 5% the target is about; in one cyclic order (A B C, A B C) neighbours shared more
 *     of the machine's moments than others, which made an adjacent A/A pair look tighter than the
 *     A/B one.
 *   - together (--together [--seconds=S]): every server of a store loaded at once for S s (2), each
 *     by its own 32 calls in flight. Worse on the shared machine (load 6–10: A/A middle half
 *     0.69–0.99×): the servers' loops then wait on each other and on the client.
 *
 *   npm run build && npm run bench -- metrics-cost [--store=memory|sqlite|both] [--rounds=N]
 *     [--calls=N] [--chunk=N] [--together [--seconds=S]] [--no-aa] [--pieces=eld,gc,channels,defaults]
 *     [--baseline=DIR] [--reverse] [--profile] [--node-flags=--flag,...]
 * (--reverse starts and warms the servers in the reverse order: a check that the order biases nothing)
 *
 * A window is a server's CPU from its phase's start to SETTLE_MS after its last call (a SQLite
 * commit the calls left behind falls in it). Metrics servers are scraped at Prometheus's usual
 * interval (15 s), between windows; the scrape's own CPU is reported apart, per call. Our server
 * runs compiled (dist/).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { create, toBinary } from "@bufbuild/protobuf";
import { MessageSchema, Role, SendMessageRequestSchema } from "../gen/es/lf/a2a/v1/a2a_pb.js";
import { EVENT_LOOP_QUIET_MS } from "../src/observability/event-loop-lag.js";
import { profileSummary } from "./lib/cpu-profile.js";
import { loadClient, runLoad, type LoadClient } from "./lib/load.js";
import { drive, waitUntilServing } from "./lib/measure.js";
import { cpuMicros, freePort, startServerProcess, type ServerProcess } from "./lib/server-process.js";
import { median, percentiles } from "./lib/stats.js";
import { formatNumber, formatRatio, markdownTable, targetsTable } from "./lib/table.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SEND = "/lf.a2a.v1.A2AService/SendMessage";
const PIECES_PRELOAD = join(ROOT, "bench", "lib", "metrics-pieces.mjs");
const PIECES = ["eld", "gc", "channels", "defaults"] as const;
const RESULTS = join(ROOT, "bench", "results");

type StoreName = "memory" | "sqlite";
const STORES: readonly StoreName[] = ["memory", "sqlite"];
/** A variant: "off", "metrics", "off2", or "off+<piece>". */
type Variant = string;

const IN_FLIGHT = 32;
const WARMUP = 4_000;
const SETTLE_MS = 100;
/** How long the servers' idle CPU is read for. */
const IDLE_MS = 3_000;
/** How long after the last calls it is read from: the event-loop lag sampler stops 2–4 s after the last activity. */
const IDLE_WAIT_MS = 2 * EVENT_LOOP_QUIET_MS + 1_000;
/** Prometheus's usual scrape interval, for the scrape's cost per call. */
const SCRAPE_EVERY_S = 15;

export interface MetricsCostOptions {
  readonly stores: readonly StoreName[];
  readonly rounds: number;
  /** Calls per server per round. */
  readonly calls: number;
  /** Calls per phase: a round's calls to a server go in phases of this many, the servers taking turns. */
  readonly chunk: number;
  /** --together: each round, every server of a store loaded at once for this many seconds instead. */
  readonly together: number | undefined;
  readonly aa: boolean;
  readonly pieces: readonly string[];
  /** A built server (its dist directory) to run with metrics on as "before". */
  readonly baseline: string | undefined;
  readonly profile: boolean;
  /** Server processes per variant: a variant's figure per round is the mean of its processes'. */
  readonly processes: number;
  /** --node-flags=a,b: flags for every server's node (e.g. --single-threaded-gc), to try what moves the noise. */
  readonly nodeFlags: readonly string[];
  /** Start (and warm up) the servers in the reverse order: whether the order they start in biases their figures. */
  readonly reverse: boolean;
}

export function metricsCostOptions(args: readonly string[]): MetricsCostOptions {
  const value = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const store = value("store") ?? "both";
  if (store !== "both" && !STORES.includes(store as StoreName)) throw new Error(`--store=${store}: memory, sqlite or both`);
  const pieces = value("pieces")?.split(",") ?? [];
  for (const p of pieces) if (!(PIECES as readonly string[]).includes(p)) throw new Error(`--pieces: ${p} is not one of ${PIECES.join(", ")}`);
  return {
    stores: store === "both" ? STORES : [store as StoreName],
    rounds: Number(value("rounds") ?? 16),
    calls: Number(value("calls") ?? 1_000),
    chunk: Number(value("chunk") ?? 250),
    together: args.includes("--together") ? Number(value("seconds") ?? 2) : undefined,
    aa: !args.includes("--no-aa"),
    pieces,
    baseline: value("baseline"),
    profile: args.includes("--profile"),
    nodeFlags: value("node-flags")?.split(",") ?? [],
    processes: Number(value("processes") ?? 2),
    reverse: args.includes("--reverse"),
  };
}

const sendRequest = Buffer.from(
  toBinary(
    SendMessageRequestSchema,
    create(SendMessageRequestSchema, {
      message: create(MessageSchema, { messageId: "bench-message-1", role: Role.USER, parts: [{ content: { case: "text", value: "What is 2 + 2?" } }] }),
    }),
  ),
);

interface Served {
  readonly store: StoreName;
  readonly variant: Variant;
  readonly server: ServerProcess;
  readonly lc: LoadClient;
  readonly dataDir: string | undefined;
  readonly scrape: (() => Promise<void>) | undefined;
  /** Per round: server CPU µs per call. */
  readonly perCall: number[];
  readonly rates: number[];
  readonly scrapeMicros: number[];
  /** When it was last scraped (performance.now()). */
  lastScrapeAt: number;
  /** CPU µs per second while idle. */
  idleMicrosPerS: number;
}

async function startOne(store: StoreName, variant: Variant, instance: number, baseline: string | undefined, nodeFlags: readonly string[]): Promise<Served> {
  const metricsPort = variant === "metrics" || variant === "before" ? await freePort() : undefined;
  const piece = variant.startsWith("off+") ? variant.slice(4) : undefined;
  const dataDir = store === "sqlite" ? mkdtempSync(join(tmpdir(), "a2a-metrics-bench-")) : undefined;
  const name = `${store}: ${variant} #${instance + 1}`;
  const server = await startServerProcess({
    name,
    script: variant === "before" ? baselineMain(baseline!) : join(ROOT, "dist/src/main.js"),
    cwd: ROOT,
    nodeFlags: [...nodeFlags, ...(piece !== undefined ? ["--import", PIECES_PRELOAD] : [])],
    env: (port) => ({
      A2A_LISTEN: `127.0.0.1:${port}`,
      A2A_LOG_LEVEL: "warn",
      A2A_LOG_FORMAT: "json",
      A2A_STORE: store,
      ...(dataDir !== undefined ? { A2A_DATA_DIR: dataDir } : {}),
      A2A_AGENT_MODULE: "bench/agents/trivial-agent.mjs",
      A2A_CARD_LISTEN: "off",
      A2A_METRICS_LISTEN: metricsPort === undefined ? "off" : `127.0.0.1:${metricsPort}`,
      OTEL_TRACES_EXPORTER: "none",
      ...(piece !== undefined ? { BENCH_METRICS_PIECES: piece } : {}),
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
  return { store, variant, server, lc, dataDir, scrape, perCall: [], rates: [], scrapeMicros: [], lastScrapeAt: performance.now(), idleMicrosPerS: Number.NaN };
}

/** The server of another build: DIR a built checkout (DIR/dist/src/main.js) or its dist directory (DIR/src/main.js). */
function baselineMain(dir: string): string {
  for (const main of [join(dir, "dist/src/main.js"), join(dir, "src/main.js")]) if (existsSync(main)) return main;
  throw new Error(`--baseline=${dir}: neither ${dir}/dist/src/main.js nor ${dir}/src/main.js exists (build it first)`);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `items` rotated by `by` places: the order turns each round. */
function turned<T>(items: readonly T[], by: number): T[] {
  return items.map((_, i) => items[(i + by) % items.length]!);
}

type Load = { readonly path: string; readonly request: Buffer; readonly inFlight: number };

/**
 * One server at a time, in phases of `chunk` calls, the servers taking turns (in the order and its
 * reverse by turns) until each has had `calls`. A server's CPU for the round is what it spent in
 * its own phases (read before and after each) plus SETTLE_MS after the round's last call, ÷ its
 * calls: not what it spent waiting between its phases while the others ran. Its timers' cost
 * while idle is a cost per second, reported apart (idle CPU); counted inside the round it would
 * grow with the number of servers taking turns (a server waits for all the others between two
 * phases), which is not a cost per call.
 */
async function interleavedRound(group: readonly Served[], load: Load, calls: number, chunk: number): Promise<void> {
  const cpu = group.map(() => 0);
  const done = group.map(() => 0);
  const elapsed = group.map(() => 0);
  for (let sent = 0, turn = 0; sent < calls; sent += chunk, turn++) {
    // A B C, C B A, A B C, ...: every server's phases sit at the same mean time, so a drift in the
    // machine's load weighs on all alike (in one order only, neighbours shared more of it).
    for (let k = 0; k < group.length; k++) {
      const i = turn % 2 === 0 ? k : group.length - 1 - k;
      const s = group[i]!;
      const before = await s.server.usage();
      const result = await runLoad(s.lc, { ...load, calls: Math.min(chunk, calls - sent) });
      cpu[i]! += cpuMicros(before, await s.server.usage());
      if (result.errors > 0) throw new Error(`${s.variant}: ${result.errors} of ${result.calls} calls failed, first: ${result.firstError}`);
      done[i]! += result.calls;
      elapsed[i]! += result.elapsedMs;
    }
  }
  const settleFrom = await Promise.all(group.map((s) => s.server.usage()));
  await sleep(SETTLE_MS);
  const settleTo = await Promise.all(group.map((s) => s.server.usage()));
  group.forEach((s, i) => {
    s.perCall.push((cpu[i]! + cpuMicros(settleFrom[i]!, settleTo[i]!)) / done[i]!);
    s.rates.push((done[i]! * 1000) / elapsed[i]!);
  });
  for (const s of group) await scrapeIfDue(s);
}

/**
 * Every server of `group` loaded at once for `seconds`: each keeps its own calls in flight until the
 * window's end (then its last calls finish), and its CPU from the window's start to SETTLE_MS after
 * the last server's last call ÷ the calls it completed is its figure for the round.
 */
async function togetherRound(group: readonly Served[], load: Load, seconds: number): Promise<void> {
  const starts = await Promise.all(group.map((s) => s.server.usage()));
  const results = await Promise.all(group.map((s) => runLoad(s.lc, { ...load, calls: 1_000_000, maxSeconds: seconds })));
  await sleep(SETTLE_MS);
  const ends = await Promise.all(group.map((s) => s.server.usage()));
  group.forEach((s, i) => {
    const result = results[i]!;
    if (result.errors > 0) throw new Error(`${s.variant}: ${result.errors} of ${result.calls} calls failed, first: ${result.firstError}`);
    s.perCall.push(cpuMicros(starts[i]!, ends[i]!) / result.calls);
    s.rates.push((result.calls * 1000) / result.elapsedMs);
  });
  for (const s of group) await scrapeIfDue(s);
}

/**
 * Scrapes a metrics server once its scrape interval has passed, between windows, and keeps the
 * scrape's CPU (with SETTLE_MS after it: what it leaves behind counts for the scrape). At Prometheus's
 * interval, not every round: a round is a few seconds, and a scrape's after-effects that outlast
 * SETTLE_MS land in the next window, as they would in production at 15 s.
 */
async function scrapeIfDue(s: Served): Promise<void> {
  if (s.scrape === undefined || performance.now() - s.lastScrapeAt < SCRAPE_EVERY_S * 1000) return;
  const before = await s.server.usage();
  await s.scrape();
  s.lastScrapeAt = performance.now();
  await sleep(SETTLE_MS);
  s.scrapeMicros.push(cpuMicros(before, await s.server.usage()));
}

export async function runMetricsCost(options: MetricsCostOptions): Promise<string> {
  const log = (s: string) => process.stderr.write(`[metrics-cost] ${s}\n`);
  const startedAt = Date.now();
  const variants: Variant[] = [
    "off",
    "metrics",
    ...(options.baseline !== undefined ? ["before"] : []),
    ...(options.aa ? ["off2"] : []),
    ...options.pieces.map((p) => `off+${p}`),
  ];
  const served: Served[] = [];
  const load = { path: SEND, request: sendRequest, inFlight: IN_FLIGHT };
  try {
    for (const store of options.stores)
      for (let instance = 0; instance < options.processes; instance++)
        for (const variant of options.reverse ? [...variants].reverse() : variants)
          served.push(await startOne(store, variant, instance, options.baseline, options.nodeFlags));
    log(`${served.length} servers up; warm-up ${WARMUP} calls each`);
    for (const s of served) await drive(s.server, s.lc, load, WARMUP);
    for (const s of served) await s.server.usageAfterGc();
    for (const s of served) await drive(s.server, s.lc, load, WARMUP / 2);
    for (let round = 0; round < options.rounds; round++) {
      log(`round ${round + 1}/${options.rounds}`);
      for (const store of turned(options.stores, round)) {
        const group = turned(
          served.filter((s) => s.store === store),
          round,
        );
        if (options.together === undefined) await interleavedRound(group, load, options.calls, options.chunk);
        else await togetherRound(group, load, options.together);
      }
      // Each round's figures as they come, so that a run cut short still tells something.
      for (const store of options.stores) {
        const ofStore = pooled(served, store);
        const off = ofStore.find((s) => s.variant === "off")!.perCall[round]!;
        log(`  ${store}: ${ofStore.map((s) => `${s.variant} ${s.perCall[round]!.toFixed(1)} µs (${(s.perCall[round]! / off).toFixed(3)})`).join(", ")}`);
      }
    }
    // What each server costs doing nothing (its timers): a cost per second, not per call, read with
    // every server idle, once what the last calls left behind (collections, compilation) is done.
    await sleep(IDLE_WAIT_MS);
    const idleFrom = await Promise.all(served.map((s) => s.server.usage()));
    await sleep(IDLE_MS);
    const idleTo = await Promise.all(served.map((s) => s.server.usage()));
    served.forEach((s, i) => (s.idleMicrosPerS = (cpuMicros(idleFrom[i]!, idleTo[i]!) * 1000) / IDLE_MS));
    const profiles: string[] = [];
    if (options.profile) {
      mkdirSync(RESULTS, { recursive: true });
      for (const s of served) {
        log(`profiling ${s.store}: ${s.variant}`);
        const file = join(RESULTS, `metrics-cost-${s.store}-${s.variant}-${Date.now()}.cpuprofile`);
        await s.server.profileStart();
        const run = await runLoad(s.lc, { ...load, calls: options.calls * 2 });
        await sleep(SETTLE_MS);
        await s.server.profileStop(file);
        profiles.push(`## Profile: ${s.store}: ${s.variant}`, "", profileSummary(file, run.calls), "", `Profile: ${file}`, "");
      }
    }
    return [report(options, served, (Date.now() - startedAt) / 1000), "", ...profiles].join("\n");
  } finally {
    for (const s of served) {
      s.lc.close();
      await s.server.stop();
      if (s.dataDir !== undefined) rmSync(s.dataDir, { recursive: true, force: true });
    }
  }
}

/** A variant's figures: the mean of its processes' per round (the same calls each), their rates summed. */
interface Pooled {
  readonly variant: Variant;
  readonly perCall: number[];
  readonly rates: number[];
  readonly scrapeMicros: number[];
  readonly idleMicrosPerS: number;
}

function pooled(served: readonly Served[], store: StoreName): Pooled[] {
  const ofStore = served.filter((s) => s.store === store);
  const variants = [...new Set(ofStore.map((s) => s.variant))];
  return variants.map((variant) => {
    const processes = ofStore.filter((s) => s.variant === variant);
    const mean = (values: readonly number[]) => values.reduce((a, b) => a + b, 0) / values.length;
    const rounds = Math.min(...processes.map((p) => p.perCall.length));
    return {
      variant,
      perCall: Array.from({ length: rounds }, (_, i) => mean(processes.map((p) => p.perCall[i]!))),
      rates: Array.from({ length: rounds }, (_, i) => processes.reduce((sum, p) => sum + p.rates[i]!, 0)),
      scrapeMicros: processes.flatMap((p) => p.scrapeMicros),
      idleMicrosPerS: mean(processes.map((p) => p.idleMicrosPerS)),
    };
  });
}

function spread(ratios: readonly number[]): string {
  const [p25, p75] = percentiles(Float64Array.from(ratios), [25, 75]);
  return `${formatRatio(median(ratios))} (${formatRatio(p25)}–${formatRatio(p75)}; ${formatRatio(Math.min(...ratios))}–${formatRatio(Math.max(...ratios))})`;
}

function report(options: MetricsCostOptions, served: readonly Served[], elapsedS: number): string {
  const targets: Parameters<typeof targetsTable>[0][number][] = [];
  const sections: string[] = [];
  for (const store of options.stores) {
    const ofStore = pooled(served, store);
    const off = ofStore.find((s) => s.variant === "off")!;
    const ratios = (s: Pooled) => s.perCall.map((v, i) => v / off.perCall[i]!);
    const metrics = ofStore.find((s) => s.variant === "metrics")!;
    const metricsRatio = median(ratios(metrics));
    targets.push({ what: `${store}: server CPU per call, metrics on ÷ off`, actual: metricsRatio, op: "<=", limit: 1.05, format: formatRatio });
    const aa = ofStore.find((s) => s.variant === "off2");
    // The A/A figure beside it: how far two identical servers read apart with this method, this run.
    if (aa !== undefined)
      targets.push({ what: `${store}: A/A, metrics off ÷ off (the method's noise)`, actual: median(ratios(aa)), op: "<=", limit: 1.05, format: formatRatio });
    const rows = ofStore.map((s) => [
      s.variant,
      formatNumber(median(s.perCall), 1),
      s === off ? "1.00×" : spread(ratios(s)),
      s === off ? "" : formatNumber(median(s.perCall.map((v, i) => v - off.perCall[i]!)), 2),
      formatNumber(median(s.rates)),
      formatNumber(s.idleMicrosPerS),
    ]);
    const scrapeMs = metrics.scrapeMicros.length > 0 ? median(metrics.scrapeMicros) / 1000 : undefined;
    // A server busy on one core spends 15 s × 1e6 µs on calls between two scrapes: the scrape's share of that.
    const scrapeShare = scrapeMs === undefined ? undefined : (scrapeMs * 1000) / (SCRAPE_EVERY_S * 1e6);
    sections.push(
      `## ${store} store`,
      "",
      markdownTable(["", "server CPU µs/call", "÷ off: median (p25–p75; min–max)", "− off, µs/call (median)", "calls/s", "idle CPU µs/s"], rows),
      "",
      ...(aa === undefined ? [] : [`A/B metrics ÷ off ${spread(ratios(metrics))} beside A/A off2 ÷ off ${spread(ratios(aa))}, same rounds.`, ""]),
      ...(scrapeMs === undefined || scrapeShare === undefined
        ? []
        : [
            `A scrape of /metrics (every ${SCRAPE_EVERY_S} s of the run, between windows) cost ${formatNumber(scrapeMs, 2)} ms of server CPU with ${SETTLE_MS} ms after it (median of ${metrics.scrapeMicros.length}): for a server busy on one core, scraped every ${SCRAPE_EVERY_S} s, that adds ${formatNumber(scrapeShare * 100, 3)}% to its calls' CPU (metrics on ÷ off with it: ${formatRatio(metricsRatio + scrapeShare)}); not in the ratios above.`,
            "",
          ]),
      "Per round, µs per call:",
      "",
      markdownTable(
        ["round", ...ofStore.map((s) => s.variant)],
        off.perCall.map((_, i) => [String(i + 1), ...ofStore.map((s) => formatNumber(s.perCall[i], 1))]),
      ),
      "",
      ...(options.processes > 1
        ? [
            "Per process, median µs per call over the rounds (what one process's own bias would be):",
            "",
            markdownTable(
              ["process", "µs/call"],
              served.filter((s) => s.store === store).map((s) => [s.server.name, formatNumber(median(s.perCall), 1)]),
            ),
            "",
          ]
        : []),
    );
  }
  return [
    `# Metrics cost (blocking SendMessage, ${IN_FLIGHT} in flight)`,
    "",
    `${new Date().toISOString()}; ${cpus().length} cores (${cpus()[0]?.model ?? "?"}), load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")} at the end; ${elapsedS.toFixed(0)} s in all.`,
    options.together === undefined
      ? `${options.rounds} rounds; in each, every server process had ${options.calls} calls in phases of ${options.chunk}, one server at a time, the servers taking turns in an order and its reverse (${IN_FLIGHT} in flight); a round's CPU per call is the server's CPU in its own phases plus ${SETTLE_MS} ms after the round's last call ÷ its calls (not its CPU while it waited for the others: that is the idle CPU below).`
      : `${options.rounds} rounds (--together): in each, every server of a store loaded at once for ${options.together} s (${IN_FLIGHT} calls in flight each), the stores one after the other; a round's CPU per call is the server's CPU from the window's start to ${SETTLE_MS} ms after the last call ÷ the calls it completed.`,
    `${options.processes} server process(es) per variant, started in turn; a variant's figure for a round is the mean of its processes'.`,
    ...(options.nodeFlags.length > 0 ? [`Every server ran with node ${options.nodeFlags.join(" ")}.`] : []),
    `Ratios are medians of the per-round ratios to the same store's metrics-off server. Idle CPU: each server's CPU per second over ${IDLE_MS / 1000} s with every server idle, from ${IDLE_WAIT_MS / 1000} s after the last calls (its timers), a cost per second, in the rounds' figures only for the ${SETTLE_MS} ms after each window.`,
    "",
    targetsTable(targets),
    "",
    ...sections,
  ].join("\n");
}
