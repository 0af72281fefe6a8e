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
 * Target, on each store: the median of the per-turn ratios metrics ÷ off ≤ 1.05, read only when the
 * A/A pair (off2 ÷ off, the same turns) has the 90% interval of its median within ±3% of 1.00×.
 *
 * How a round is run:
 *   - interleaved (the default): turns of 250 calls (--chunk) for every server process (2 a
 *     variant, --processes), one server at a time, until each has had 2,000 (--calls): 8 turns a
 *     round. The orders are a Williams square's rows (see turnOrder: every server in every place
 *     and after every other equally often, never twice in a row). A server's figure for a turn is its CPU (all its
 *     threads, read from /proc without waking it) from the start of its phase to the start of its
 *     next ÷ the phase's calls; the figure is the median over every turn of the run of the per-turn
 *     ratios to off, with a bootstrap 90% interval. Why (bench/README.md has the figures): the
 *     per-round medians of 16 rounds had an interval of ±5–8%, so A/A read anywhere in 0.88–1.08×;
 *     a server right after its own phase (A B C, C B A: the one at the turn) read ~5% cheaper; the
 *     CPU read over IPC woke the server inside its window.
 *   - together (--together [--seconds=S]): every server of a store loaded at once for S s (2), each
 *     by its own 32 calls in flight. Worse on the shared machine (load 6–10: A/A middle half
 *     0.69–0.99×): the servers' loops then wait on each other and on the client.
 *
 *   npm run build && npm run bench -- metrics-cost [--store=memory|sqlite|both] [--rounds=N]
 *     [--calls=N] [--chunk=N] [--together [--seconds=S]] [--no-aa] [--pieces=eld,gc,channels,defaults]
 *     [--baseline=DIR] [--reverse] [--profile] [--node-flags=--flag,...]
 * (--reverse starts and warms the servers in the reverse order: a check that the order biases nothing)
 *
 * Metrics servers are scraped at Prometheus's usual interval (15 s), between rounds; the scrape's own
 * CPU is reported apart, per call. Our server runs compiled (dist/).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { create, toBinary } from "@bufbuild/protobuf";
import { MessageSchema, Role, SendMessageRequestSchema } from "../gen/es/lf/a2a/v1/a2a_pb.js";
import { profileSummary } from "./lib/cpu-profile.js";
import { loadClient, runLoad, type LoadClient } from "./lib/load.js";
import { getClosing, getKeptAlive } from "./lib/http-get.js";
import { drive, procCpuMicros, waitUntilServing } from "./lib/measure.js";
import { freePort, startServerProcess, type ServerProcess } from "./lib/server-process.js";
import { median, percentiles } from "./lib/stats.js";
import { formatNumber, formatRatio, markdownTable, targetsTable } from "./lib/table.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SEND = "/lf.a2a.v1.A2AService/SendMessage";
const PIECES_PRELOAD = join(ROOT, "bench", "lib", "metrics-pieces.mjs");
/** Pieces that are metrics-on servers scraped differently (the others: metrics-off servers with one piece preloaded). */
const METRICS_ON_PIECES: readonly string[] = ["unscraped", "closed", "404"];
const PIECES = ["eld", "gc", "gcprofiler", "channels", "defaults", ...METRICS_ON_PIECES] as const;
const RESULTS = join(ROOT, "bench", "results");

type StoreName = "memory" | "sqlite";
const STORES: readonly StoreName[] = ["memory", "sqlite"];
/** A variant: "off", "metrics", "off2", "unscraped" (metrics on, never scraped after its first check), "closed" (metrics on, scraped on a connection closed after each scrape), "404" (metrics on, asked for another path instead), or "off+<piece>". */
type Variant = string;

const IN_FLIGHT = 32;
const WARMUP = 4_000;
const SETTLE_MS = 100;
/** How long the servers' idle CPU is read for. */
const IDLE_MS = 3_000;
/** How long after the last calls it is read from (timers a burst of calls left behind have run out). */
const IDLE_WAIT_MS = 5_000;
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
  /**
   * --fresh-every=K: every K rounds, replace every server by a fresh process (started, warmed up,
   * collected as at the start). A process keeps a level of its own for life (±6% between identical
   * ones): with 2 a variant, which processes drew a low level moved a variant's figure more than
   * the target's 5%. Fresh processes turn that level into noise the median over rounds removes.
   * 0: the same processes all run.
   */
  readonly freshEvery: number;
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
    calls: Number(value("calls") ?? 2_000),
    chunk: Number(value("chunk") ?? 250),
    together: args.includes("--together") ? Number(value("seconds") ?? 2) : undefined,
    aa: !args.includes("--no-aa"),
    pieces,
    baseline: value("baseline"),
    profile: args.includes("--profile"),
    nodeFlags: value("node-flags")?.split(",") ?? [],
    processes: Number(value("processes") ?? 2),
    reverse: args.includes("--reverse"),
    freshEvery: Number(value("fresh-every") ?? 2),
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
  readonly instance: number;
  /** The process, its client, its data and its scrape: replaced by a fresh one with --fresh-every (the figures stay). */
  server: ServerProcess;
  lc: LoadClient;
  dataDir: string | undefined;
  scrape: (() => Promise<void>) | undefined;
  /** Processes this slot has run (1 + restarts). */
  lives: number;
  /** Per round: server CPU µs per call over the round. */
  readonly perCall: number[];
  /** Per turn (every round's, in order): server CPU µs per call, the figures the ratios are taken of. */
  readonly turns: number[];
  /** CPU read from /proc and by the server's process.cpuUsage() at the first and the last round's start and end. */
  readonly cpuCheck: { proc: number[]; usage: number[] };
  readonly rates: number[];
  readonly scrapeMicros: number[];
  /** When it was last scraped (performance.now()). */
  lastScrapeAt: number;
  /** CPU µs per second while idle. */
  idleMicrosPerS: number;
}

async function startOne(store: StoreName, variant: Variant, instance: number, baseline: string | undefined, nodeFlags: readonly string[]): Promise<Served> {
  const metricsPort = variant === "metrics" || variant === "before" || METRICS_ON_PIECES.includes(variant) ? await freePort() : undefined;
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
    const notFound = `http://127.0.0.1:${metricsPort}/nothing`;
    let first = true;
    scrape = async () => {
      // "404": after its first check, a request that the listener answers without the metrics.
      if (variant === "404" && !first) return void (await getKeptAlive(notFound));
      first = false;
      const { ok, text } = variant === "closed" ? await getClosing(url) : await getKeptAlive(url);
      if (!ok || !text.includes("rpc_server_call_duration_seconds_count")) throw new Error(`${name}: no RPC metrics at ${url}`);
    };
    await scrape();
  }
  return {
    store,
    variant,
    instance,
    lives: 1,
    server,
    lc,
    dataDir,
    scrape,
    perCall: [],
    turns: [],
    cpuCheck: { proc: [], usage: [] },
    rates: [],
    scrapeMicros: [],
    lastScrapeAt: performance.now(),
    idleMicrosPerS: Number.NaN,
  };
}

/** The server of another build: DIR a built checkout (DIR/dist/src/main.js) or its dist directory (DIR/src/main.js). */
function baselineMain(dir: string): string {
  for (const main of [join(dir, "dist/src/main.js"), join(dir, "src/main.js")]) if (existsSync(main)) return main;
  throw new Error(`--baseline=${dir}: neither ${dir}/dist/src/main.js nor ${dir}/src/main.js exists (build it first)`);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Load = { readonly path: string; readonly request: Buffer; readonly inFlight: number };

/**
 * A server's CPU so far, µs, all its threads (the export's and V8's helpers count), read by this
 * process from /proc/<pid>/task/<tid>/schedstat (ns, as the scheduler accounts it): reading it does
 * not wake the server, unlike asking it over IPC (its reply costs it a turn of its loop and a heap
 * statistics object per read, inside the window). Where /proc cannot be read: the server's own
 * process.cpuUsage() over IPC.
 */
async function serverCpu(s: Served): Promise<number> {
  const micros = procCpuMicros(s.server.pid);
  if (micros !== undefined) return micros;
  const usage = await s.server.usage();
  return usage.cpu.user + usage.cpu.system;
}

/** /proc ÷ cpuUsage over the (start, end) pairs of reads: one pair per process a slot ran. */
function cpuReadRatio(check: { proc: readonly number[]; usage: readonly number[] }): number {
  let proc = 0;
  let usage = 0;
  for (let i = 0; i + 1 < check.proc.length; i += 2) {
    proc += check.proc[i + 1]! - check.proc[i]!;
    usage += check.usage[i + 1]! - check.usage[i]!;
  }
  return usage > 0 ? proc / usage : Number.NaN;
}

/** Reads each server's CPU both ways (/proc and its own process.cpuUsage()): the report compares what they saw over the rounds. */
async function checkCpuReads(served: readonly Served[]): Promise<void> {
  for (const s of served) {
    const usage = await s.server.usage();
    s.cpuCheck.usage.push(usage.cpu.user + usage.cpu.system);
    s.cpuCheck.proc.push(await serverCpu(s));
  }
}

/**
 * The order of `n` servers in each turn: the rows of a Williams square (the base order 0, 1, n−1, 2,
 * n−2, ... shifted by one per row; for odd n also the rows reversed), turn after turn. Every server
 * takes every place equally often (the same mean time), follows every other server equally often,
 * and never runs twice in a row (for n ≤ 3: the list rotated a place a turn, which does the same).
 * Why it matters, on the shared 2-core machine (load 3–8):
 *   - after the order and its reverse (A B C, C B A), the server at the turn ran twice in a row, and a
 *     phase right after the same server's own read ~5% cheaper than one after another's (2 metrics-off
 *     servers, 150 turns of 250 calls: 0.975 against 1.025 of the turn's mean);
 *   - with the list rotated a place a turn, each server nearly always followed the same one, and
 *     the A/A pair read 0.96× (90% interval 0.94–0.99×, both stores, every process of off2 cheaper
 *     than both of off: off2 always followed a metrics server, off an off2).
 */
export function turnOrder(n: number, turn: number): number[] {
  if (n <= 3) return Array.from({ length: n }, (_, k) => (k + turn) % n);
  const base = [0];
  for (let k = 1; base.length < n; k++) {
    base.push(k);
    if (base.length < n) base.push(n - k);
  }
  const rows = n % 2 === 0 ? n : 2 * n;
  const row = turn % rows;
  const order = base.map((b) => (b + row) % n);
  return row < n ? order : order.reverse();
}

/** `items` rotated by `by` places (the stores' order, round by round). */
function rotated<T>(items: readonly T[], by: number): T[] {
  return items.map((_, k) => items[(k + by) % items.length]!);
}

/**
 * One server at a time, in phases of `chunk` calls, the servers taking turns (in the orders
 * of turnOrder) until each has had `calls`. A server's figure for a turn is its CPU from the
 * start of its phase to the start of its next one (to SETTLE_MS after the round's last call for
 * the round's last turn) ÷ the phase's calls: what the calls left to do after their answers (a
 * concurrent GC's threads, a commit, a timer) counts for them; the idle CPU between phases (its
 * timers, under 100 µs/s read from /proc) adds under 0.1% at this length of a turn. `firstTurn` carries the orders
 * on across rounds.
 */
async function interleavedRound(group: readonly Served[], load: Load, calls: number, chunk: number, firstTurn: number): Promise<number> {
  const turns = Math.ceil(calls / chunk);
  const startedAt = group.map(() => [] as number[]);
  const done = group.map(() => [] as number[]);
  const elapsed = group.map(() => 0);
  for (let t = 0; t < turns; t++) {
    const phaseCalls = Math.min(chunk, calls - t * chunk);
    for (const i of turnOrder(group.length, firstTurn + t)) {
      const s = group[i]!;
      startedAt[i]!.push(await serverCpu(s));
      const result = await runLoad(s.lc, { ...load, calls: phaseCalls });
      if (result.errors > 0) throw new Error(`${s.variant}: ${result.errors} of ${result.calls} calls failed, first: ${result.firstError}`);
      done[i]!.push(result.calls);
      elapsed[i]! += result.elapsedMs;
    }
  }
  await sleep(SETTLE_MS);
  const endedAt = await Promise.all(group.map((s) => serverCpu(s)));
  group.forEach((s, i) => {
    const reads = [...startedAt[i]!, endedAt[i]!];
    const perTurn = done[i]!.map((n, t) => (reads[t + 1]! - reads[t]!) / n);
    s.turns.push(...perTurn);
    const total = done[i]!.reduce((a, b) => a + b, 0);
    s.perCall.push((endedAt[i]! - reads[0]!) / total);
    s.rates.push((total * 1000) / elapsed[i]!);
  });
  for (const s of group) await scrapeIfDue(s);
  return firstTurn + turns;
}

/**
 * Every server of `group` loaded at once for `seconds`: each keeps its own calls in flight until the
 * window's end (then its last calls finish), and its CPU from the window's start to SETTLE_MS after
 * the last server's last call ÷ the calls it completed is its figure for the round.
 */
async function togetherRound(group: readonly Served[], load: Load, seconds: number): Promise<void> {
  const starts = await Promise.all(group.map((s) => serverCpu(s)));
  const results = await Promise.all(group.map((s) => runLoad(s.lc, { ...load, calls: 1_000_000, maxSeconds: seconds })));
  await sleep(SETTLE_MS);
  const ends = await Promise.all(group.map((s) => serverCpu(s)));
  group.forEach((s, i) => {
    const result = results[i]!;
    if (result.errors > 0) throw new Error(`${s.variant}: ${result.errors} of ${result.calls} calls failed, first: ${result.firstError}`);
    s.perCall.push((ends[i]! - starts[i]!) / result.calls);
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
  if (s.scrape === undefined || s.variant === "unscraped" || performance.now() - s.lastScrapeAt < SCRAPE_EVERY_S * 1000) return;
  const before = await serverCpu(s);
  await s.scrape();
  s.lastScrapeAt = performance.now();
  await sleep(SETTLE_MS);
  s.scrapeMicros.push((await serverCpu(s)) - before);
}

/**
 * Warm-up, a forced full collection, a scrape of each metrics server, then half the warm-up again:
 * as every process starts its measured life. The scrape: the first scrape of a warm server throws
 * away ~16 of its compiled functions once (V8 "code dependencies", `bench/http-after.ts`: none at
 * the second), which a long-lived server pays once in its life; with fresh processes every few
 * rounds it would land in every process's first measured minute.
 */
async function warmUp(served: readonly Served[], load: Load): Promise<void> {
  for (const s of served) await drive(s.server, s.lc, load, WARMUP);
  for (const s of served) await s.server.usageAfterGc();
  for (const s of served) {
    if (s.scrape === undefined || s.variant === "unscraped") continue;
    await s.scrape();
    s.lastScrapeAt = performance.now();
  }
  for (const s of served) await drive(s.server, s.lc, load, WARMUP / 2);
}

/** Stops a slot's process and starts a fresh one of the same store and variant in its place; its figures stay. */
async function replaceProcess(s: Served, options: MetricsCostOptions): Promise<void> {
  s.lc.close();
  await s.server.stop();
  if (s.dataDir !== undefined) rmSync(s.dataDir, { recursive: true, force: true });
  const fresh = await startOne(s.store, s.variant, s.instance, options.baseline, options.nodeFlags);
  s.server = fresh.server;
  s.lc = fresh.lc;
  s.dataDir = fresh.dataDir;
  s.scrape = fresh.scrape;
  s.lastScrapeAt = fresh.lastScrapeAt;
  s.lives++;
}

export async function runMetricsCost(options: MetricsCostOptions): Promise<string> {
  const log = (s: string) => process.stderr.write(`[metrics-cost] ${s}\n`);
  const startedAt = Date.now();
  const variants: Variant[] = [
    "off",
    "metrics",
    ...(options.baseline !== undefined ? ["before"] : []),
    ...(options.aa ? ["off2"] : []),
    ...options.pieces.map((p) => (METRICS_ON_PIECES.includes(p) ? p : `off+${p}`)),
  ];
  const served: Served[] = [];
  const load = { path: SEND, request: sendRequest, inFlight: IN_FLIGHT };
  /** Per store: the turn the next round starts at (turnOrder). */
  const turnOf = new Map<StoreName, number>();
  try {
    for (const store of options.stores)
      for (let instance = 0; instance < options.processes; instance++)
        for (const variant of options.reverse ? [...variants].reverse() : variants)
          served.push(await startOne(store, variant, instance, options.baseline, options.nodeFlags));
    log(`${served.length} servers up; warm-up ${WARMUP} calls each`);
    await warmUp(served, load);
    const fresh = (round: number) => options.freshEvery > 0 && round > 0 && round % options.freshEvery === 0;
    for (let round = 0; round < options.rounds; round++) {
      if (fresh(round)) {
        log(`fresh processes for round ${round + 1}`);
        for (const s of served) await replaceProcess(s, options);
        await warmUp(served, load);
      }
      log(`round ${round + 1}/${options.rounds}`);
      // Each process's CPU read both ways over its measured rounds (pairs: its first round's start, its last's end).
      if (round === 0 || fresh(round)) await checkCpuReads(served);
      for (const store of rotated(options.stores, round)) {
        // The processes in start order (the variants alternate in it); in the orders of turnOrder.
        const group = served.filter((s) => s.store === store);
        if (options.together === undefined) turnOf.set(store, await interleavedRound(group, load, options.calls, options.chunk, turnOf.get(store) ?? 0));
        else await togetherRound(group, load, options.together);
      }
      if (round === options.rounds - 1 || fresh(round + 1)) await checkCpuReads(served);
      // Each round's figures as they come, so that a run cut short still tells something.
      for (const store of options.stores) {
        const ofStore = pooled(served, store);
        const off = ofStore.find((s) => s.variant === "off")!;
        const inRound = (p: Pooled) => median(roundRatios(p, off, options)[round] ?? [p.perCall[round]! / off.perCall[round]!]);
        log(`  ${store}: ${ofStore.map((s) => `${s.variant} ${s.perCall[round]!.toFixed(1)} µs (${inRound(s).toFixed(3)})`).join(", ")}`);
      }
    }
    // What each server costs doing nothing (its timers): a cost per second, not per call, read with
    // every server idle, once what the last calls left behind (collections, compilation) is done.
    await sleep(IDLE_WAIT_MS);
    const idleFrom = await Promise.all(served.map((s) => serverCpu(s)));
    await sleep(IDLE_MS);
    const idleTo = await Promise.all(served.map((s) => serverCpu(s)));
    served.forEach((s, i) => (s.idleMicrosPerS = ((idleTo[i]! - idleFrom[i]!) * 1000) / IDLE_MS));
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

/** A variant's figures: the mean of its processes' per round and per turn (the same calls each), their rates summed. */
interface Pooled {
  readonly variant: Variant;
  readonly perCall: number[];
  readonly turns: number[];
  readonly rates: number[];
  readonly scrapeMicros: number[];
  readonly idleMicrosPerS: number;
}

const mean = (values: readonly number[]) => values.reduce((a, b) => a + b, 0) / values.length;

function pooled(served: readonly Served[], store: StoreName): Pooled[] {
  const ofStore = served.filter((s) => s.store === store);
  const variants = [...new Set(ofStore.map((s) => s.variant))];
  return variants.map((variant) => {
    const processes = ofStore.filter((s) => s.variant === variant);
    const rounds = Math.min(...processes.map((p) => p.perCall.length));
    const turns = Math.min(...processes.map((p) => p.turns.length));
    return {
      variant,
      perCall: Array.from({ length: rounds }, (_, i) => mean(processes.map((p) => p.perCall[i]!))),
      turns: Array.from({ length: turns }, (_, i) => mean(processes.map((p) => p.turns[i]!))),
      rates: Array.from({ length: rounds }, (_, i) => processes.reduce((sum, p) => sum + p.rates[i]!, 0)),
      scrapeMicros: processes.flatMap((p) => p.scrapeMicros),
      idleMicrosPerS: mean(processes.map((p) => p.idleMicrosPerS)),
    };
  });
}

/** The ratios the figures are made of: per turn, `p` ÷ off in the same turn (per round with --together, which has no turns). */
function turnRatios(p: Pooled, off: Pooled): number[] {
  if (p.turns.length === 0) return p.perCall.map((v, i) => v / off.perCall[i]!);
  return p.turns.map((v, i) => v / off.turns[i]!);
}

/** The per-turn ratios grouped by round (one per round with --together). */
function roundRatios(p: Pooled, off: Pooled, options: MetricsCostOptions): number[][] {
  const ratios = turnRatios(p, off);
  const perRound = p.turns.length === 0 ? 1 : Math.ceil(options.calls / options.chunk);
  return Array.from({ length: Math.ceil(ratios.length / perRound) }, (_, r) => ratios.slice(r * perRound, (r + 1) * perRound));
}

/**
 * A 90% interval of the median of `values` by bootstrap (resampling them 2,000 times, a fixed seed:
 * the same data give the same interval): how far the median could have read with other turns of
 * the same machine, which is what says whether a figure can be read against a 5% line.
 */
function medianInterval(values: readonly number[]): [number, number] {
  let seed = 0x9e3779b9;
  const random = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const medians = Array.from({ length: 2_000 }, () => median(Array.from(values, () => values[Math.floor(random() * values.length)]!)));
  const [lo, hi] = percentiles(Float64Array.from(medians), [5, 95]);
  return [lo!, hi!];
}

function spread(ratios: readonly number[]): string {
  const [p25, p75] = percentiles(Float64Array.from(ratios), [25, 75]);
  const [lo, hi] = medianInterval(ratios);
  return `${formatRatio(median(ratios))} (90% interval ${formatRatio(lo)}–${formatRatio(hi)}; p25–p75 ${formatRatio(p25)}–${formatRatio(p75)}; n ${ratios.length})`;
}

/** Within ±3% of 1.00×, its whole 90% interval: the run can tell 5% apart. */
function aaHolds(ratios: readonly number[]): boolean {
  const [lo, hi] = medianInterval(ratios);
  return lo >= 0.97 && hi <= 1.03;
}

/** The A/B figure beside the A/A one, and whether the A/A pair lets the run read the A/B against 5%. */
function aaSentence(ab: readonly number[], aa: readonly number[]): string {
  const holds = aaHolds(aa);
  return `A/B metrics ÷ off ${spread(ab)} beside A/A off2 ÷ off ${spread(aa)}, same turns; the A/A pair ${holds ? "holds" : "does not hold"} within ±3% (90% interval), so the A/B figure ${holds ? "can" : "cannot"} be read against 5%.`;
}

function report(options: MetricsCostOptions, served: readonly Served[], elapsedS: number): string {
  const targets: Parameters<typeof targetsTable>[0][number][] = [];
  const sections: string[] = [];
  for (const store of options.stores) {
    const ofStore = pooled(served, store);
    const off = ofStore.find((s) => s.variant === "off")!;
    const metrics = ofStore.find((s) => s.variant === "metrics")!;
    const metricsRatio = median(turnRatios(metrics, off));
    const aa = ofStore.find((s) => s.variant === "off2");
    // The A/A figure first: how far two identical servers read apart with this method, this run.
    if (aa !== undefined) {
      const [lo, hi] = medianInterval(turnRatios(aa, off));
      targets.push({
        what: `${store}: A/A, metrics off ÷ off, 90% interval of the median (the method's resolution)`,
        actual: Math.max(1 - lo, hi - 1),
        op: "<=",
        limit: 0.03,
        format: (v) => (v === 0.03 ? "±3%" : `±${formatNumber(v * 100, 1)}% (${formatRatio(lo)}–${formatRatio(hi)})`),
      });
    }
    targets.push({ what: `${store}: server CPU per call, metrics on ÷ off`, actual: metricsRatio, op: "<=", limit: 1.05, format: formatRatio });
    const total = (p: Pooled) => (p.turns.length > 0 ? mean(p.turns) : mean(p.perCall));
    const rows = ofStore.map((s) => [
      s.variant,
      formatNumber(median(s.turns.length > 0 ? s.turns : s.perCall), 1),
      s === off ? "1.00×" : spread(turnRatios(s, off)),
      s === off ? "" : formatRatio(total(s) / total(off)),
      s === off
        ? ""
        : formatNumber(median((s.turns.length > 0 ? s.turns : s.perCall).map((v, i) => v - (off.turns.length > 0 ? off.turns : off.perCall)[i]!)), 2),
      formatNumber(median(s.rates)),
      formatNumber(s.idleMicrosPerS),
    ]);
    const scrapeMs = metrics.scrapeMicros.length > 0 ? median(metrics.scrapeMicros) / 1000 : undefined;
    // A server busy on one core spends 15 s × 1e6 µs on calls between two scrapes: the scrape's share of that.
    const scrapeShare = scrapeMs === undefined ? undefined : (scrapeMs * 1000) / (SCRAPE_EVERY_S * 1e6);
    const perRound = (p: Pooled) => roundRatios(p, off, options).map((r) => median(r));
    sections.push(
      `## ${store} store`,
      "",
      markdownTable(
        [
          "",
          "server CPU µs/call (median turn)",
          "÷ off: median of per-turn ratios",
          "÷ off: run's totals",
          "− off, µs/call (median)",
          "calls/s",
          "idle CPU µs/s",
        ],
        rows,
      ),
      "",
      ...(aa === undefined ? [] : [aaSentence(turnRatios(metrics, off), turnRatios(aa, off)), ""]),
      ...(scrapeMs === undefined || scrapeShare === undefined
        ? []
        : [
            `A scrape of /metrics (every ${SCRAPE_EVERY_S} s of the run, between rounds) cost ${formatNumber(scrapeMs, 2)} ms of server CPU with ${SETTLE_MS} ms after it (median of ${metrics.scrapeMicros.length}): for a server busy on one core, scraped every ${SCRAPE_EVERY_S} s, that adds ${formatNumber(scrapeShare * 100, 3)}% to its calls' CPU (metrics on ÷ off with it: ${formatRatio(metricsRatio + scrapeShare)}); not in the ratios above.`,
            "",
          ]),
      "Per round: µs per call over the round, and (in brackets) the median of the round's per-turn ratios to off:",
      "",
      markdownTable(
        ["round", ...ofStore.map((s) => s.variant)],
        off.perCall.map((_, i) => [
          String(i + 1),
          ...ofStore.map((s) => `${formatNumber(s.perCall[i], 1)}${s === off ? "" : ` (${formatRatio(perRound(s)[i]!)})`}`),
        ]),
      ),
      "",
      `Per process slot (with --fresh-every, each slot ran ${options.freshEvery > 0 ? "a fresh process every " + options.freshEvery + " rounds" : "one process"}): median µs per call over the turns (what one process's own bias would be), and the CPU read from /proc ÷ the processes' own process.cpuUsage() over their rounds:`,
      "",
      markdownTable(
        ["process", "processes", "µs/call", "/proc ÷ cpuUsage"],
        served
          .filter((s) => s.store === store)
          .map((s) => [
            s.server.name,
            String(s.lives),
            formatNumber(median(s.turns.length > 0 ? s.turns : s.perCall), 1),
            formatNumber(cpuReadRatio(s.cpuCheck), 3),
          ]),
      ),
      "",
    );
  }
  const turnsPerRound = Math.ceil(options.calls / options.chunk);
  return [
    `# Metrics cost (blocking SendMessage, ${IN_FLIGHT} in flight)`,
    "",
    `${new Date().toISOString()}; ${cpus().length} cores (${cpus()[0]?.model ?? "?"}), load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")} at the end; ${elapsedS.toFixed(0)} s in all.`,
    options.together === undefined
      ? `${options.rounds} rounds of ${turnsPerRound} turns; in a turn every server process had ${options.chunk} calls (${IN_FLIGHT} in flight), one server at a time, in the orders of a Williams square (every server in every place, after every other, equally often; never twice in a row); a server's figure for a turn is its CPU (all threads, from /proc) from the start of its phase to the start of its next (to ${SETTLE_MS} ms after the round's last call) ÷ the phase's calls.`
      : `${options.rounds} rounds (--together): in each, every server of a store loaded at once for ${options.together} s (${IN_FLIGHT} calls in flight each), the stores one after the other; a round's CPU per call is the server's CPU from the window's start to ${SETTLE_MS} ms after the last call ÷ the calls it completed.`,
    `${options.processes} server process(es) per variant, started in turn (the variants alternating)${options.freshEvery > 0 ? `, every one replaced by a fresh process (started, warmed up, collected) every ${options.freshEvery} rounds` : ""}; a variant's figure for a turn is the mean of its processes'.`,
    ...(options.nodeFlags.length > 0 ? [`Every server ran with node ${options.nodeFlags.join(" ")}.`] : []),
    `The figure is the median of the per-turn ratios to the same store's metrics-off server, with a 90% bootstrap interval of that median; "run's totals" is the ratio of the mean CPU per call over every turn (it counts a rare costly turn, e.g. a full GC, at its weight). Idle CPU: each server's CPU per second over ${IDLE_MS / 1000} s with every server idle, from ${IDLE_WAIT_MS / 1000} s after the last calls (its timers).`,
    "",
    targetsTable(targets),
    "",
    ...sections,
  ].join("\n");
}
