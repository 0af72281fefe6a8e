/**
 * Unary benchmark: blocking SendMessage with a trivial agent, side by side in one run
 * against (a) a bare grpc-js server answering with prebuilt bytes (the ceiling) and (b) the
 * official @a2a-js/sdk gRPC server with the same agent; then memory per stored task and
 * ListTasks cost as the store grows (ours and the SDK's).
 *
 *   npm run bench -- unary [--quick] [--profile] [--baseline=DIR]
 *   node --import tsx bench/unary.ts [--quick] [--profile] [--baseline=DIR]
 *
 * --baseline=DIR is the A/B mode for a change to our server: DIR is another checkout (built)
 * of this repository, e.g. main's; its server takes the SDK's place in the interleaved rounds,
 * the report gives ours ÷ baseline per round, and the store-growth phases are left out.
 *
 * Our server runs compiled (dist/, run `npm run build` first), as production does.
 * Each server runs in a child process of its own; the load client (this process) sends one
 * prebuilt request with 32 calls in flight and never decodes responses.
 */
import { mkdirSync, writeFileSync, existsSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  ListTasksRequestSchema,
  ListTasksResponseSchema,
  MessageSchema,
  Role,
  SendMessageRequestSchema,
  SendMessageResponseSchema,
  TaskState,
} from "../gen/es/lf/a2a/v1/a2a_pb.js";
import { profileSummary } from "./lib/cpu-profile.js";
import { loadClient, runLoad, type LoadClient, type LoadOptions } from "./lib/load.js";
import { drive, measurePhase, waitUntilServing, type PhaseResult } from "./lib/measure.js";
import { startServerProcess, type ServerProcess } from "./lib/server-process.js";
import { median, percentiles } from "./lib/stats.js";
import { comparisonTable, formatNumber, markdownTable, targetsTable, type Target } from "./lib/table.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const RESULTS = join(ROOT, "bench", "results");
const SEND = "/lf.a2a.v1.A2AService/SendMessage";
const LIST = "/lf.a2a.v1.A2AService/ListTasks";
const A2A_METADATA = { "a2a-version": "1.0" };

export interface UnaryOptions {
  readonly quick: boolean;
  readonly profile: boolean;
  /** A/B mode: the root of another built checkout whose server is measured against ours (see the header). */
  readonly baseline?: string;
}

const FULL = {
  inFlight: 32,
  rounds: 12,
  warmup: 3_000,
  calls: 30_000,
  listInFlight: 8,
  listCalls: 2_000,
  /** ListTasks is measured in this many interleaved rounds per size (see listRounds). */
  listRounds: 6,
  listMaxSeconds: 15,
  listAt: [1_000, 100_000],
  memoryAt: [50_000, 200_000],
};
const QUICK: typeof FULL = {
  ...FULL,
  warmup: 1_000,
  calls: 5_000,
  rounds: 5,
  listCalls: 500,
  listMaxSeconds: 5,
  listAt: [1_000, 10_000],
  memoryAt: [5_000, 20_000],
};

/** The one request every server gets: a new conversation turn, one short text part. */
const sendRequest = Buffer.from(
  toBinary(
    SendMessageRequestSchema,
    create(SendMessageRequestSchema, {
      message: create(MessageSchema, {
        messageId: "bench-message-1",
        role: Role.USER,
        parts: [{ content: { case: "text", value: "What is 2 + 2?" } }],
      }),
    }),
  ),
);
const listRequest = Buffer.from(toBinary(ListTasksRequestSchema, create(ListTasksRequestSchema, { pageSize: 50 })));

type ServerKind = "bare" | "sdk" | "ours" | "baseline";
const LABEL: Record<ServerKind, string> = { bare: "(a) bare grpc-js", sdk: "(b) @a2a-js/sdk", ours: "(c) ours", baseline: "(b) ours, baseline build" };
/** The checkout the "baseline" server runs from (A/B mode). */
let baselineRoot = ROOT;

function start(kind: ServerKind, responseFile?: string): Promise<ServerProcess> {
  const env = { A2A_LOG_LEVEL: "warn" };
  switch (kind) {
    case "bare":
      return startServerProcess({
        name: LABEL.bare,
        script: join(ROOT, "bench/servers/bare-server.ts"),
        tsx: true,
        env: { BENCH_RESPONSE_FILE: responseFile! },
      });
    case "sdk":
      return startServerProcess({ name: LABEL.sdk, script: join(ROOT, "bench/servers/sdk-server.ts"), tsx: true, env });
    case "ours":
    case "baseline": {
      const root = kind === "ours" ? ROOT : baselineRoot;
      return startServerProcess({
        name: LABEL[kind],
        script: join(root, "dist/src/main.js"),
        cwd: root,
        env: (port) => ({
          ...env,
          A2A_LISTEN: `127.0.0.1:${port}`,
          A2A_STORE: "memory",
          A2A_CARD_LISTEN: "off",
          A2A_AGENT_MODULE: "bench/agents/trivial-agent.mjs",
          A2A_LOG_FORMAT: "json",
        }),
      });
    }
  }
}

/** Starts a server and waits until a real SendMessage succeeds. Returns the first response. */
async function startServing(kind: ServerKind, responseFile?: string): Promise<{ server: ServerProcess; lc: LoadClient; first: Buffer }> {
  const server = await start(kind, responseFile);
  const lc = loadClient(server.address, A2A_METADATA);
  let first: Buffer | undefined;
  await waitUntilServing(server, async () => (first = await lc.call(SEND, sendRequest)));
  return { server, lc, first: first! };
}

/** Checks that the answer is a completed task with one artifact: the servers do equivalent work. */
function checkCompletedTask(name: string, bytes: Buffer): void {
  const res = fromBinary(SendMessageResponseSchema, bytes);
  const task = res.payload.case === "task" ? res.payload.value : undefined;
  if (task?.status?.state !== TaskState.COMPLETED || task.artifacts.length !== 1) {
    throw new Error(`${name} did not answer with a completed task with one artifact`);
  }
}

interface GrowthRow {
  readonly kind: ServerKind;
  /** tasks -> bytes per stored task, measured from the baseline. */
  readonly memory: { tasks: number; rssPerTask: number; heapPerTask: number; heapTotalPerTask: number }[];
  readonly list: { tasks: number; phase: PhaseResult; totalSize: number }[];
  /** ListTasks CPU per call, largest store ÷ smallest, per round. */
  listRatios?: number[];
  profile?: string;
}

/**
 * Throughput of the three servers in interleaved rounds: all three run at once (idle while not
 * measured), and each round measures them one after the other. Why: load from other jobs on a
 * shared machine comes and goes over minutes; servers measured minutes apart saw different
 * machines, servers measured seconds apart in every round see the same one.
 *
 * The bare ceiling and ours are always measured next to each other (which of the two goes first
 * alternates), the SDK server before or after the pair: the ours/bare ratio is the tightest
 * target, and with the SDK's ~3 s phase between them a round's two figures came from different
 * moments (per-round ratios spread 1.06–1.93 in one run of 6 rounds). Many short rounds, for the
 * same reason: a burst of load spoils one round's ratio, not the median.
 */
const ROUND_ORDERS: ReadonlyArray<readonly ServerKind[]> = [
  ["bare", "ours", "sdk"],
  ["sdk", "ours", "bare"],
];

/**
 * A/B mode: ours and the baseline build always back to back, each first in every other round and
 * in the middle (next to the bare server) in half of them, so that neither gains from its place.
 */
const AB_ROUND_ORDERS: ReadonlyArray<readonly ServerKind[]> = [
  ["bare", "ours", "baseline"],
  ["baseline", "ours", "bare"],
  ["bare", "baseline", "ours"],
  ["ours", "baseline", "bare"],
];

async function throughputRounds(cfg: typeof FULL, opts: UnaryOptions, log: (s: string) => void) {
  const ours = await startServing("ours");
  const responseFile = join(RESULTS, "unary-response.bin");
  writeFileSync(responseFile, ours.first); // the ceiling answers with our exact response bytes
  const bare = await startServing("bare", responseFile);
  const other: ServerKind = opts.baseline === undefined ? "sdk" : "baseline";
  const sdk = await startServing(other);
  const servers: Array<{ kind: ServerKind; served: typeof ours }> = [
    { kind: "bare", served: bare },
    { kind: other, served: sdk },
    { kind: "ours", served: ours },
  ];
  const orders = opts.baseline === undefined ? ROUND_ORDERS : AB_ROUND_ORDERS;
  try {
    checkCompletedTask(LABEL[other], sdk.first);
    checkCompletedTask(LABEL.ours, ours.first);
    const load = { path: SEND, request: sendRequest, inFlight: cfg.inFlight };
    for (const { served } of servers) await drive(served.server, served.lc, load, cfg.warmup);
    // A full collection in every server before measuring. Why: V8 promotes far more of each
    // scavenge's survivors once it has run its first full collection (grpc-js servers then
    // promote ~1.5–2 MB per scavenge instead of ~25 KB), and the servers reach that point after
    // different numbers of calls; unforced, a server measured before it looks cheaper.
    for (const { served } of servers) await served.server.usageAfterGc();
    // Each server's first calls after a full collection run slower (the young generation regrows): not measured.
    for (const { served } of servers) await drive(served.server, served.lc, load, Math.ceil(cfg.warmup / 3));
    const perRound = Math.ceil(cfg.calls / cfg.rounds);
    const phases: PhaseResult[][] = servers.map(() => []);
    for (let round = 0; round < cfg.rounds; round++) {
      log(`throughput round ${round + 1}/${cfg.rounds}`);
      for (const kind of orders[round % orders.length]!) {
        const i = servers.findIndex((s) => s.kind === kind);
        const { served } = servers[i]!;
        phases[i]!.push(await measurePhase(served.server, served.lc, { ...load, calls: perRound }));
      }
    }
    // Profiling slows the server down, so it gets its own run of calls after the measured ones.
    const profile = opts.profile ? await profiled(ours.server, ours.lc, { ...load, calls: cfg.calls }, "send") : undefined;
    return { rounds: servers.map((s, i) => ({ kind: s.kind, phases: phases[i]! })), profile };
  } finally {
    for (const { served } of servers) {
      served.lc.close();
      await served.server.stop();
    }
  }
}

/** One row of the throughput table from a server's rounds: medians of the per-round figures, latency over all calls. */
function combineRounds(phases: readonly PhaseResult[]): PhaseResult {
  const latenciesMs = Float64Array.from(phases.flatMap((p) => [...p.load.latenciesMs]));
  const [p50, p99] = percentiles(latenciesMs, [50, 99]);
  const calls = phases.reduce((n, p) => n + p.load.calls, 0);
  return {
    load: { ...phases[0]!.load, calls, latenciesMs, elapsedMs: phases.reduce((t, p) => t + p.load.elapsedMs, 0) },
    callsPerSec: median(phases.map((p) => p.callsPerSec)),
    serverCpuPerCall: median(phases.map((p) => p.serverCpuPerCall)),
    clientCpuPerCall: median(phases.map((p) => p.clientCpuPerCall)),
    p50Ms: p50!,
    p99Ms: p99!,
  };
}

/** Runs `options` once more under the V8 profiler and summarizes where the time went. */
async function profiled(server: ServerProcess, lc: LoadClient, options: LoadOptions, what: string): Promise<string> {
  const file = join(RESULTS, `unary-ours-${what}-${Date.now()}.cpuprofile`);
  await server.profileStart();
  const load = await runLoad(lc, options);
  await server.profileStop(file);
  return `${profileSummary(file, load.calls)}\n\nProfile: ${file}`;
}

/**
 * ListTasks on a small store and on a large one, in interleaved rounds (as the throughput is
 * measured, and for the same reason): each round measures both servers back to back, seconds
 * apart, alternating which goes first. Why: measured as one phase per size, minutes apart, a
 * burst of load on the shared machine landed in one size's phase whole (one run: 1.51× for a
 * cost that is flat, 0.7–1.2× in the other runs).
 */
async function listRounds(
  small: { server: ServerProcess; lc: LoadClient },
  large: { server: ServerProcess; lc: LoadClient },
  cfg: typeof FULL,
): Promise<{ small: PhaseResult; large: PhaseResult; ratios: number[] }> {
  const load = { path: LIST, request: listRequest, inFlight: cfg.listInFlight };
  for (const s of [small, large]) await drive(s.server, s.lc, load, 20);
  const per = { calls: Math.ceil(cfg.listCalls / cfg.listRounds), maxSeconds: cfg.listMaxSeconds / cfg.listRounds };
  const phases = { small: [] as PhaseResult[], large: [] as PhaseResult[] };
  for (let round = 0; round < cfg.listRounds; round++) {
    const order = round % 2 === 0 ? (["small", "large"] as const) : (["large", "small"] as const);
    for (const which of order) {
      const s = which === "small" ? small : large;
      phases[which].push(await measurePhase(s.server, s.lc, { ...load, ...per }));
    }
  }
  return {
    small: combineRounds(phases.small),
    large: combineRounds(phases.large),
    ratios: phases.large.map((p, i) => p.serverCpuPerCall / phases.small[i]!.serverCpuPerCall),
  };
}

/** Checks that a ListTasks page is full, and returns the store's total size. */
async function listedTotal(kind: ServerKind, lc: LoadClient): Promise<number> {
  const page = fromBinary(ListTasksResponseSchema, await lc.call(LIST, listRequest));
  if (page.tasks.length !== 50) throw new Error(`${LABEL[kind]}: ListTasks returned ${page.tasks.length} tasks, wanted 50`);
  return page.totalSize;
}

/**
 * Fills a fresh server's store via SendMessage, measuring memory at the set sizes, and ListTasks
 * at the largest list size against a second server of the same kind holding the smallest.
 */
async function growth(kind: ServerKind, cfg: typeof FULL, opts: UnaryOptions): Promise<GrowthRow> {
  const [smallTasks, largeTasks] = [cfg.listAt[0]!, cfg.listAt.at(-1)!];
  const small = await startServing(kind);
  const { server, lc } = await startServing(kind);
  const fill = async (target: { server: ServerProcess; lc: LoadClient }, from: number, to: number) =>
    drive(target.server, target.lc, { path: SEND, request: sendRequest, inFlight: cfg.inFlight }, to - from);
  let stored = 1;
  const fillTo = async (n: number) => {
    await fill({ server, lc }, stored, n);
    stored = Math.max(stored, n);
  };
  const row: GrowthRow = { kind, memory: [], list: [] };
  try {
    await fill(small, 1, smallTasks);
    const smallTotal = await listedTotal(kind, small.lc);
    const sizes = [...new Set([...cfg.listAt, ...cfg.memoryAt])].sort((a, b) => a - b);
    await fillTo(smallTasks);
    // ListTasks once warmed up before the baseline, so that what its first calls make (compiled
    // code, buffers) is not counted as memory of the tasks stored after it.
    await drive(server, lc, { path: LIST, request: listRequest, inFlight: cfg.listInFlight }, 200);
    const base = await server.usageAfterGc();
    for (const n of sizes.filter((size) => size !== smallTasks)) {
      await fillTo(n);
      if (n === largeTasks) {
        const largeTotal = await listedTotal(kind, lc);
        const measured = await listRounds(small, { server, lc }, cfg);
        row.list.push({ tasks: smallTasks, phase: measured.small, totalSize: smallTotal }, { tasks: largeTasks, phase: measured.large, totalSize: largeTotal });
        row.listRatios = measured.ratios;
        if (opts.profile && kind === "ours") {
          row.profile = await profiled(server, lc, { path: LIST, request: listRequest, inFlight: cfg.listInFlight, calls: measured.large.load.calls }, "list");
        }
      }
      if (cfg.memoryAt.includes(n)) {
        const now = await server.usageAfterGc();
        const tasks = stored - smallTasks;
        row.memory.push({
          tasks: n,
          rssPerTask: (now.mem.rss - base.mem.rss) / tasks,
          heapPerTask: (now.mem.heapUsed + now.mem.external - base.mem.heapUsed - base.mem.external) / tasks,
          heapTotalPerTask: (now.mem.heapTotal - base.mem.heapTotal) / tasks,
        });
      }
    }
    return row;
  } finally {
    for (const s of [small, { server, lc }]) {
      s.lc.close();
      await s.server.stop();
    }
  }
}

export async function runUnary(opts: UnaryOptions): Promise<string> {
  const cfg = opts.quick ? QUICK : FULL;
  if (!existsSync(join(ROOT, "dist/src/main.js"))) throw new Error("dist/src/main.js is missing: run `npm run build` first");
  if (opts.baseline !== undefined) {
    baselineRoot = opts.baseline;
    if (!existsSync(join(baselineRoot, "dist/src/main.js"))) throw new Error(`${baselineRoot}/dist/src/main.js is missing: run \`npm run build\` there first`);
  }
  mkdirSync(RESULTS, { recursive: true });
  const log = (s: string) => process.stderr.write(`[unary] ${s}\n`);
  const startedAt = new Date();
  const load0 = loadavg()[0]!;

  log(`throughput: ${cfg.warmup} warm-up + ${cfg.calls} measured blocking SendMessage calls in ${cfg.rounds} rounds, ${cfg.inFlight} in flight, per server`);
  const measured = await throughputRounds(cfg, opts, log);
  const rows = measured.rounds.map((r) => ({ kind: r.kind, phase: combineRounds(r.phases) }));
  const [bareRounds, sdkRounds, oursRounds] = measured.rounds.map((r) => r.phases) as [PhaseResult[], PhaseResult[], PhaseResult[]];
  /** A ratio of ours to a baseline taken in each round (measured seconds apart), and its median. */
  const perRound = (base: PhaseResult[], f: (p: PhaseResult) => number) => oursRounds.map((p, i) => f(p) / f(base[i]!));
  const cpuVsSdk = perRound(sdkRounds, (p) => p.serverCpuPerCall);
  const cpuVsBare = perRound(bareRounds, (p) => p.serverCpuPerCall);
  const callsVsSdk = perRound(sdkRounds, (p) => p.callsPerSec);
  const spread = (v: number[]) => `${formatNumber(Math.min(...v), 2)}–${formatNumber(Math.max(...v), 2)}`;
  const roundsTable = markdownTable(
    ["round", ...measured.rounds.map((r) => `${LABEL[r.kind]} CPU µs/call`), "ours ÷ SDK CPU", "ours ÷ bare CPU", "ours ÷ SDK calls/s"],
    oursRounds.map((_, i) => [
      String(i + 1),
      ...measured.rounds.map((r) => formatNumber(r.phases[i]!.serverCpuPerCall)),
      formatNumber(cpuVsSdk[i]!, 2),
      formatNumber(cpuVsBare[i]!, 2),
      formatNumber(callsVsSdk[i]!, 2),
    ]),
  );

  if (opts.baseline !== undefined) return abReport({ cfg, opts, measured, rows, startedAt, load0, cpuVsBase: cpuVsSdk, cpuVsBare, roundsTable, log });

  log(`store growth: ListTasks at ${cfg.listAt.join(" / ")} tasks, memory at ${cfg.memoryAt.join(" / ")} tasks (SDK, then ours)`);
  const growthRows = [await growth("sdk", cfg, opts), await growth("ours", cfg, opts)];

  const label = (r: { kind: ServerKind }) => LABEL[r.kind];
  const throughputTable = comparisonTable(
    rows,
    label,
    [
      { header: "calls/s", value: (r) => r.phase.callsPerSec, ratio: true },
      { header: "server CPU µs/call", value: (r) => r.phase.serverCpuPerCall, ratio: true },
      { header: "p50 ms", value: (r) => r.phase.p50Ms, digits: 2, ratio: true },
      { header: "p99 ms", value: (r) => r.phase.p99Ms, digits: 2, ratio: true },
      { header: "client CPU µs/call", value: (r) => r.phase.clientCpuPerCall },
      { header: "response B", value: (r) => r.phase.load.responseBytes },
    ],
    [rows[0]!, rows[1]!],
  );

  const memRows = growthRows.flatMap((g) =>
    g.memory.map((m) => [label(g), formatNumber(m.tasks), formatNumber(m.rssPerTask), formatNumber(m.heapPerTask), formatNumber(m.heapTotalPerTask)]),
  );
  const memoryTable = markdownTable(["server", "stored tasks", "RSS B/task", "heap used + external B/task", "V8 heap reserved B/task"], memRows);
  const listRows = growthRows.flatMap((g) =>
    g.list.map((l) => [
      label(g),
      formatNumber(l.tasks),
      formatNumber(l.totalSize),
      formatNumber(l.phase.load.calls),
      formatNumber(l.phase.serverCpuPerCall),
      formatNumber(l.phase.p50Ms, 2),
      formatNumber(l.phase.callsPerSec),
    ]),
  );
  const listTable = markdownTable(["server", "stored tasks", "total_size", "calls", "server CPU µs/call", "p50 ms", "calls/s"], listRows);

  const oursGrowth = growthRows[1]!;
  const sdkGrowth = growthRows[0]!;
  const lastMem = oursGrowth.memory.at(-1)!;
  const bytes = (v: number) => `${formatNumber(v)} B`;
  const listRatios = oursGrowth.listRatios!;
  const targets: Target[] = [
    { what: `server CPU/call vs SDK (median of ${cfg.rounds} rounds; ${spread(cpuVsSdk)})`, actual: median(cpuVsSdk), op: "<=", limit: 0.5 },
    { what: `server CPU/call vs bare (median of rounds; ${spread(cpuVsBare)})`, actual: median(cpuVsBare), op: "<=", limit: 1.5 },
    { what: `calls/s vs SDK (median of rounds; ${spread(callsVsSdk)})`, actual: median(callsVsSdk), op: ">=", limit: 1.5 },
    { what: `memory per completed task at ${formatNumber(lastMem.tasks)} (heap+external)`, actual: lastMem.heapPerTask, op: "<", limit: 1024, format: bytes },
    { what: `memory per completed task at ${formatNumber(lastMem.tasks)} (RSS)`, actual: lastMem.rssPerTask, op: "<", limit: 1024, format: bytes },
    {
      what: `ListTasks CPU/call at ${formatNumber(oursGrowth.list.at(-1)!.tasks)} vs ${formatNumber(oursGrowth.list[0]!.tasks)} tasks (flat; median of ${listRatios.length} rounds; ${spread(listRatios)})`,
      actual: median(listRatios),
      op: "<=",
      limit: 1.5,
    },
  ];

  const command = `npm run build && npm run bench -- unary${opts.quick ? " --quick" : ""}${opts.profile ? " --profile" : ""}`;
  const sdkMem = sdkGrowth.memory.at(-1);
  const out = [
    `## Unary benchmark: blocking SendMessage${opts.quick ? " (quick)" : ""}`,
    "",
    `Reproduce: \`${command}\``,
    "",
    `${startedAt.toISOString()} · Node ${process.version} · ${cpus().length} × ${cpus()[0]?.model ?? "?"} · load average ${load0.toFixed(2)} at start`,
    "",
    `### Blocking SendMessage, trivial agent (working → artifact → complete), ${cfg.inFlight} calls in flight, ${formatNumber(cfg.calls)} calls per server in ${cfg.rounds} interleaved rounds, after ${formatNumber(cfg.warmup)} warm-up`,
    "",
    throughputTable,
    "",
    `Ratios in parentheses: to (a) / to (b). Server CPU is user + system time of the server process over the measured calls, all threads; calls/s and CPU are medians of the rounds, p50/p99 over all calls. The three servers run side by side and each round measures them back to back, the bare server and ours always next to each other (bare, ours, SDK; then SDK, ours, bare):`,
    "",
    roundsTable,
    "",
    `### Memory per stored completed task (blocking SendMessage; growth from ${formatNumber(cfg.listAt[0]!)} tasks, after forced GC)`,
    "",
    memoryTable,
    "",
    `### ListTasks, page size 50, first page, ${cfg.listInFlight} calls in flight, ${cfg.listRounds} interleaved rounds: a server holding ${formatNumber(cfg.listAt[0]!)} tasks and one grown to ${formatNumber(cfg.listAt.at(-1)!)}, measured back to back`,
    "",
    listTable,
    "",
    "### Targets",
    "",
    targetsTable(targets),
    sdkMem
      ? `\nSDK server for comparison: ${bytes(sdkMem.heapPerTask)} heap+external, ${bytes(sdkMem.rssPerTask)} RSS per task at ${formatNumber(sdkMem.tasks)}.`
      : "",
  ];
  if (measured.profile) out.push("", "### Where our server's CPU goes: SendMessage (V8 CPU profile, a separate run of the same calls)", "", measured.profile);
  const listProfile = growthRows[1]!.profile;
  if (listProfile) out.push("", `### Where our server's CPU goes: ListTasks at ${formatNumber(cfg.listAt.at(-1)!)} tasks`, "", listProfile);
  const report = out.join("\n");
  return report;
}

/** The A/B report: ours against the baseline build, round by round (no store-growth phases). */
function abReport(r: {
  cfg: typeof FULL;
  opts: UnaryOptions;
  measured: Awaited<ReturnType<typeof throughputRounds>>;
  rows: Array<{ kind: ServerKind; phase: PhaseResult }>;
  startedAt: Date;
  load0: number;
  cpuVsBase: number[];
  cpuVsBare: number[];
  roundsTable: string;
  log: (s: string) => void;
}): string {
  const { cfg, opts, startedAt } = r;
  const spread = (v: number[]) => `${formatNumber(Math.min(...v), 3)}–${formatNumber(Math.max(...v), 3)}`;
  const baseRounds = r.measured.rounds.find((x) => x.kind === "baseline")!.phases;
  const bareRounds = r.measured.rounds.find((x) => x.kind === "bare")!.phases;
  const baseVsBare = baseRounds.map((p, i) => p.serverCpuPerCall / bareRounds[i]!.serverCpuPerCall);
  const throughputTable = comparisonTable(
    r.rows,
    (x) => LABEL[x.kind],
    [
      { header: "calls/s", value: (x) => x.phase.callsPerSec, ratio: true },
      { header: "server CPU µs/call", value: (x) => x.phase.serverCpuPerCall, ratio: true },
      { header: "p50 ms", value: (x) => x.phase.p50Ms, digits: 2, ratio: true },
      { header: "p99 ms", value: (x) => x.phase.p99Ms, digits: 2, ratio: true },
    ],
    [r.rows[0]!, r.rows[1]!],
  );
  const targets: Target[] = [
    { what: `server CPU/call, ours ÷ baseline (median of ${cfg.rounds} rounds; ${spread(r.cpuVsBase)})`, actual: median(r.cpuVsBase), op: "<=", limit: 1.05 },
  ];
  const command = `npm run build && npm run bench -- unary${opts.quick ? " --quick" : ""} --baseline=${opts.baseline}`;
  const report = [
    `## Unary benchmark: blocking SendMessage, A/B against a baseline build${opts.quick ? " (quick)" : ""}`,
    "",
    `Reproduce: \`${command}\` (the baseline checkout built with \`npm run build\` too)`,
    "",
    `${startedAt.toISOString()} · Node ${process.version} · ${cpus().length} × ${cpus()[0]?.model ?? "?"} · load average ${r.load0.toFixed(2)} at start`,
    "",
    throughputTable,
    "",
    `Ratios in parentheses: to (a) / to (b). Rounds (ours and the baseline always back to back):`,
    "",
    r.roundsTable.replaceAll("ours ÷ SDK", "ours ÷ baseline"),
    "",
    `Baseline ÷ bare CPU per round: median ${formatNumber(median(baseVsBare), 3)} (${spread(baseVsBare)}); ours ÷ bare: median ${formatNumber(median(r.cpuVsBare), 3)} (${spread(r.cpuVsBare)}).`,
    "",
    targetsTable(targets),
  ].join("\n");
  return report;
}

/** The value of a `--name=value` argument. */
export function argValue(args: readonly string[], name: string): string | undefined {
  const prefix = `--${name}=`;
  return args.find((a) => a.startsWith(prefix))?.slice(prefix.length);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  runUnary({ quick: args.includes("--quick"), profile: args.includes("--profile"), baseline: argValue(args, "baseline") }).then(
    (report) => process.stdout.write(`${report}\n`),
    (err: unknown) => {
      process.stderr.write(`${(err as Error)?.stack ?? err}\n`);
      process.exit(1);
    },
  );
}
