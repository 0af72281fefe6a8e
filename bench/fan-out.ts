/**
 * Fan-out benchmark (many subscribers of one task, and one long stream): our server side by side with the official @a2a-js/sdk
 * gRPC server, and a bare grpc-js streaming server, in one run. Fan-out: one task, many
 * SubscribeToTask streams (spread over subscriber processes, bench/lib/subscribers.ts), a burst
 * of artifact updates published by the agent once every subscriber is attached, read by raw
 * HTTP/2 subscribers (cheap, count and order) and by @grpc/grpc-js subscribers with the generated
 * client (what users run; every stream's artifact rebuilt and compared with the agent's); then
 * the same paced (latency without queueing); then stalled subscribers that never read while
 * events flow (server RSS against the backlog budgets). Single stream: one SendStreamingMessage
 * of 5,000 and 100,000 chunks, burst and per-turn agents, ours vs bare (and the SDK at 5,000
 * only: its cost per chunk grows with the artifact, so 100,000 would take hours), interleaved
 * rounds (bench/streaming.ts's stream()).
 *
 *   npm run bench -- fan-out [--quick] [--profile]
 *   node --import tsx bench/fan-out.ts [--quick] [--profile]
 *
 * --profile: after the measured phases, our server runs the paced phase once more (fresh task,
 * unmeasured) under the V8 CPU profiler; the report ends with where that CPU went.
 *
 * Our server runs compiled (dist/, run `npm run build` first) with the memory store and
 * bench/agents/fanout-agent.mjs; the SDK's with the same agent in bench/servers/sdk-fanout-server.ts.
 */
import { mkdirSync, existsSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Client, credentials, status, type ServiceError } from "@grpc/grpc-js";
import {
  GetTaskRequestSchema,
  MessageSchema,
  Role,
  SendMessageConfigurationSchema,
  SendMessageRequestSchema,
  SendMessageResponseSchema,
  SubscribeToTaskRequestSchema,
} from "../gen/es/lf/a2a/v1/a2a_pb.js";
import { loadClient, type LoadClient } from "./lib/load.js";
import { waitUntilServing } from "./lib/measure.js";
import { cpuMicros, startServerProcess, type ServerProcess, type Usage } from "./lib/server-process.js";
import { profileSummary } from "./lib/cpu-profile.js";
import { percentiles } from "./lib/stats.js";
import { openSubscribers, type SubscribersResult } from "./lib/subscribers.js";
import { comparisonTable, formatNumber, markdownTable, targetsTable, type Target } from "./lib/table.js";
import { stream as singleStream, type Pace, type Run as SingleRun } from "./streaming.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const RESULTS = join(ROOT, "bench", "results");
const SEND = "/lf.a2a.v1.A2AService/SendMessage";
const GET = "/lf.a2a.v1.A2AService/GetTask";
const SUBSCRIBE = "/lf.a2a.v1.A2AService/SubscribeToTask";
const A2A_METADATA = { "a2a-version": "1.0" };

export interface FanOutOptions {
  readonly quick: boolean;
  readonly smoke?: boolean;
  readonly profile?: boolean;
  /** The single-stream phase alone (`--single`): ours, bare and the SDK, with its targets; about 2.5 minutes. */
  readonly single?: boolean;
}

const FULL = {
  subscribers: 500,
  processes: 2,
  connectionsPerProcess: 10,
  events: 1_000,
  warmupSubscribers: 100,
  warmupEvents: 300,
  pacedEvents: 500,
  pacedIntervalMs: 10,
  stalled: 100,
  stalledLive: 10,
  stalledEvents: 1_000,
  stalledPadBytes: 2_048,
  /** One update per ms, ~2 MB/s per stream: what a reading client keeps up with. */
  stalledIntervalMs: 1,
  bufferEvents: 256,
  /** Our server's backlog budgets (A-32): per stream and across streams. 100 stalled × 1 MiB passes the global one. */
  streamBacklogBytes: 1024 * 1024,
  streamsBacklogBytes: 64 * 1024 * 1024,
  /** Single stream: sizes and interleaved rounds. */
  single: [
    { n: 5_000, rounds: 5 },
    { n: 100_000, rounds: 2 },
  ],
  /** The SDK takes part in every round of this size (the first of `single`)... */
  sdkWith: 5_000,
  /**
   * ...with a stream of this many chunks. Its CPU per chunk grows with the artifact (~12 ms per
   * chunk at 5,000 on the shared machine: a minute per stream), so the shorter runs give it fewer:
   * its cost per event at sdkSize < sdkWith is then below its cost at sdkWith, and SDK ÷ ours
   * per event is a lower bound of the ratio at sdkWith chunks.
   */
  sdkSize: 5_000,
};
const QUICK: typeof FULL = {
  ...FULL,
  subscribers: 200,
  events: 300,
  warmupSubscribers: 50,
  warmupEvents: 100,
  pacedEvents: 150,
  stalledEvents: 800,
  single: [
    { n: 5_000, rounds: 3 },
    { n: 100_000, rounds: 1 },
  ],
  sdkSize: 2_500,
};

/** A minute's check that every phase and the report run (not figures): `--smoke`. */
const SMOKE: typeof FULL = {
  ...QUICK,
  subscribers: 20,
  events: 30,
  warmupSubscribers: 10,
  warmupEvents: 10,
  pacedEvents: 20,
  stalled: 10,
  stalledLive: 2,
  stalledEvents: 100,
  single: [
    { n: 300, rounds: 2 },
    { n: 1_000, rounds: 1 },
  ],
  sdkWith: 300,
  sdkSize: 300,
};

type ServerKind = "sdk" | "ours";
const LABEL: Record<ServerKind, string> = { sdk: "@a2a-js/sdk", ours: "ours" };

/** `defaults`: ours with its default stream settings (the single-stream phase: as users run it). */
function start(kind: ServerKind, cfg: typeof FULL, defaults = false): Promise<ServerProcess> {
  if (kind === "sdk") return startServerProcess({ name: LABEL.sdk, script: join(ROOT, "bench/servers/sdk-fanout-server.ts"), tsx: true });
  const budgets = {
    A2A_STREAM_BUFFER_EVENTS: String(cfg.bufferEvents),
    A2A_STREAM_BACKLOG_BYTES: String(cfg.streamBacklogBytes),
    A2A_STREAMS_BACKLOG_BYTES: String(cfg.streamsBacklogBytes),
  };
  return startServerProcess({
    name: defaults ? `${LABEL.ours} (defaults)` : LABEL.ours,
    script: join(ROOT, "dist/src/main.js"),
    cwd: ROOT,
    // BENCH_OURS_NODE_FLAGS="--flag ...": node/V8 flags for our servers, to try what a figure depends on.
    nodeFlags: (process.env.BENCH_OURS_NODE_FLAGS ?? "").split(" ").filter(Boolean),
    env: (port) => ({
      A2A_LISTEN: `127.0.0.1:${port}`,
      A2A_LOG_LEVEL: "warn",
      A2A_LOG_FORMAT: "json",
      A2A_STORE: "memory",
      A2A_CARD_LISTEN: "off",
      A2A_AGENT_MODULE: "bench/agents/fanout-agent.mjs",
      // A 100,000-chunk artifact is ~4 MB: over the task size limit that the default 4 MiB message size gives (A-34).
      ...(defaults ? { A2A_MAX_MESSAGE_BYTES: String(16 * 1024 * 1024) } : budgets),
    }),
  });
}

/** A new task whose agent waits for "go": SendMessage that returns at once with the task. */
async function createTask(lc: LoadClient): Promise<string> {
  const request = create(SendMessageRequestSchema, {
    message: create(MessageSchema, {
      messageId: `fanout-${Date.now()}-${Math.random()}`,
      role: Role.USER,
      parts: [{ content: { case: "text", value: "stream" } }],
    }),
    configuration: create(SendMessageConfigurationSchema, { returnImmediately: true }),
  });
  const res = fromBinary(SendMessageResponseSchema, await lc.call(SEND, Buffer.from(toBinary(SendMessageRequestSchema, request))));
  if (res.payload.case !== "task") throw new Error("SendMessage did not answer with a task");
  return res.payload.value.id;
}

interface Go {
  readonly events: number;
  readonly intervalMs: number;
  /** An event-loop turn after each update. */
  readonly yieldEach?: boolean;
  readonly padBytes: number;
  readonly replace: boolean;
  /** The agent hashes the texts it writes (the grpc-js subscribers' content check). */
  readonly hash?: boolean;
}

interface Published {
  readonly publishMs: number;
  /** What the agent's artifact holds when done, hashed as the grpc-js subscribers hash what they rebuilt. */
  readonly contentSha256: string;
}

interface Served {
  readonly server: ServerProcess;
  readonly lc: LoadClient;
  /** Resolves once the agent has completed `taskId`. */
  published(taskId: string): Promise<Published>;
}

async function serve(kind: ServerKind, cfg: typeof FULL): Promise<Served> {
  const server = await start(kind, cfg);
  const done = new Map<string, Published>();
  const waiters = new Map<string, (p: Published) => void>();
  server.onMessage((m) => {
    const msg = m as { bench?: string; taskId: string } & Published;
    if (msg?.bench !== "fanout-published") return;
    const p = { publishMs: msg.publishMs, contentSha256: msg.contentSha256 };
    done.set(msg.taskId, p);
    waiters.get(msg.taskId)?.(p);
  });
  const lc = loadClient(server.address, A2A_METADATA);
  const probe = Buffer.from(toBinary(GetTaskRequestSchema, create(GetTaskRequestSchema, { id: "no-such-task" })));
  await waitUntilServing(server, async () => {
    try {
      await lc.call(GET, probe);
    } catch (e) {
      if ((e as ServiceError).code === status.UNAVAILABLE) throw e; // not listening yet; any other answer is an answer
    }
  });
  return {
    server,
    lc,
    published: (taskId) => (done.has(taskId) ? Promise.resolve(done.get(taskId)!) : new Promise((resolve) => waiters.set(taskId, resolve))),
  };
}

interface FanoutRun {
  readonly result: SubscribersResult;
  /** Events the subscribers received after "go" (every one but the snapshots). */
  readonly delivered: number;
  readonly serverCpuMicros: number;
  readonly wallMs: number;
  readonly publishMs: number;
  /** Streams whose rebuilt artifact is exactly the agent's (grpc-js subscribers only). */
  readonly contentMatched: number | undefined;
}

/** Hooks around the measured window, from just before "go" until every stream ended (the profiler). */
interface Window {
  open(): Promise<void>;
  close(): Promise<void>;
}

/** One task, `subscribers` streams attached, then "go": measured from go until every stream ended. */
async function fanout(s: Served, cfg: typeof FULL, subscribers: number, go: Go, window?: Window, client: "raw" | "grpc-js" = "raw"): Promise<FanoutRun> {
  const taskId = await createTask(s.lc);
  const request = Buffer.from(toBinary(SubscribeToTaskRequestSchema, create(SubscribeToTaskRequestSchema, { id: taskId })));
  const subs = await openSubscribers({
    address: s.server.address,
    path: SUBSCRIBE,
    request,
    metadata: A2A_METADATA,
    subscribers,
    processes: cfg.processes,
    connectionsPerProcess: cfg.connectionsPerProcess,
    expectArtifacts: go.events,
    client,
  });
  try {
    await window?.open();
    const before = await s.server.usage();
    const goAt = performance.timeOrigin + performance.now();
    s.server.send({ bench: "fanout-go", taskId, ...go, hash: client === "grpc-js" });
    const result = await subs.done();
    const after = await s.server.usage();
    await window?.close();
    const published = await s.published(taskId);
    return {
      result,
      delivered: result.events - subscribers,
      serverCpuMicros: cpuMicros(before, after),
      wallMs: result.lastReceiveAt - goAt,
      publishMs: published.publishMs,
      contentMatched: client === "grpc-js" ? (result.contentHashes[published.contentSha256] ?? 0) : undefined,
    };
  } finally {
    subs.kill();
  }
}

interface StalledRun {
  readonly before: Usage;
  readonly peakRss: number;
  readonly afterFlow: Usage;
  readonly afterGc: Usage;
  readonly live: SubscribersResult;
  readonly stalled: SubscribersResult;
  readonly publishMs: number;
}

/** Stalled subscribers (never read while events flow) next to a few live ones; RSS sampled during the flow. */
async function stalledRun(s: Served, cfg: typeof FULL): Promise<StalledRun> {
  const taskId = await createTask(s.lc);
  const request = Buffer.from(toBinary(SubscribeToTaskRequestSchema, create(SubscribeToTaskRequestSchema, { id: taskId })));
  const common = { address: s.server.address, path: SUBSCRIBE, request, metadata: A2A_METADATA, expectArtifacts: cfg.stalledEvents };
  // Stalled streams get connections of their own: a full HTTP/2 connection window would stall the live ones too.
  const stalled = await openSubscribers({ ...common, subscribers: cfg.stalled, processes: 1, connectionsPerProcess: 10, stall: true });
  const live = await openSubscribers({ ...common, subscribers: cfg.stalledLive, processes: 1, connectionsPerProcess: cfg.stalledLive });
  try {
    const before = await s.server.usageAfterGc();
    let peakRss = before.mem.rss;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        peakRss = Math.max(peakRss, (await s.server.usage()).mem.rss);
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    s.server.send({ bench: "fanout-go", taskId, events: cfg.stalledEvents, intervalMs: cfg.stalledIntervalMs, padBytes: cfg.stalledPadBytes, replace: false });
    const liveResult = await live.done();
    const { publishMs } = await s.published(taskId);
    sampling = false;
    await sampler;
    const afterFlow = await s.server.usage();
    peakRss = Math.max(peakRss, afterFlow.mem.rss);
    const afterGc = await s.server.usageAfterGc();
    stalled.resume();
    const stalledResult = await stalled.done();
    return { before, peakRss, afterFlow, afterGc, live: liveResult, stalled: stalledResult, publishMs };
  } finally {
    stalled.kill();
    live.kill();
  }
}

interface ServerResult {
  readonly kind: ServerKind;
  readonly burst: FanoutRun;
  /** The burst again, read by grpc-js subscribers. */
  readonly burstGrpc: FanoutRun;
  readonly paced: FanoutRun;
  readonly stalled: StalledRun;
  /** Summary of the profiled paced run (--profile, ours only). */
  readonly profile?: string;
}

/**
 * The paced phase once more on a fresh task, profiled from "go" until every stream ended (as
 * measured: attaching and snapshots stay out). A separate run, so the profiler's overhead stays
 * out of the measured figures.
 */
async function profiledPaced(s: Served, cfg: typeof FULL, go: Go): Promise<string> {
  const file = join(RESULTS, `fan-out-ours-paced-${Date.now()}.cpuprofile`);
  const run = await fanout(s, cfg, cfg.subscribers, go, { open: () => s.server.profileStart(), close: () => s.server.profileStop(file) });
  const checked =
    `${run.result.complete} / ${run.result.subscribers} streams complete and in order, ${formatNumber(run.delivered)} delivered events; ` +
    `server CPU ${formatNumber(run.serverCpuMicros / run.delivered, 2)} µs/event under the profiler.`;
  return `${checked}\n\n${profileSummary(file, run.delivered)}\n\nProfile: ${file}`;
}

async function runServer(s: Served, kind: ServerKind, cfg: typeof FULL, log: (s: string) => void, profile: boolean): Promise<ServerResult> {
  log(`${LABEL[kind]}: warm-up (${cfg.warmupSubscribers} subscribers × ${cfg.warmupEvents} events)`);
  await fanout(s, cfg, cfg.warmupSubscribers, { events: cfg.warmupEvents, intervalMs: 0, padBytes: 0, replace: false });
  await fanout(s, cfg, cfg.warmupSubscribers, { events: cfg.warmupEvents, intervalMs: 0, padBytes: 0, replace: false }, undefined, "grpc-js");
  const burstGo: Go = { events: cfg.events, intervalMs: 0, padBytes: 0, replace: false };
  log(`${LABEL[kind]}: burst (${cfg.subscribers} raw HTTP/2 subscribers × ${cfg.events} events)`);
  const burst = await fanout(s, cfg, cfg.subscribers, burstGo);
  log(`${LABEL[kind]}: burst (${cfg.subscribers} grpc-js subscribers × ${cfg.events} events)`);
  const burstGrpc = await fanout(s, cfg, cfg.subscribers, burstGo, undefined, "grpc-js");
  log(`${LABEL[kind]}: paced (${cfg.subscribers} subscribers × ${cfg.pacedEvents} events, one per ${cfg.pacedIntervalMs} ms)`);
  const pacedGo: Go = { events: cfg.pacedEvents, intervalMs: cfg.pacedIntervalMs, padBytes: 0, replace: false };
  const paced = await fanout(s, cfg, cfg.subscribers, pacedGo);
  log(`${LABEL[kind]}: ${cfg.stalled} stalled + ${cfg.stalledLive} live subscribers × ${cfg.stalledEvents} appends of ${cfg.stalledPadBytes} B`);
  const stalled = await stalledRun(s, cfg);
  let summary: string | undefined;
  if (profile) {
    log(`${LABEL[kind]}: paced again under the CPU profiler (unmeasured)`);
    summary = await profiledPaced(s, cfg, pacedGo);
  }
  return { kind, burst, burstGrpc, paced, stalled, profile: summary };
}

type SingleKind = "bare" | "ours" | "sdk";
interface SingleRow {
  /** The round's size (the SDK's rounds are those of cfg.sdkWith)... */
  readonly n: number;
  /** ...and the chunks this stream had (the SDK: cfg.sdkSize). */
  readonly chunks: number;
  readonly pace: Pace;
  readonly kind: SingleKind;
  readonly round: number;
  readonly run: SingleRun;
}

/**
 * One SendStreamingMessage of N chunks per server, in interleaved rounds (order alternating),
 * bare and ours always next to each other; the SDK in every round of `cfg.sdkWith`, with
 * `cfg.sdkSize` chunks.
 */
async function singleStreamPhase(
  servers: Record<SingleKind, ServerProcess>,
  cfg: typeof FULL,
  log: (s: string) => void,
  profile: boolean,
): Promise<{ rows: SingleRow[]; profiles: string }> {
  const clients = Object.fromEntries(
    (Object.keys(servers) as SingleKind[]).map((k) => [
      k,
      new Client(servers[k].address, credentials.createInsecure(), { "grpc.max_receive_message_length": 64 * 1024 * 1024 }),
    ]),
  ) as Record<SingleKind, Client>;
  const rows: SingleRow[] = [];
  let profiles = "";
  try {
    for (const kind of ["bare", "ours", "sdk"] as const) {
      await waitUntilServing(servers[kind], () => singleStream(servers[kind], kind, 10, "burst", clients[kind]));
    }
    for (const { n, rounds } of cfg.single) {
      for (const pace of ["burst", "per-turn"] as const) {
        // Each server is warmed up with one unmeasured stream of this pace right before its rounds, at the first
        // measured size (the SDK: a short one). A warm-up at the start of the phase did not last: after the
        // burst rounds and the minutes of idle that the SDK's streams give the others, ours's first per-turn
        // stream recompiled ~40 functions of Node's write and timer path (seen with node's
        // --trace-opt --trace-deopt: 43 compilations, against 1 with no idle gaps).
        for (const kind of n === cfg.sdkWith ? (["bare", "ours", "sdk"] as const) : (["bare", "ours"] as const)) {
          const warm = kind === "sdk" ? Math.min(500, cfg.sdkSize) : cfg.single[0]!.n;
          await singleStream(servers[kind], kind, warm, pace, clients[kind]);
        }
        for (let round = 0; round < rounds; round++) {
          // Bare and ours back to back, their order alternating; the SDK after them (its long stream, and the
          // collection of its garbage after it, disturbed whichever server came next: both read up to 3× higher).
          const pair: SingleKind[] = round % 2 === 0 ? ["bare", "ours"] : ["ours", "bare"];
          const order: SingleKind[] = n === cfg.sdkWith ? [...pair, "sdk"] : pair;
          for (const kind of order) {
            const chunks = kind === "sdk" ? cfg.sdkSize : n;
            const run = await singleStream(servers[kind], kind, chunks, pace, clients[kind]);
            rows.push({ n, chunks, pace, kind, round, run });
            // The SDK's stream leaves it a heap of garbage that its collector would clear while the next server is measured.
            if (kind === "sdk") {
              await servers.sdk.usageAfterGc();
              await new Promise((resolve) => setTimeout(resolve, 1_000));
            }
            log(
              `single stream ${kind} n=${chunks} ${pace} round ${round + 1}: ${formatNumber(run.cpuMicros / chunks, 2)} µs/event, ${run.responses} responses, ${run.chunks} chunks${run.inOrder ? "" : " OUT OF ORDER"}`,
            );
          }
        }
      }
    }
    if (profile) {
      for (const pace of ["burst", "per-turn"] as const) {
        const file = join(RESULTS, `fan-out-single-ours-${pace}-${Date.now()}.cpuprofile`);
        await servers.ours.profileStart();
        await singleStream(servers.ours, "ours", 5_000, pace, clients.ours);
        await servers.ours.profileStop(file);
        profiles += `\n\n### Profile: ours, one stream of 5,000 chunks, ${pace} (unmeasured run; "µs/call" is per agent event)\n\n${profileSummary(file, 5_000, 15)}\n\nProfile: ${file}`;
      }
    }
    return { rows, profiles };
  } finally {
    for (const c of Object.values(clients)) c.close();
  }
}

const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const perEventOf = (r: SingleRow) => r.run.cpuMicros / r.chunks;

/** Median of the per-round ratios of CPU per event, `kind` ÷ `base` at (n, pace), the rounds' ratios, and their spread. */
function singleRatio(
  rows: readonly SingleRow[],
  n: number,
  pace: Pace,
  kind: SingleKind,
  base: SingleKind,
): { median: number; rounds: number[]; min: number; max: number } {
  const of = (k: SingleKind) => rows.filter((r) => r.n === n && r.pace === pace && r.kind === k);
  const a = of(kind);
  const b = of(base);
  const byRound = a.flatMap((r) => {
    const other = b.find((x) => x.round === r.round);
    return other === undefined ? [] : [perEventOf(r) / perEventOf(other)];
  });
  return { median: byRound.length > 0 ? median(byRound) : NaN, rounds: byRound, min: Math.min(...byRound), max: Math.max(...byRound) };
}

const MB = (b: number) => formatNumber(b / 1024 / 1024, 1);
const pct = (r: SubscribersResult, p: number) => percentiles(r.latenciesMs, [p])[0]!;
const codes = (r: SubscribersResult) =>
  Object.entries(r.codes)
    .map(([k, v]) => `${v} ${k}`)
    .join(", ");

/** The single-stream table and what it means. */
function singleSection(rows: readonly SingleRow[], cfg: typeof FULL): string {
  const singleRows: string[][] = [];
  for (const { n } of cfg.single) {
    for (const pace of ["burst", "per-turn"] as const) {
      for (const kind of ["bare", "ours", "sdk"] as const) {
        const runs = rows.filter((r) => r.n === n && r.pace === pace && r.kind === kind);
        if (runs.length === 0) continue;
        const vsBare = kind === "bare" ? undefined : singleRatio(rows, n, pace, kind, "bare");
        singleRows.push([
          formatNumber(runs[0]!.chunks),
          pace,
          kind === "sdk" ? LABEL.sdk : kind,
          formatNumber(median(runs.map(perEventOf)), 2),
          vsBare === undefined ? "1" : `${vsBare.median.toFixed(2)}× (${vsBare.rounds.map((x) => x.toFixed(2)).join(", ")})`,
          formatNumber(median(runs.map((r) => r.run.responses))),
          runs.every((r) => r.run.chunks === r.chunks && r.run.inOrder) ? "yes" : "NO",
          kind === "bare" ? "" : formatNumber(median(runs.map((r) => r.run.firstChunkMs ?? NaN)), 2),
        ]);
      }
    }
  }
  const table = markdownTable(
    [
      "N",
      "pace",
      "server",
      "server CPU µs / agent event (median)",
      "÷ bare, per round (median; rounds)",
      "responses on the wire (median)",
      "every chunk, in order",
      "first chunk ms",
    ],
    singleRows,
  );
  const large = cfg.single[cfg.single.length - 1]!.n;
  return [
    `### Single stream: one SendStreamingMessage of N chunks appended to one artifact, read by a grpc-js client; ours vs bare grpc-js (bench/servers/bare-stream-server.ts) vs the SDK (${formatNumber(cfg.sdkSize)} chunks, in every round of ${formatNumber(cfg.sdkWith)})`,
    "",
    table,
    "",
    `Interleaved rounds, the order alternating; ratios of CPU per event, per round. CPU: user + system of the server from the task snapshot (ours, the SDK) or the call (bare) until the stream ended, ÷ its chunks. ` +
      `burst: the agent writes as fast as the server takes it; per-turn: an event-loop turn after each chunk. The client keeps every response's bytes while the stream flows and decodes and checks them after the server's CPU was read (a client that keeps up: "responses" = chunks + 2 means no merging, A-32). First chunk ms: receive time − the agent's write of chunk 0. ` +
      `The SDK's CPU per chunk grows with the artifact (about a minute of CPU for one ${formatNumber(5_000)}-chunk stream; ${formatNumber(large)} would take hours)` +
      (cfg.sdkSize < cfg.sdkWith
        ? `, so it streams ${formatNumber(cfg.sdkSize)} chunks in each round of ${formatNumber(cfg.sdkWith)}: its cost per event there is below its cost at ${formatNumber(cfg.sdkWith)}, and SDK ÷ ours per event is a lower bound of the ratio at ${formatNumber(cfg.sdkWith)} (the full run, without --quick, gives it ${formatNumber(cfg.sdkWith)}).`
        : ".") +
      " A round's SDK ÷ ours is the SDK's CPU per event ÷ ours in the same round; the target holds when it holds in every round (the lowest is shown).",
  ].join("\n");
}

/** The single-stream targets: medians of per-round ratios (spread in the text), the SDK's in every round. */
function singleTargets(rows: readonly SingleRow[], cfg: typeof FULL): Target[] {
  const small = cfg.single[0]!.n;
  const large = cfg.single[cfg.single.length - 1]!.n;
  const vsBare = (n: number, pace: Pace) => singleRatio(rows, n, pace, "ours", "bare");
  const spread = (r: { min: number; max: number }) => ` (rounds ${r.min.toFixed(2)}–${r.max.toFixed(2)})`;
  const ratioTarget = (n: number, pace: Pace): Target => {
    const r = vsBare(n, pace);
    return {
      what: `single stream, ${formatNumber(n)} chunks, ${pace}: CPU per event ÷ bare, median of rounds${spread(r)}`,
      actual: r.median,
      op: "<=",
      limit: 2,
    };
  };
  const sdkOver = (pace: Pace) => {
    const rounds = singleRatio(rows, cfg.sdkWith, pace, "sdk", "ours").rounds;
    return rounds.length > 0 ? Math.min(...rounds) : NaN;
  };
  const sdkRounds = (pace: Pace) =>
    singleRatio(rows, cfg.sdkWith, pace, "sdk", "ours")
      .rounds.map((x) => x.toFixed(0))
      .join(", ");
  const firstChunk = median(rows.filter((r) => r.kind === "ours" && r.pace === "per-turn").map((r) => r.run.firstChunkMs ?? NaN));
  return [
    ratioTarget(small, "burst"),
    ratioTarget(small, "per-turn"),
    ratioTarget(large, "burst"),
    ratioTarget(large, "per-turn"),
    {
      what: `single stream flat: (ours ÷ bare at ${formatNumber(large)}) ÷ (ours ÷ bare at ${formatNumber(small)}), per-turn`,
      actual: vsBare(large, "per-turn").median / vsBare(small, "per-turn").median,
      op: "<=",
      limit: 1.25,
    },
    ...(["burst", "per-turn"] as const).map(
      (pace): Target => ({
        what: `single stream, ${pace}: SDK CPU per event (${formatNumber(cfg.sdkSize)} chunks) ÷ ours (${formatNumber(cfg.sdkWith)}), lowest of the rounds (${sdkRounds(pace)})`,
        actual: sdkOver(pace),
        op: ">=",
        limit: 150,
      }),
    ),
    { what: "single stream, per-turn: first chunk after the agent's write", actual: firstChunk, op: "<=", limit: 2, format: (v) => `${v.toFixed(2)} ms` },
  ];
}

/** `--single`: the single-stream phase alone, with its targets. */
async function runSingleOnly(opts: FanOutOptions, cfg: typeof FULL, log: (s: string) => void): Promise<string> {
  const startedAt = new Date();
  const load0 = loadavg()[0]!;
  const sdk = await start("sdk", cfg);
  const bare = await startServerProcess({ name: "bare", script: join(ROOT, "bench/servers/bare-stream-server.ts"), tsx: true });
  const ours = await start("ours", cfg, true);
  let single: Awaited<ReturnType<typeof singleStreamPhase>>;
  try {
    single = await singleStreamPhase({ bare, ours, sdk }, cfg, log, opts.profile ?? false);
  } finally {
    await Promise.all([sdk.stop(3_000), bare.stop(3_000), ours.stop(3_000)]);
  }
  const command = `npm run build && npm run bench -- fan-out --single${opts.quick ? " --quick" : ""}${opts.profile ? " --profile" : ""}`;
  const report = [
    `## Fan-out benchmark: single stream only${opts.quick ? " (quick)" : ""}`,
    "",
    `Reproduce: \`${command}\``,
    "",
    `${startedAt.toISOString()} · Node ${process.version} · ${cpus().length} × ${cpus()[0]?.model ?? "?"} · load average ${load0.toFixed(2)} at start, ${loadavg()[0]!.toFixed(2)} at the end · ${((Date.now() - startedAt.getTime()) / 1000).toFixed(0)} s`,
    "",
    singleSection(single.rows, cfg),
    "",
    "### Targets",
    "",
    targetsTable(singleTargets(single.rows, cfg)),
    single.profiles,
  ].join("\n");
  return report;
}

export async function runFanOut(opts: FanOutOptions): Promise<string> {
  const cfg = opts.smoke ? SMOKE : opts.quick ? QUICK : FULL;
  if (!existsSync(join(ROOT, "dist/src/main.js"))) throw new Error("dist/src/main.js is missing: run `npm run build` first");
  mkdirSync(RESULTS, { recursive: true });
  const log = (s: string) => process.stderr.write(`[fan-out] ${s}\n`);
  log(
    `single stream: ${cfg.single.map((x) => `${formatNumber(x.n)} chunks × ${x.rounds} rounds`).join(", ")}; the SDK with ${formatNumber(cfg.sdkSize)} in every round of ${formatNumber(cfg.sdkWith)}`,
  );
  if (opts.single) return runSingleOnly(opts, cfg, log);
  const startedAt = new Date();
  const load0 = loadavg()[0]!;

  // All three servers run side by side from the start (an idle server costs nothing).
  const sdkServed = await serve("sdk", cfg);
  const oursServed = await serve("ours", cfg);
  const bare = await startServerProcess({ name: "bare", script: join(ROOT, "bench/servers/bare-stream-server.ts"), tsx: true });
  // The single stream runs on ours with its default settings (the fan-out server's budgets are the stalled phase's).
  const oursSingle = await start("ours", cfg, true);
  let sdk: ServerResult;
  let ours: ServerResult;
  let single: Awaited<ReturnType<typeof singleStreamPhase>>;
  try {
    sdk = await runServer(sdkServed, "sdk", cfg, log, false);
    ours = await runServer(oursServed, "ours", cfg, log, opts.profile ?? false);
    single = await singleStreamPhase({ bare, ours: oursSingle, sdk: sdkServed.server }, cfg, log, opts.profile ?? false);
  } finally {
    sdkServed.lc.close();
    oursServed.lc.close();
    await Promise.all([sdkServed.server.stop(3_000), oursServed.server.stop(3_000), bare.stop(3_000), oursSingle.stop(3_000)]);
  }
  const rows = [sdk, ours];
  const label = (r: ServerResult) => LABEL[r.kind];
  const perEvent = (f: FanoutRun) => f.serverCpuMicros / f.delivered;
  const fanoutTable = comparisonTable(
    rows,
    label,
    [
      { header: "delivered events/s", value: (r) => (r.burst.delivered * 1000) / r.burst.wallMs, ratio: true },
      { header: "server CPU µs/event", value: (r) => perEvent(r.burst), digits: 2, ratio: true },
      { header: "server CPU s", value: (r) => r.burst.serverCpuMicros / 1e6, digits: 2 },
      { header: "go → last event s", value: (r) => r.burst.wallMs / 1000, digits: 2 },
      { header: "agent publish ms", value: (r) => r.burst.publishMs, digits: 0 },
      { header: "latency p50 ms", value: (r) => pct(r.burst.result, 50), digits: 1 },
      { header: "latency p99 ms", value: (r) => pct(r.burst.result, 99), digits: 1 },
      { header: "client CPU µs/event", value: (r) => r.burst.result.clientCpuMicros / r.burst.delivered, digits: 2 },
    ],
    [sdk],
  );
  const checkRows = rows.flatMap((r) =>
    (["burst", "paced"] as const).map((phase) => {
      const res = r[phase].result;
      return [
        label(r),
        phase,
        `${res.complete} / ${res.subscribers}`,
        String(res.outOfOrder),
        codes(res),
        `${res.artifactsMin}–${res.artifactsMax}`,
        res.firstProblem ?? "",
      ];
    }),
  );
  const checkTable = markdownTable(
    ["server", "phase", "complete and in order", "out of order", "statuses", "artifact updates per stream", "first problem"],
    checkRows,
  );
  const perChunk = (f: FanoutRun) => f.serverCpuMicros / ((f.contentMatched ?? 0) * cfg.events);
  const grpcTable = comparisonTable(
    rows,
    label,
    [
      { header: "streams whose artifact = the agent's", value: (r) => r.burstGrpc.contentMatched ?? 0, digits: 0 },
      { header: "complete, in order, COMPLETED, OK", value: (r) => r.burstGrpc.result.complete, digits: 0 },
      { header: "server CPU µs per delivered chunk", value: (r) => perChunk(r.burstGrpc), digits: 2, ratio: true },
      { header: "responses on the wire", value: (r) => r.burstGrpc.delivered, digits: 0, ratio: true },
      { header: "server CPU s", value: (r) => r.burstGrpc.serverCpuMicros / 1e6, digits: 2 },
      { header: "go → last event s", value: (r) => r.burstGrpc.wallMs / 1000, digits: 2 },
      { header: "latency p50 ms", value: (r) => pct(r.burstGrpc.result, 50), digits: 1 },
      { header: "latency p99 ms", value: (r) => pct(r.burstGrpc.result, 99), digits: 1 },
      { header: "client CPU µs per chunk", value: (r) => r.burstGrpc.result.clientCpuMicros / (cfg.subscribers * cfg.events), digits: 2 },
    ],
    [sdk],
  );
  const grpcStatuses = rows
    .map((r) => `${label(r)}: ${codes(r.burstGrpc.result)}${r.burstGrpc.result.firstProblem ? ` (first problem: ${r.burstGrpc.result.firstProblem})` : ""}`)
    .join("; ");

  const pacedTable = comparisonTable(
    rows,
    label,
    [
      { header: "latency p50 ms", value: (r) => pct(r.paced.result, 50), digits: 2, ratio: true },
      { header: "latency p99 ms", value: (r) => pct(r.paced.result, 99), digits: 2, ratio: true },
      { header: "max ms", value: (r) => pct(r.paced.result, 100), digits: 1 },
      { header: "server CPU µs/event", value: (r) => perEvent(r.paced), digits: 2, ratio: true },
      { header: "delivered events/s", value: (r) => (r.paced.delivered * 1000) / r.paced.wallMs },
      { header: "client CPU µs/event", value: (r) => r.paced.result.clientCpuMicros / r.paced.delivered, digits: 2 },
    ],
    [sdk],
  );

  const eventBytes = cfg.stalledPadBytes + 100;
  // What our server may hold for the stalled streams: their merged backlogs (each at most the
  // per-stream budget, together at most the global one), plus per stream what was written before
  // grpc-js pushed back (its 16-message queue) and one HTTP/2 stream window (64 KiB), plus the task
  // itself (the agent's artifact, all chunks) that the store keeps.
  const backlogs = Math.min(cfg.stalled * cfg.streamBacklogBytes, cfg.streamsBacklogBytes);
  const perStreamWire = 16 * eventBytes + 65_535;
  const taskBytes = cfg.stalledEvents * eventBytes;
  const bound = backlogs + cfg.stalled * perStreamWire + taskBytes;
  const unbounded = cfg.stalled * cfg.stalledEvents * eventBytes;
  const stalledRows = rows
    .map((r) => {
      const st = r.stalled;
      return [
        label(r),
        MB(st.before.mem.rss),
        MB(st.peakRss),
        MB(st.afterFlow.mem.rss),
        MB(st.afterGc.mem.rss),
        MB(st.peakRss - st.before.mem.rss),
        MB(st.afterGc.mem.heapUsed + st.afterGc.mem.external - st.before.mem.heapUsed - st.before.mem.external),
        codes(st.stalled),
        `${st.stalled.artifactsMin}–${st.stalled.artifactsMax}`,
        `${st.live.complete} / ${st.live.subscribers} (${codes(st.live)}; ${st.live.artifactsMin}–${st.live.artifactsMax} updates)`,
      ];
    })
    .map((row) => row.map(String));
  const stalledTable = markdownTable(
    [
      "server",
      "RSS before MB",
      "RSS peak MB",
      "RSS after flow MB",
      "RSS after GC MB",
      "peak growth MB",
      "heap+external growth after GC MB",
      "stalled streams ended",
      "updates each stalled stream got",
      "live streams complete (statuses)",
    ],
    stalledRows,
  );
  const o = ours.stalled;
  const targets: Target[] = [
    {
      what: `grpc-js subscribers (burst): streams whose rebuilt artifact is the agent's, every chunk in order`,
      actual: ours.burstGrpc.contentMatched ?? 0,
      op: ">=",
      limit: cfg.subscribers,
      format: (v) => formatNumber(v),
    },
    {
      what: "grpc-js subscribers (burst): server CPU per delivered chunk vs SDK",
      actual: perChunk(ours.burstGrpc) / perChunk(sdk.burstGrpc),
      op: "<=",
      limit: 0.5,
    },
    { what: "server CPU per delivered event vs SDK (burst, raw subscribers)", actual: perEvent(ours.burst) / perEvent(sdk.burst), op: "<=", limit: 0.5 },
    { what: "server CPU per delivered event vs SDK (paced)", actual: perEvent(ours.paced) / perEvent(sdk.paced), op: "<=", limit: 0.5 },
    { what: "publish-to-receive p50, paced", actual: pct(ours.paced.result, 50), op: "<", limit: 5, format: (v) => `${v.toFixed(2)} ms` },
    {
      what: "subscribers complete and in order (burst + paced)",
      actual: ours.burst.result.complete + ours.paced.result.complete,
      op: ">=",
      limit: 2 * cfg.subscribers,
      format: (v) => formatNumber(v),
    },
    {
      what: "stalled subscribers ended RESOURCE_EXHAUSTED (a budget passed)",
      actual: o.stalled.codes["RESOURCE_EXHAUSTED"] ?? 0,
      op: ">=",
      limit: cfg.stalled,
      format: (v) => formatNumber(v),
    },
    {
      what: "RSS peak growth with stalled subscribers, vs the budgets' bound",
      actual: o.peakRss - o.before.mem.rss,
      op: "<=",
      limit: bound,
      format: (v) => `${MB(v)} MB`,
    },
  ];

  const command = `npm run build && npm run bench -- fan-out${opts.smoke ? " --smoke" : opts.quick ? " --quick" : ""}${opts.profile ? " --profile" : ""}`;
  const report = [
    `## Fan-out benchmark: fan-out and single stream${opts.smoke ? " (smoke: not figures)" : opts.quick ? " (quick)" : ""}`,
    "",
    `Reproduce: \`${command}\``,
    "",
    `${startedAt.toISOString()} · Node ${process.version} · ${cpus().length} × ${cpus()[0]?.model ?? "?"} · load average ${load0.toFixed(2)} at start`,
    "",
    `### Burst: one task, ${cfg.subscribers} SubscribeToTask streams (${cfg.processes} client processes × ${cfg.connectionsPerProcess} connections), ${formatNumber(cfg.events)} artifact updates as fast as the agent can publish`,
    "",
    fanoutTable,
    "",
    `Measured from "go" (every stream attached) until every stream ended; delivered events = artifact updates + the final status, all streams. ` +
      `Server CPU is user + system time of the server process over that window. Ratios to the SDK in parentheses. ` +
      `Latency = receive time − the publish time the agent wrote into each update; in a burst it is mostly queueing behind the events published before.`,
    "",
    checkTable,
    "",
    `### Burst read by @grpc/grpc-js subscribers: ${cfg.subscribers} streams (generated client, ${cfg.processes} processes × ${cfg.connectionsPerProcess} channels), ${formatNumber(cfg.events)} chunks`,
    "",
    grpcTable,
    "",
    `Each subscriber decodes every response and rebuilds the artifact from the snapshot by applying each update (append: parts join; otherwise replaced), so a merged update counts as the updates it stands for; ` +
      `the rebuilt artifact's SHA-256 is compared with the agent's (the texts it wrote). Delivered chunks = matching streams × ${formatNumber(cfg.events)}. Statuses: ${grpcStatuses}.`,
    "",
    singleSection(single.rows, cfg),
    "",
    `### Paced: ${cfg.subscribers} streams, ${formatNumber(cfg.pacedEvents)} updates, one every ${cfg.pacedIntervalMs} ms`,
    "",
    pacedTable,
    "",
    `### ${cfg.stalled} stalled subscribers (never read while events flow) and ${cfg.stalledLive} live ones, ${formatNumber(cfg.stalledEvents)} appends of ~${formatNumber(eventBytes)} B to one artifact, one every ${cfg.stalledIntervalMs} ms (merging cannot shrink appends: a stalled stream's backlog grows until a budget ends it)`,
    "",
    stalledTable,
    "",
    `Our server: A2A_STREAM_BACKLOG_BYTES=${cfg.streamBacklogBytes} (per stream), A2A_STREAMS_BACKLOG_BYTES=${cfg.streamsBacklogBytes} (all streams), A2A_STREAM_BUFFER_EVENTS=${cfg.bufferEvents}. ` +
      `Bound: min(${cfg.stalled} × ${MB(cfg.streamBacklogBytes)} MB, ${MB(cfg.streamsBacklogBytes)} MB) of backlogs = ${MB(backlogs)} MB, + ${cfg.stalled} × (16 × ${formatNumber(eventBytes)} B grpc-js queue + 64 KiB window) = ${MB(cfg.stalled * perStreamWire)} MB, + the task ${MB(taskBytes)} MB = ${MB(bound)} MB; ` +
      `everything published, for every stalled stream: ${MB(unbounded)} MB (what a server without budgets holds). "Updates each stalled stream got" is what it read after it resumed (backlog), before its status. ` +
      `Agent publish time: SDK ${formatNumber(sdk.stalled.publishMs)} ms, ours ${formatNumber(o.publishMs)} ms.`,
    "",
    "### Targets",
    "",
    targetsTable([...targets, ...singleTargets(single.rows, cfg)]),
    ...(ours.profile
      ? [
          "",
          `### Where our server's CPU goes: paced phase (V8 CPU profile of a separate run: ${cfg.subscribers} streams × ${formatNumber(cfg.pacedEvents)} updates; "µs/call" is per delivered event)`,
          "",
          ours.profile,
        ]
      : []),
    single.profiles,
  ].join("\n");
  return report;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  runFanOut({
    quick: process.argv.includes("--quick"),
    smoke: process.argv.includes("--smoke"),
    profile: process.argv.includes("--profile"),
    single: process.argv.includes("--single"),
  }).then(
    (report) => process.stdout.write(`${report}\n`),
    (err: unknown) => {
      process.stderr.write(`${(err as Error)?.stack ?? err}\n`);
      process.exit(1);
    },
  );
}
