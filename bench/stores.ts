/**
 * Stores benchmark: our server on the SQLite store side by side with the memory store in
 * one run. Blocking SendMessage (trivial agent) on each; then stores of growing size: the
 * SQLite file prefilled directly (bench/lib/sqlite-prefill.ts, in its own process) and the
 * server started on it (start-up time, RSS, ListTasks, SendMessage); the memory store filled
 * through SendMessage (its only way in).
 *
 *   npm run bench -- stores [--quick] [--server-dir=DIR]

 * --server-dir=DIR adds SQLite on another build (DIR's dist/) to the SendMessage rounds, next to
 * this build's SQLite in every round: this build ÷ that one, before and after in one run.
 *
 * Our server runs compiled (dist/, run `npm run build` first).
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, statSync, existsSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { ListTasksRequestSchema, ListTasksResponseSchema, MessageSchema, Role, SendMessageRequestSchema } from "../gen/es/lf/a2a/v1/a2a_pb.js";
import { loadClient, type LoadClient } from "./lib/load.js";
import { drive, measurePhase, waitUntilServing, type PhaseResult } from "./lib/measure.js";
import { startServerProcess, type ServerProcess, type Usage } from "./lib/server-process.js";
import { median } from "./lib/stats.js";
import { profileSummary } from "./lib/cpu-profile.js";
import { formatNumber, formatRatio, markdownTable, targetsTable, type Target } from "./lib/table.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const RESULTS = join(ROOT, "bench", "results");
const SEND = "/lf.a2a.v1.A2AService/SendMessage";
const LIST = "/lf.a2a.v1.A2AService/ListTasks";
const A2A_METADATA = { "a2a-version": "1.0" };
const STORE_FILE = "tasks.sqlite"; // src/app.ts STORE_FILE_NAME

export interface StoresOptions {
  readonly quick: boolean;
  /** Also profile the memory and the default SQLite server (a separate, unmeasured run each). */
  readonly profile?: boolean;
  /** Only the interleaved SendMessage rounds, not the store-size phases. */
  readonly throughputOnly?: boolean;
  /** Another checkout, built: its SQLite server joins the SendMessage rounds. */
  readonly baseline?: string;
}

const FULL = {
  inFlight: 32,
  warmup: 2_000,
  calls: 24_000,
  rounds: 12,
  listInFlight: 8,
  listCalls: 1_000,
  listMaxSeconds: 15,
  /** SendMessage calls measured on each sized SQLite store. */
  sizedCalls: 3_000,
  sqliteSizes: [10_000, 1_000_000],
  memorySizes: [10_000, 200_000],
  startupRuns: 3,
};
const QUICK: typeof FULL = {
  ...FULL,
  warmup: 1_000,
  calls: 9_000,
  rounds: 6,
  listCalls: 300,
  listMaxSeconds: 5,
  sizedCalls: 1_000,
  sqliteSizes: [10_000, 100_000],
  memorySizes: [10_000, 30_000],
  startupRuns: 2,
};

type Store = "memory" | "sqlite";

const sendRequest = Buffer.from(
  toBinary(
    SendMessageRequestSchema,
    create(SendMessageRequestSchema, {
      message: create(MessageSchema, { messageId: "bench-message-1", role: Role.USER, parts: [{ content: { case: "text", value: "What is 2 + 2?" } }] }),
    }),
  ),
);
const listRequest = Buffer.from(toBinary(ListTasksRequestSchema, create(ListTasksRequestSchema, { pageSize: 50 })));

function start(store: Store, dataDir: string | undefined, logLevel = "warn", extraEnv: Record<string, string> = {}, root = ROOT): Promise<ServerProcess> {
  return startServerProcess({
    name: `ours (${store})${root === ROOT ? "" : `, ${root}`}`,
    script: join(root, "dist/src/main.js"),
    cwd: root,
    captureStdout: logLevel !== "warn",
    env: (port) => ({
      A2A_LISTEN: `127.0.0.1:${port}`,
      A2A_LOG_LEVEL: logLevel,
      A2A_LOG_FORMAT: "json",
      A2A_STORE: store,
      ...(dataDir ? { A2A_DATA_DIR: dataDir } : {}),
      A2A_CARD_LISTEN: "off",
      A2A_AGENT_MODULE: "bench/agents/trivial-agent.mjs",
      ...extraEnv,
    }),
  });
}

async function serving(store: Store, dataDir?: string, extraEnv: Record<string, string> = {}, root = ROOT): Promise<{ server: ServerProcess; lc: LoadClient }> {
  const server = await start(store, dataDir, "warn", extraEnv, root);
  const lc = loadClient(server.address, A2A_METADATA);
  await waitUntilServing(server, () => lc.call(LIST, listRequest), 60_000);
  return { server, lc };
}

/** Spawn to the "listening on" log line, ms (median of `runs` starts). */
async function startupMs(store: Store, dataDir: string | undefined, runs: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const server = await start(store, dataDir, "info");
    try {
      const at = await server.waitForLine(/listening on/);
      times.push(at - server.spawnedAt);
    } finally {
      await server.stop();
    }
  }
  return times;
}

async function prefill(dataDir: string, tasks: number): Promise<number> {
  const t = performance.now();
  await promisify(execFile)(
    process.execPath,
    ["--import", "tsx", join(ROOT, "bench/lib/sqlite-prefill.ts"), "--file", join(dataDir, STORE_FILE), "--from", "0", "--to", String(tasks)],
    {
      cwd: ROOT,
    },
  );
  return (performance.now() - t) / 1000;
}

async function listPhase(server: ServerProcess, lc: LoadClient, cfg: typeof FULL, expectTotal: number): Promise<{ phase: PhaseResult; totalSize: number }> {
  const page = fromBinary(ListTasksResponseSchema, await lc.call(LIST, listRequest));
  if (page.tasks.length !== 50 || page.totalSize < expectTotal) {
    throw new Error(`${server.name}: ListTasks returned ${page.tasks.length} tasks of ${page.totalSize}, wanted 50 of at least ${expectTotal}`);
  }
  const load = { path: LIST, request: listRequest, inFlight: cfg.listInFlight };
  await drive(server, lc, load, 50);
  const phase = await measurePhase(server, lc, { ...load, calls: cfg.listCalls, maxSeconds: cfg.listMaxSeconds });
  return { phase, totalSize: page.totalSize };
}

interface SizeRow {
  readonly store: Store;
  readonly tasks: number;
  readonly fill: string;
  readonly startup?: number[];
  readonly fileMB?: number;
  readonly rssStart?: number;
  readonly rss: number;
  readonly heap: number;
  readonly list: PhaseResult;
  readonly totalSize: number;
  readonly send?: PhaseResult;
}

async function sqliteAt(tasks: number, cfg: typeof FULL, log: (s: string) => void): Promise<SizeRow> {
  const dir = mkdtempSync(join(tmpdir(), "a2a-bench-stores-"));
  try {
    log(`sqlite: prefilling ${formatNumber(tasks)} tasks`);
    const seconds = await prefill(dir, tasks);
    const fileMB = statSync(join(dir, STORE_FILE)).size / 1024 / 1024;
    log(`sqlite: ${formatNumber(tasks)} tasks: start-up ×${cfg.startupRuns}, ListTasks, SendMessage`);
    const startup = await startupMs("sqlite", dir, cfg.startupRuns);
    const { server, lc } = await serving("sqlite", dir);
    try {
      const rssStart = (await server.usageAfterGc()).mem.rss;
      const { phase: list, totalSize } = await listPhase(server, lc, cfg, tasks);
      const load = { path: SEND, request: sendRequest, inFlight: cfg.inFlight };
      await drive(server, lc, load, 200);
      const send = await measurePhase(server, lc, { ...load, calls: cfg.sizedCalls });
      const after: Usage = await server.usageAfterGc();
      return {
        store: "sqlite",
        tasks,
        fill: `prefilled file, ${seconds.toFixed(0)} s`,
        startup,
        fileMB,
        rssStart,
        rss: after.mem.rss,
        heap: after.mem.heapUsed + after.mem.external,
        list,
        totalSize,
        send,
      };
    } finally {
      lc.close();
      await server.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The memory store can only be filled through the API: one server, filled through SendMessage to each size in turn. */
async function memoryAt(cfg: typeof FULL, log: (s: string) => void): Promise<SizeRow[]> {
  const { server, lc } = await serving("memory");
  const rows: SizeRow[] = [];
  try {
    let stored = 0;
    for (const tasks of cfg.memorySizes) {
      log(`memory: filling to ${formatNumber(tasks)} tasks through SendMessage`);
      const t = performance.now();
      await drive(server, lc, { path: SEND, request: sendRequest, inFlight: cfg.inFlight }, tasks - stored);
      const seconds = (performance.now() - t) / 1000;
      stored = tasks;
      const { phase: list, totalSize } = await listPhase(server, lc, cfg, tasks);
      const after = await server.usageAfterGc();
      rows.push({
        store: "memory",
        tasks,
        fill: `SendMessage, ${seconds.toFixed(0)} s`,
        rss: after.mem.rss,
        heap: after.mem.heapUsed + after.mem.external,
        list,
        totalSize,
      });
    }
    return rows;
  } finally {
    lc.close();
    await server.stop();
  }
}

/** The throughput phase's servers: the memory store, SQLite as configured by default, and SQLite without the resume event log. */
type ThroughputKind = "memory" | "sqlite" | "sqlite-nolog" | "sqlite-baseline";
let THROUGHPUT_KINDS: readonly ThroughputKind[] = ["memory", "sqlite", "sqlite-nolog"];
const THROUGHPUT_LABEL: Record<ThroughputKind, string> = {
  memory: "memory",
  sqlite: "sqlite (default: resume event log on)",
  "sqlite-nolog": "sqlite, A2A_STREAM_RESUME_RETENTION=off",
  "sqlite-baseline": "sqlite on the --server-dir build",
};
/** A round's order with the other build's SQLite server put right beside this build's (before it in every other round). */
function withBaseline(order: readonly ThroughputKind[], round: number): ThroughputKind[] {
  if (!THROUGHPUT_KINDS.includes("sqlite-baseline")) return [...order];
  const out: ThroughputKind[] = order.filter((k) => k !== "sqlite-baseline");
  out.splice(out.indexOf("sqlite") + (round % 2), 0, "sqlite-baseline");
  return out;
}
/** Each round measures the three back to back; the order turns so that none always goes first or last. */
const ROUND_ORDERS: ReadonlyArray<readonly ThroughputKind[]> = [
  ["memory", "sqlite", "sqlite-nolog"],
  ["sqlite-nolog", "memory", "sqlite"],
  ["sqlite", "sqlite-nolog", "memory"],
];

interface ThroughputResult {
  readonly rounds: Map<ThroughputKind, PhaseResult[]>;
  readonly profiles: string[];
}

/**
 * Blocking SendMessage on the three servers side by side, in interleaved rounds (the machine is
 * shared: servers measured seconds apart see the same load, so the ratios are taken per round).
 * As unary: a warm-up, a forced full GC in each, a third of the warm-up again, then the rounds.
 */
async function throughput(cfg: typeof FULL, profile: boolean, log: (s: string) => void, baseline?: string): Promise<ThroughputResult> {
  const dirs: string[] = [];
  const served: Array<{ kind: ThroughputKind; server: ServerProcess; lc: LoadClient }> = [];
  try {
    for (const kind of THROUGHPUT_KINDS) {
      const dir = kind === "memory" ? undefined : mkdtempSync(join(tmpdir(), "a2a-bench-stores-"));
      if (dir) dirs.push(dir);
      const store: Store = kind === "memory" ? "memory" : "sqlite";
      const { server, lc } = await serving(
        store,
        dir,
        kind === "sqlite-nolog" ? { A2A_STREAM_RESUME_RETENTION: "off" } : {},
        kind === "sqlite-baseline" ? baseline : ROOT,
      );
      served.push({ kind, server, lc });
    }
    const load = { path: SEND, request: sendRequest, inFlight: cfg.inFlight };
    for (const s of served) await drive(s.server, s.lc, load, cfg.warmup);
    for (const s of served) await s.server.usageAfterGc();
    for (const s of served) await drive(s.server, s.lc, load, Math.ceil(cfg.warmup / 3));
    const rounds = new Map<ThroughputKind, PhaseResult[]>(THROUGHPUT_KINDS.map((k) => [k, []]));
    const perRound = Math.ceil(cfg.calls / cfg.rounds);
    for (let round = 0; round < cfg.rounds; round++) {
      for (const kind of withBaseline(ROUND_ORDERS[round % ROUND_ORDERS.length]!, round)) {
        const s = served.find((x) => x.kind === kind)!;
        rounds.get(kind)!.push(await measurePhase(s.server, s.lc, { ...load, calls: perRound }));
      }
      const cpu = (k: ThroughputKind) => rounds.get(k)![round]!.serverCpuPerCall;
      log(
        `round ${round + 1}/${cfg.rounds}: memory ${formatNumber(cpu("memory"))} µs/call, sqlite ${formatRatio(cpu("sqlite") / cpu("memory"))}, no log ${formatRatio(cpu("sqlite-nolog") / cpu("memory"))}`,
      );
    }
    const profiles: string[] = [];
    if (profile) {
      for (const s of served) {
        if (s.kind === "sqlite-nolog" || s.kind === "sqlite-baseline") continue;
        const file = join(RESULTS, `stores-${s.kind}-send-${Date.now()}.cpuprofile`);
        await s.server.profileStart();
        const calls = perRound * 2;
        await drive(s.server, s.lc, load, calls);
        await s.server.profileStop(file);
        profiles.push(`#### ${THROUGHPUT_LABEL[s.kind]}\n\n${profileSummary(file, calls, 20)}\n\nProfile: ${file}`);
      }
    }
    return { rounds, profiles };
  } finally {
    for (const s of served) {
      s.lc.close();
      await s.server.stop();
    }
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
}

const MB = (b: number) => formatNumber(b / 1024 / 1024, 1);

export async function runStores(opts: StoresOptions): Promise<string> {
  const cfg = opts.quick ? QUICK : FULL;
  if (!existsSync(join(ROOT, "dist/src/main.js"))) throw new Error("dist/src/main.js is missing: run `npm run build` first");
  mkdirSync(RESULTS, { recursive: true });
  const log = (s: string) => process.stderr.write(`[stores] ${s}\n`);
  const startedAt = new Date();
  const load0 = loadavg()[0]!;

  log(
    `throughput: ${cfg.warmup} warm-up, then ${cfg.rounds} interleaved rounds of ${Math.ceil(cfg.calls / cfg.rounds)} blocking SendMessage calls, ${cfg.inFlight} in flight`,
  );
  if (opts.baseline !== undefined) THROUGHPUT_KINDS = [...THROUGHPUT_KINDS, "sqlite-baseline"];
  const tp = await throughput(cfg, opts.profile === true, log, opts.baseline);
  const of = (k: ThroughputKind) => tp.rounds.get(k)!;
  const ratios = (k: ThroughputKind, pick: (p: PhaseResult) => number) => of(k).map((p, i) => pick(p) / pick(of("memory")[i]!));
  const cpuOf = (p: PhaseResult) => p.serverCpuPerCall;
  const rateOf = (p: PhaseResult) => p.callsPerSec;
  const spread = (r: number[]) => `${formatRatio(median(r))} (${formatRatio(Math.min(...r))}–${formatRatio(Math.max(...r))})`;
  const throughputTable = markdownTable(
    ["server", "server CPU µs/call (median)", "÷ memory per round: median (range)", "calls/s (median)", "÷ memory", "p50 ms", "p99 ms"],
    THROUGHPUT_KINDS.map((k) => [
      THROUGHPUT_LABEL[k],
      formatNumber(median(of(k).map(cpuOf)), 1),
      k === "memory" ? "1.00×" : spread(ratios(k, cpuOf)),
      formatNumber(median(of(k).map(rateOf))),
      k === "memory" ? "1.00×" : formatRatio(median(ratios(k, rateOf))),
      formatNumber(median(of(k).map((p) => p.p50Ms)), 2),
      formatNumber(median(of(k).map((p) => p.p99Ms)), 2),
    ]),
  );
  // With --server-dir, each round's this build ÷ that build too, so the target's spread can be read.
  const withBase = opts.baseline !== undefined;
  const vsBaseline = withBase ? of("sqlite").map((p, i) => p.serverCpuPerCall / of("sqlite-baseline")[i]!.serverCpuPerCall) : [];
  const roundsTable = markdownTable(
    [
      "round",
      "memory µs/call",
      "sqlite µs/call",
      "no-log µs/call",
      "sqlite ÷ memory",
      "no-log ÷ memory",
      ...(withBase ? ["--server-dir sqlite µs/call", "sqlite ÷ --server-dir sqlite"] : []),
    ],
    of("memory").map((p, i) => [
      String(i + 1),
      formatNumber(p.serverCpuPerCall, 1),
      formatNumber(of("sqlite")[i]!.serverCpuPerCall, 1),
      formatNumber(of("sqlite-nolog")[i]!.serverCpuPerCall, 1),
      formatRatio(ratios("sqlite", cpuOf)[i]),
      formatRatio(ratios("sqlite-nolog", cpuOf)[i]),
      ...(withBase ? [formatNumber(of("sqlite-baseline")[i]!.serverCpuPerCall, 1), formatRatio(vsBaseline[i])] : []),
    ]),
  );
  const throughputTargets: Target[] = [
    { what: "SendMessage server CPU per call, sqlite ÷ memory (median of rounds)", actual: median(ratios("sqlite", cpuOf)), op: "<=", limit: 1.25 },
    { what: "SendMessage calls/s, sqlite ÷ memory", actual: median(ratios("sqlite", rateOf)), op: ">=", limit: 0.5 },
    ...(opts.baseline === undefined
      ? []
      : [
          {
            what: `SendMessage server CPU per call on SQLite, this build ÷ the --server-dir build (median of rounds; range ${formatRatio(Math.min(...vsBaseline))}–${formatRatio(Math.max(...vsBaseline))})`,
            actual: median(vsBaseline),
            op: "<=" as const,
            limit: 1.1,
          },
        ]),
  ];
  const throughputSection = [
    `### Blocking SendMessage, trivial agent, ${cfg.inFlight} calls in flight, empty stores: ${cfg.rounds} interleaved rounds of ${formatNumber(Math.ceil(cfg.calls / cfg.rounds))} calls after ${formatNumber(cfg.warmup)} warm-up`,
    "",
    throughputTable,
    "",
    "SQLite with the default durability (`process`: WAL, a commit survives a crash of the process). Ratios are taken per round (the three servers measured back to back, the order turning), then the median.",
    "",
    roundsTable,
    ...(tp.profiles.length > 0
      ? [
          "",
          `### Where the server's CPU goes: SendMessage (V8 CPU profile, ${formatNumber(Math.ceil(cfg.calls / cfg.rounds) * 2)} calls, a separate run)`,
          "",
          ...tp.profiles,
        ]
      : []),
  ];
  const flags = `${opts.quick ? " --quick" : ""}${opts.throughputOnly ? " --throughput-only" : ""}${opts.profile ? " --profile" : ""}${opts.baseline ? ` --server-dir=${opts.baseline}` : ""}`;
  const command = `npm run build && npm run bench -- stores${flags}`;
  const header = [
    `## Stores benchmark: SQLite vs memory store${opts.quick ? " (quick)" : ""}`,
    "",
    `Reproduce: \`${command}\``,
    "",
    `${startedAt.toISOString()} · Node ${process.version} · ${cpus().length} × ${cpus()[0]?.model ?? "?"} · load average ${load0.toFixed(2)} at start (shared machine)`,
    "",
  ];
  // The runner writes the report to bench/results/.
  const save = (report: string) => report;
  if (opts.throughputOnly) return save([...header, ...throughputSection, "", "### Targets", "", targetsTable(throughputTargets)].join("\n"));

  const memoryStartup = await startupMs("memory", undefined, cfg.startupRuns);
  const sizes: SizeRow[] = [];
  for (const n of cfg.sqliteSizes) sizes.push(await sqliteAt(n, cfg, log));
  sizes.push(...(await memoryAt(cfg, log)));

  const ms = (v: number[] | undefined) => (v ? `${formatNumber(median(v))} (${v.map((x) => formatNumber(x)).join(", ")})` : "–");
  const sizeTable = markdownTable(
    [
      "store",
      "stored tasks",
      "filled by",
      "file MB",
      "start-up ms, median (runs)",
      "RSS after start MB",
      "RSS after work MB",
      "heap+external MB",
      "ListTasks CPU µs/call",
      "ListTasks p50 ms",
      "total_size",
      "SendMessage CPU µs/call",
      "SendMessage calls/s",
    ],
    [
      ["memory", "0", "–", "–", ms(memoryStartup), "–", "–", "–", "–", "–", "–", "–", "–"],
      ...sizes.map((r) => [
        r.store,
        formatNumber(r.tasks),
        r.fill,
        r.fileMB === undefined ? "–" : formatNumber(r.fileMB),
        ms(r.startup),
        r.rssStart === undefined ? "–" : MB(r.rssStart),
        MB(r.rss),
        MB(r.heap),
        formatNumber(r.list.serverCpuPerCall),
        formatNumber(r.list.p50Ms, 2),
        formatNumber(r.totalSize),
        r.send ? formatNumber(r.send.serverCpuPerCall) : "–",
        r.send ? formatNumber(r.send.callsPerSec) : "–",
      ]),
    ],
  );

  const sq = sizes.filter((r) => r.store === "sqlite");
  const mem = sizes.filter((r) => r.store === "memory");
  const [sqSmall, sqBig] = [sq[0]!, sq.at(-1)!];
  const [memSmall, memBig] = [mem[0]!, mem.at(-1)!];
  const n = (v: number) => formatNumber(v);
  const targets: Target[] = [
    ...throughputTargets,
    { what: `sqlite RSS after work at ${n(sqBig.tasks)} vs ${n(sqSmall.tasks)} tasks (flat)`, actual: sqBig.rss / sqSmall.rss, op: "<=", limit: 1.25 },
    { what: `sqlite start-up with ${n(sqBig.tasks)} tasks (median)`, actual: median(sqBig.startup!), op: "<", limit: 2_000, format: (v) => `${n(v)} ms` },
    {
      what: `sqlite ListTasks CPU/call at ${n(sqBig.tasks)} vs ${n(sqSmall.tasks)} tasks (flat)`,
      actual: sqBig.list.serverCpuPerCall / sqSmall.list.serverCpuPerCall,
      op: "<=",
      limit: 1.5,
    },
    {
      what: `memory ListTasks CPU/call at ${n(memBig.tasks)} vs ${n(memSmall.tasks)} tasks (flat), for comparison`,
      actual: memBig.list.serverCpuPerCall / memSmall.list.serverCpuPerCall,
      op: "<=",
      limit: 1.5,
    },
  ];
  const report = [
    ...header,
    ...throughputSection,
    "",
    `### Store size: start-up, RSS, ListTasks (page of 50, first page, ${cfg.listInFlight} in flight), SendMessage (${formatNumber(cfg.sizedCalls)} calls)`,
    "",
    sizeTable,
    "",
    `SQLite: a fresh data directory per size, filled by \`bench/lib/sqlite-prefill.ts\` in its own process (the first 1,000 tasks through the repository, the rest as rows like them), ` +
      `then the server started on it: start-up is the time from spawning the process to its "listening on" log line; RSS after start and after the ListTasks and SendMessage calls, after forced GC. ` +
      `The memory store can only be filled through the API, so it is filled with blocking SendMessage calls` +
      `${memBig.tasks < sqBig.tasks ? ` and stops at ${formatNumber(memBig.tasks)} tasks (at a few thousand calls/s, ${formatNumber(sqBig.tasks)} would take too long)` : ""}.`,
    "",
    "### Targets",
    "",
    targetsTable(targets),
  ].join("\n");
  return save(report);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  runStores({
    quick: process.argv.includes("--quick"),
    profile: process.argv.includes("--profile"),
    throughputOnly: process.argv.includes("--throughput-only"),
  }).then(
    (report) => process.stdout.write(`${report}\n`),
    (err: unknown) => {
      process.stderr.write(`${(err as Error)?.stack ?? err}\n`);
      process.exit(1);
    },
  );
}
