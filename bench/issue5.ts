/**
 * Issue 5's benchmark: our server on the SQLite store side by side with the memory store in
 * one run. Blocking SendMessage (trivial agent) on each; then stores of growing size: the
 * SQLite file prefilled directly (bench/lib/sqlite-prefill.ts, in its own process) and the
 * server started on it (start-up time, RSS, ListTasks, SendMessage); the memory store filled
 * through SendMessage (its only way in).
 *
 *   npm run bench -- issue5 [--quick]
 *   node --import tsx bench/issue5.ts [--quick]
 *
 * Our server runs compiled (dist/, run `npm run build` first).
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync, existsSync } from "node:fs";
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
import { comparisonTable, formatNumber, markdownTable, targetsTable, type Target } from "./lib/table.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const RESULTS = join(ROOT, "bench", "results");
const SEND = "/lf.a2a.v1.A2AService/SendMessage";
const LIST = "/lf.a2a.v1.A2AService/ListTasks";
const A2A_METADATA = { "a2a-version": "1.0" };
const STORE_FILE = "tasks.sqlite"; // src/app.ts STORE_FILE_NAME

export interface Issue5Options {
  readonly quick: boolean;
}

const FULL = {
  inFlight: 32,
  warmup: 2_000,
  calls: 20_000,
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
  warmup: 500,
  calls: 5_000,
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

function start(store: Store, dataDir: string | undefined, logLevel = "warn"): Promise<ServerProcess> {
  return startServerProcess({
    name: `ours (${store})`,
    script: join(ROOT, "dist/src/main.js"),
    cwd: ROOT,
    captureStdout: logLevel !== "warn",
    env: (port) => ({
      A2A_LISTEN: `127.0.0.1:${port}`,
      A2A_LOG_LEVEL: logLevel,
      A2A_LOG_FORMAT: "json",
      A2A_STORE: store,
      ...(dataDir ? { A2A_DATA_DIR: dataDir } : {}),
      A2A_CARD_LISTEN: "off",
      A2A_AGENT_MODULE: "bench/agents/trivial-agent.mjs",
    }),
  });
}

async function serving(store: Store, dataDir?: string): Promise<{ server: ServerProcess; lc: LoadClient }> {
  const server = await start(store, dataDir);
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
  const dir = mkdtempSync(join(tmpdir(), "a2a-bench-issue5-"));
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

async function throughput(store: Store, cfg: typeof FULL): Promise<{ store: Store; phase: PhaseResult }> {
  const dir = store === "sqlite" ? mkdtempSync(join(tmpdir(), "a2a-bench-issue5-")) : undefined;
  const { server, lc } = await serving(store, dir);
  try {
    const load = { path: SEND, request: sendRequest, inFlight: cfg.inFlight };
    await drive(server, lc, load, cfg.warmup);
    return { store, phase: await measurePhase(server, lc, { ...load, calls: cfg.calls }) };
  } finally {
    lc.close();
    await server.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

const MB = (b: number) => formatNumber(b / 1024 / 1024, 1);

export async function runIssue5(opts: Issue5Options): Promise<string> {
  const cfg = opts.quick ? QUICK : FULL;
  if (!existsSync(join(ROOT, "dist/src/main.js"))) throw new Error("dist/src/main.js is missing: run `npm run build` first");
  mkdirSync(RESULTS, { recursive: true });
  const log = (s: string) => process.stderr.write(`[issue5] ${s}\n`);
  const startedAt = new Date();
  const load0 = loadavg()[0]!;

  log(`throughput: ${cfg.warmup} warm-up + ${cfg.calls} measured blocking SendMessage calls, ${cfg.inFlight} in flight, per store`);
  const memory = await throughput("memory", cfg);
  const sqlite = await throughput("sqlite", cfg);
  const memoryStartup = await startupMs("memory", undefined, cfg.startupRuns);
  const sizes: SizeRow[] = [];
  for (const n of cfg.sqliteSizes) sizes.push(await sqliteAt(n, cfg, log));
  sizes.push(...(await memoryAt(cfg, log)));

  const label = (r: { store: Store }) => r.store;
  const throughputTable = comparisonTable(
    [memory, sqlite],
    label,
    [
      { header: "calls/s", value: (r) => r.phase.callsPerSec, ratio: true },
      { header: "server CPU µs/call", value: (r) => r.phase.serverCpuPerCall, ratio: true },
      { header: "p50 ms", value: (r) => r.phase.p50Ms, digits: 2, ratio: true },
      { header: "p99 ms", value: (r) => r.phase.p99Ms, digits: 2, ratio: true },
      { header: "client CPU µs/call", value: (r) => r.phase.clientCpuPerCall },
    ],
    [memory],
  );
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
    { what: "SendMessage calls/s, sqlite vs memory", actual: sqlite.phase.callsPerSec / memory.phase.callsPerSec, op: ">=", limit: 0.5 },
    {
      what: "SendMessage calls per server CPU second, sqlite vs memory",
      actual: memory.phase.serverCpuPerCall / sqlite.phase.serverCpuPerCall,
      op: ">=",
      limit: 0.5,
    },
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
  const command = `npm run build && npm run bench -- issue5${opts.quick ? " --quick" : ""}`;
  const report = [
    `## Issue 5 benchmark: SQLite vs memory store${opts.quick ? " (quick)" : ""}`,
    "",
    `Reproduce: \`${command}\``,
    "",
    `${startedAt.toISOString()} · Node ${process.version} · ${cpus().length} × ${cpus()[0]?.model ?? "?"} · load average ${load0.toFixed(2)} at start`,
    "",
    `### Blocking SendMessage, trivial agent, ${cfg.inFlight} calls in flight, ${formatNumber(cfg.calls)} calls after ${formatNumber(cfg.warmup)} warm-up, empty store`,
    "",
    throughputTable,
    "",
    "Ratios to the memory store in parentheses. SQLite with the default durability (`process`: WAL, a commit survives a crash of the process).",
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
  const file = join(RESULTS, `issue5-${startedAt.toISOString().replace(/[:.]/g, "-")}${opts.quick ? "-quick" : ""}.md`);
  writeFileSync(file, `${report}\n`);
  log(`written to ${file}`);
  return report;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  runIssue5({ quick: process.argv.includes("--quick") }).then(
    (report) => process.stdout.write(`${report}\n`),
    (err: unknown) => {
      process.stderr.write(`${(err as Error)?.stack ?? err}\n`);
      process.exit(1);
    },
  );
}
