/**
 * Issue 4's benchmark: streaming fan-out, our server side by side with the official
 * @a2a-js/sdk gRPC server in one run. One task, many SubscribeToTask streams (spread over
 * subscriber processes, bench/lib/subscribers.ts), a burst of artifact updates published by
 * the agent once every subscriber is attached; then the same paced (latency without
 * queueing); then stalled subscribers that never read while events flow (server RSS, and
 * how the server treats them).
 *
 *   npm run bench -- issue4 [--quick] [--profile]
 *   node --import tsx bench/issue4.ts [--quick] [--profile]
 *
 * --profile: after the measured phases, our server runs the paced phase once more (fresh task,
 * unmeasured) under the V8 CPU profiler; the report ends with where that CPU went.
 *
 * Our server runs compiled (dist/, run `npm run build` first) with the memory store and
 * bench/agents/fanout-agent.mjs; the SDK's with the same agent in bench/servers/sdk-fanout-server.ts.
 */
import { mkdirSync, writeFileSync, existsSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { status, type ServiceError } from "@grpc/grpc-js";
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

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const RESULTS = join(ROOT, "bench", "results");
const SEND = "/lf.a2a.v1.A2AService/SendMessage";
const GET = "/lf.a2a.v1.A2AService/GetTask";
const SUBSCRIBE = "/lf.a2a.v1.A2AService/SubscribeToTask";
const A2A_METADATA = { "a2a-version": "1.0" };

export interface Issue4Options {
  readonly quick: boolean;
  readonly profile?: boolean;
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
  stalledEvents: 2_000,
  stalledPadBytes: 4_096,
  /** One update per ms, ~4 MB/s per stream: what a reading client keeps up with (back-to-back 4 KiB updates outrun even a reading client). */
  stalledIntervalMs: 1,
  bufferEvents: 256,
};
const QUICK: typeof FULL = {
  ...FULL,
  subscribers: 200,
  events: 300,
  warmupSubscribers: 50,
  warmupEvents: 100,
  pacedEvents: 150,
  stalledEvents: 800,
};

type ServerKind = "sdk" | "ours";
const LABEL: Record<ServerKind, string> = { sdk: "@a2a-js/sdk", ours: "ours" };

function start(kind: ServerKind, cfg: typeof FULL): Promise<ServerProcess> {
  if (kind === "sdk") return startServerProcess({ name: LABEL.sdk, script: join(ROOT, "bench/servers/sdk-fanout-server.ts"), tsx: true });
  return startServerProcess({
    name: LABEL.ours,
    script: join(ROOT, "dist/src/main.js"),
    cwd: ROOT,
    env: (port) => ({
      A2A_LISTEN: `127.0.0.1:${port}`,
      A2A_LOG_LEVEL: "warn",
      A2A_LOG_FORMAT: "json",
      A2A_STORE: "memory",
      A2A_CARD_LISTEN: "off",
      A2A_AGENT_MODULE: "bench/agents/fanout-agent.mjs",
      A2A_STREAM_BUFFER_EVENTS: String(cfg.bufferEvents),
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
}

interface Served {
  readonly server: ServerProcess;
  readonly lc: LoadClient;
  /** Resolves with the agent's publish duration (ms) once it has completed `taskId`. */
  published(taskId: string): Promise<number>;
}

async function serve(kind: ServerKind, cfg: typeof FULL): Promise<Served> {
  const server = await start(kind, cfg);
  const done = new Map<string, number>();
  const waiters = new Map<string, (ms: number) => void>();
  server.onMessage((m) => {
    const msg = m as { bench?: string; taskId: string; publishMs: number };
    if (msg?.bench !== "fanout-published") return;
    done.set(msg.taskId, msg.publishMs);
    waiters.get(msg.taskId)?.(msg.publishMs);
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
}

/** Hooks around the measured window, from just before "go" until every stream ended (the profiler). */
interface Window {
  open(): Promise<void>;
  close(): Promise<void>;
}

/** One task, `subscribers` streams attached, then "go": measured from go until every stream ended. */
async function fanout(s: Served, cfg: typeof FULL, subscribers: number, go: Go, window?: Window): Promise<FanoutRun> {
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
  });
  try {
    await window?.open();
    const before = await s.server.usage();
    const goAt = performance.timeOrigin + performance.now();
    s.server.send({ bench: "fanout-go", taskId, ...go });
    const result = await subs.done();
    const after = await s.server.usage();
    await window?.close();
    const publishMs = await s.published(taskId);
    return {
      result,
      delivered: result.events - subscribers,
      serverCpuMicros: cpuMicros(before, after),
      wallMs: result.lastReceiveAt - goAt,
      publishMs,
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
    s.server.send({ bench: "fanout-go", taskId, events: cfg.stalledEvents, intervalMs: cfg.stalledIntervalMs, padBytes: cfg.stalledPadBytes, replace: true });
    const liveResult = await live.done();
    const publishMs = await s.published(taskId);
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
  const file = join(RESULTS, `issue4-ours-paced-${Date.now()}.cpuprofile`);
  const run = await fanout(s, cfg, cfg.subscribers, go, { open: () => s.server.profileStart(), close: () => s.server.profileStop(file) });
  const checked =
    `${run.result.complete} / ${run.result.subscribers} streams complete and in order, ${formatNumber(run.delivered)} delivered events; ` +
    `server CPU ${formatNumber(run.serverCpuMicros / run.delivered, 2)} µs/event under the profiler.`;
  return `${checked}\n\n${profileSummary(file, run.delivered)}\n\nProfile: ${file}`;
}

async function runServer(kind: ServerKind, cfg: typeof FULL, log: (s: string) => void, profile: boolean): Promise<ServerResult> {
  const s = await serve(kind, cfg);
  try {
    log(`${LABEL[kind]}: warm-up (${cfg.warmupSubscribers} subscribers × ${cfg.warmupEvents} events)`);
    await fanout(s, cfg, cfg.warmupSubscribers, { events: cfg.warmupEvents, intervalMs: 0, padBytes: 0, replace: false });
    log(`${LABEL[kind]}: burst (${cfg.subscribers} subscribers × ${cfg.events} events)`);
    const burst = await fanout(s, cfg, cfg.subscribers, { events: cfg.events, intervalMs: 0, padBytes: 0, replace: false });
    log(`${LABEL[kind]}: paced (${cfg.subscribers} subscribers × ${cfg.pacedEvents} events, one per ${cfg.pacedIntervalMs} ms)`);
    const pacedGo: Go = { events: cfg.pacedEvents, intervalMs: cfg.pacedIntervalMs, padBytes: 0, replace: false };
    const paced = await fanout(s, cfg, cfg.subscribers, pacedGo);
    log(`${LABEL[kind]}: ${cfg.stalled} stalled + ${cfg.stalledLive} live subscribers × ${cfg.stalledEvents} events of ${cfg.stalledPadBytes} B`);
    const stalled = await stalledRun(s, cfg);
    let summary: string | undefined;
    if (profile) {
      log(`${LABEL[kind]}: paced again under the CPU profiler (unmeasured)`);
      summary = await profiledPaced(s, cfg, pacedGo);
    }
    return { kind, burst, paced, stalled, profile: summary };
  } finally {
    s.lc.close();
    await s.server.stop(3_000);
  }
}

const MB = (b: number) => formatNumber(b / 1024 / 1024, 1);
const pct = (r: SubscribersResult, p: number) => percentiles(r.latenciesMs, [p])[0]!;
const codes = (r: SubscribersResult) =>
  Object.entries(r.codes)
    .map(([k, v]) => `${v} ${k}`)
    .join(", ");

export async function runIssue4(opts: Issue4Options): Promise<string> {
  const cfg = opts.quick ? QUICK : FULL;
  if (!existsSync(join(ROOT, "dist/src/main.js"))) throw new Error("dist/src/main.js is missing: run `npm run build` first");
  mkdirSync(RESULTS, { recursive: true });
  const log = (s: string) => process.stderr.write(`[issue4] ${s}\n`);
  const startedAt = new Date();
  const load0 = loadavg()[0]!;

  const sdk = await runServer("sdk", cfg, log, false);
  const ours = await runServer("ours", cfg, log, opts.profile ?? false);
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
  // What the stalled streams may hold at most if nothing were shared between them: the bound,
  // grpc-js's queues (16 messages on each side) and about one event in the HTTP/2 windows.
  const bound = cfg.stalled * (cfg.bufferEvents + 34) * eventBytes;
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
    { what: "server CPU per delivered event vs SDK (burst)", actual: perEvent(ours.burst) / perEvent(sdk.burst), op: "<=", limit: 0.5 },
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
      what: "stalled subscribers ended RESOURCE_EXHAUSTED",
      actual: o.stalled.codes["RESOURCE_EXHAUSTED"] ?? 0,
      op: ">=",
      limit: cfg.stalled,
      format: (v) => formatNumber(v),
    },
    {
      what: "RSS peak growth with stalled subscribers, vs the buffers' bound",
      actual: o.peakRss - o.before.mem.rss,
      op: "<=",
      limit: bound,
      format: (v) => `${MB(v)} MB`,
    },
  ];

  const command = `npm run build && npm run bench -- issue4${opts.quick ? " --quick" : ""}${opts.profile ? " --profile" : ""}`;
  const report = [
    `## Issue 4 benchmark: streaming fan-out${opts.quick ? " (quick)" : ""}`,
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
    `### Paced: ${cfg.subscribers} streams, ${formatNumber(cfg.pacedEvents)} updates, one every ${cfg.pacedIntervalMs} ms`,
    "",
    pacedTable,
    "",
    `### ${cfg.stalled} stalled subscribers (never read while events flow) and ${cfg.stalledLive} live ones, ${formatNumber(cfg.stalledEvents)} updates of ~${formatNumber(eventBytes)} B, one every ${cfg.stalledIntervalMs} ms (each replaces the last: the store keeps one)`,
    "",
    stalledTable,
    "",
    `Our server: A2A_STREAM_BUFFER_EVENTS=${cfg.bufferEvents}. Bound if nothing were shared: ${cfg.stalled} × (${cfg.bufferEvents} + 34) × ${formatNumber(eventBytes)} B = ${MB(bound)} MB; ` +
      `everything queued for every stalled stream: ${MB(unbounded)} MB. "Updates each stalled stream got" is what it read after it resumed (backlog), before its status. ` +
      `Agent publish time: SDK ${formatNumber(sdk.stalled.publishMs)} ms, ours ${formatNumber(o.publishMs)} ms.`,
    "",
    "### Targets",
    "",
    targetsTable(targets),
    ...(ours.profile
      ? [
          "",
          `### Where our server's CPU goes: paced phase (V8 CPU profile of a separate run: ${cfg.subscribers} streams × ${formatNumber(cfg.pacedEvents)} updates; "µs/call" is per delivered event)`,
          "",
          ours.profile,
        ]
      : []),
  ].join("\n");
  const file = join(RESULTS, `issue4-${startedAt.toISOString().replace(/[:.]/g, "-")}${opts.quick ? "-quick" : ""}.md`);
  writeFileSync(file, `${report}\n`);
  log(`written to ${file}`);
  return report;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  runIssue4({ quick: process.argv.includes("--quick"), profile: process.argv.includes("--profile") }).then(
    (report) => process.stdout.write(`${report}\n`),
    (err: unknown) => {
      process.stderr.write(`${(err as Error)?.stack ?? err}\n`);
      process.exit(1);
    },
  );
}
