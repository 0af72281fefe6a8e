/**
 * HTTP benchmark (issue 34 item 8): our server's JSON-RPC binding beside the official
 * @a2a-js/sdk's own HTTP server (its express app with jsonRpcHandler, bench/servers/sdk-http-server.ts),
 * each in a process of its own, one undici load client for both (keep-alive Pool, the same request
 * bytes to both), interleaved rounds, server CPU read from inside each server (lib/child-probe.mjs),
 * medians of per-round ratios.
 *
 *   npm run bench -- http [--quick] [--only=unary,stream,fanout,v03]
 *
 *   unary:  blocking SendMessage, trivial agent, 32 in flight: our CPU per call ÷ the SDK's;
 *   stream: one SendStreamingMessage whose agent appends N chunks to one artifact as fast as the
 *           server takes them: CPU per chunk, the SDK's ÷ ours;
 *   fanout: on our server only, 500 SubscribeToTask SSE streams × 1,000 chunks, parsed with
 *           eventsource-parser in two subscriber processes: does every subscriber get every
 *           chunk's content, in order, and how long did it take.
 *   v03:    on our server only, a v0.3 `message/send` beside a v1.0 `SendMessage` on one pool
 *           (issue 35 item 9): CPU per call, v0.3 ÷ v1.0, what the v0.3 translation costs.
 * Our server runs compiled (dist/, `npm run build` first), memory store, metrics off (the SDK has none).
 */
import { fork } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createParser } from "eventsource-parser";
import type { Pool } from "undici";
import { httpPool, postOnce, runHttpLoad, type HttpCall } from "./lib/http-load.js";
import type { LoadResult } from "./lib/load.js";
import { cpuMicros, startServerProcess, type ServerProcess } from "./lib/server-process.js";
import type { SseReport } from "./lib/sse-subscriber-child.js";
import { median, percentiles } from "./lib/stats.js";
import { formatNumber, markdownTable, targetsTable, type Target } from "./lib/table.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const PATH = "/a2a/jsonrpc";
const HEADERS = { "content-type": "application/json", "a2a-version": "1.0" };
const SSE_HEADERS = { ...HEADERS, accept: "text/event-stream" };

export interface HttpBenchOptions {
  readonly quick: boolean;
  /** Which figures to run (default all): unary, stream, fanout, v03. */
  readonly only?: readonly string[];
}

const FULL = { inFlight: 32, warmup: 3_000, calls: 24_000, rounds: 8, chunks: 5_000, sdkChunks: 5_000, streamRounds: 3, subscribers: 500, fanoutChunks: 1_000 };
const QUICK: typeof FULL = { ...FULL, warmup: 1_000, calls: 5_000, rounds: 4, sdkChunks: 1_000, streamRounds: 1 };

type Kind = "ours" | "sdk";
type Agent = "trivial" | "fanout";
const LABEL: Record<Kind, string> = { ours: "ours (JSON-RPC)", sdk: "@a2a-js/sdk express (JSON-RPC)" };

interface Served {
  readonly kind: Kind;
  readonly server: ServerProcess;
  readonly pool: Pool;
  /** Resolves with the content hash the fanout agent reports once it has published everything for a task. */
  published(taskId: string): Promise<string>;
}

async function start(kind: Kind, agent: Agent, connections: number, env: Record<string, string> = {}): Promise<Served> {
  const server =
    kind === "sdk"
      ? await startServerProcess({ name: LABEL.sdk, script: join(ROOT, "bench/servers/sdk-http-server.ts"), tsx: true, env: { BENCH_AGENT: agent } })
      : await startServerProcess({
          name: LABEL.ours,
          script: join(ROOT, "dist/src/main.js"),
          cwd: ROOT,
          env: (port) => ({
            A2A_LISTEN: "127.0.0.1:0",
            A2A_HTTP_LISTEN: `127.0.0.1:${port}`,
            A2A_METRICS_LISTEN: "off",
            A2A_STORE: "memory",
            A2A_LOG_LEVEL: "warn",
            A2A_LOG_FORMAT: "json",
            A2A_AGENT_MODULE: `bench/agents/${agent}-agent.mjs`,
            ...env,
          }),
        });
  const hashes = new Map<string, (hash: string) => void>();
  server.onMessage((m) => {
    const msg = m as { bench?: string; taskId: string; contentSha256: string };
    if (msg?.bench === "fanout-published") hashes.get(msg.taskId)?.(msg.contentSha256);
  });
  const pool = httpPool(`http://${server.address}`, connections);
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      await pool.request({ method: "GET", path: "/.well-known/agent-card.json" }).then((r) => r.body.dump());
      break;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`${server.name} did not answer: ${(error as Error).message}\n${server.stderr()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return { kind, server, pool, published: (taskId) => new Promise((resolve) => hashes.set(taskId, resolve)) };
}

async function stop(servers: readonly Served[]): Promise<void> {
  for (const s of servers) {
    await s.pool.close();
    await s.server.stop();
  }
}

const rpc = (method: string, params: unknown, id: number | string = 1) => Buffer.from(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
const message = (messageId: string, text: string) => ({ messageId, role: "ROLE_USER", parts: [{ text }] });
const spread = (v: readonly number[], digits = 2) => `${formatNumber(Math.min(...v), digits)}–${formatNumber(Math.max(...v), digits)}`;

/* ---- 1. blocking SendMessage ---- */

interface UnaryPhase {
  readonly load: LoadResult;
  readonly cpuPerCall: number;
}

async function measureUnary(s: Served, call: HttpCall, inFlight: number, calls: number, expect = '"TASK_STATE_COMPLETED"'): Promise<UnaryPhase> {
  const before = await s.server.usage();
  const load = await runHttpLoad(s.pool, call, { inFlight, calls, expect });
  const after = await s.server.usage();
  if (load.errors > 0) throw new Error(`${s.server.name}: ${load.errors} of ${load.calls} calls failed, first: ${load.firstError}`);
  return { load, cpuPerCall: cpuMicros(before, after) / load.calls };
}

async function unaryFigure(cfg: typeof FULL, log: (s: string) => void): Promise<{ text: string; target: Target }> {
  const call: HttpCall = { path: PATH, headers: HEADERS, body: rpc("SendMessage", { message: message("bench-message-1", "What is 2 + 2?") }) };
  const servers = [await start("ours", "trivial", cfg.inFlight), await start("sdk", "trivial", cfg.inFlight)];
  try {
    for (const s of servers) await runHttpLoad(s.pool, call, { inFlight: cfg.inFlight, calls: cfg.warmup, expect: '"TASK_STATE_COMPLETED"' });
    for (const s of servers) await s.server.usageAfterGc(); // both measured after V8's first full collection (see unary.ts)
    for (const s of servers) await runHttpLoad(s.pool, call, { inFlight: cfg.inFlight, calls: Math.ceil(cfg.warmup / 3), expect: "" });
    const phases: Record<Kind, UnaryPhase[]> = { ours: [], sdk: [] };
    const per = Math.ceil(cfg.calls / cfg.rounds);
    for (let round = 0; round < cfg.rounds; round++) {
      for (const s of round % 2 === 0 ? servers : [...servers].reverse()) phases[s.kind].push(await measureUnary(s, call, cfg.inFlight, per));
      log(
        `unary round ${round + 1}/${cfg.rounds}: ours ${formatNumber(phases.ours.at(-1)!.cpuPerCall)} µs, SDK ${formatNumber(phases.sdk.at(-1)!.cpuPerCall)} µs`,
      );
    }
    const ratios = phases.ours.map((p, i) => p.cpuPerCall / phases.sdk[i]!.cpuPerCall);
    const rows = servers.map((s) => {
      const ps = phases[s.kind];
      const [p50, p99] = percentiles(Float64Array.from(ps.flatMap((p) => [...p.load.latenciesMs])), [50, 99]);
      return [
        LABEL[s.kind],
        formatNumber(median(ps.map((p) => p.cpuPerCall))),
        formatNumber(median(ps.map((p) => (p.load.calls * 1000) / p.load.elapsedMs))),
        formatNumber(p50, 2),
        formatNumber(p99, 2),
        formatNumber(ps[0]!.load.responseBytes),
      ];
    });
    const text = [
      `### 1. Blocking SendMessage over JSON-RPC, trivial agent, ${cfg.inFlight} in flight (${cfg.inFlight} keep-alive connections), ${formatNumber(cfg.calls)} calls per server in ${cfg.rounds} interleaved rounds`,
      "",
      markdownTable(["server", "CPU µs/call (median of rounds)", "calls/s", "p50 ms", "p99 ms", "response B"], rows),
      "",
      `Ours ÷ SDK, CPU per call, per round: ${ratios.map((r) => r.toFixed(2)).join(", ")}.`,
    ].join("\n");
    return {
      text,
      target: {
        what: `1. CPU per blocking SendMessage, ours ÷ SDK (median of ${cfg.rounds} rounds; ${spread(ratios)})`,
        actual: median(ratios),
        op: "<=",
        limit: 0.5,
      },
    };
  } finally {
    await stop(servers);
  }
}

/* ---- 2. one SSE stream of N chunks ---- */

interface StreamRun {
  readonly cpuMicros: number;
  readonly events: number;
  readonly chunks: number;
  readonly inOrder: boolean;
  readonly wallMs: number;
}

/**
 * One SendStreamingMessage of `n` chunks: the agent is told to go (over IPC) once the task's
 * event arrived, and the server's CPU is read from then until the stream ended. The client keeps
 * the raw bytes and parses them only after that, so that it keeps up (see streaming.ts).
 */
async function sseStream(s: Served, n: number, messageId: string, yieldEach: boolean): Promise<StreamRun> {
  const res = await s.pool.request({
    method: "POST",
    path: PATH,
    headers: SSE_HEADERS,
    body: rpc("SendStreamingMessage", { message: message(messageId, "stream") }),
  });
  if (res.statusCode !== 200) throw new Error(`${s.server.name}: HTTP ${res.statusCode}: ${(await res.body.text()).slice(0, 200)}`);
  const raw: Buffer[] = [];
  let before: ReturnType<ServerProcess["usage"]> | undefined;
  let goAt = 0;
  const decoder = new TextDecoder();
  const head = createParser({
    onEvent(event) {
      if (before !== undefined) return;
      const taskId = (JSON.parse(event.data) as { result?: { task?: { id: string } } }).result?.task?.id;
      if (taskId === undefined) throw new Error(`${s.server.name}: the stream began without the task: ${event.data.slice(0, 200)}`);
      before = s.server.usage();
      void before.then(() => {
        goAt = performance.now();
        s.server.send({ bench: "fanout-go", taskId, events: n, intervalMs: 0, yieldEach, padBytes: 0, replace: false });
      });
    },
  });
  for await (const chunk of res.body as AsyncIterable<Buffer>) {
    raw.push(chunk);
    if (before === undefined) head.feed(decoder.decode(chunk, { stream: true }));
  }
  const wallMs = performance.now() - goAt;
  const cpu = cpuMicros(await before!, await s.server.usage());
  let events = 0;
  let chunks = 0;
  let inOrder = true;
  const all = createParser({
    onEvent(event) {
      events++;
      const result = (JSON.parse(event.data) as { result?: { artifactUpdate?: { artifact?: { parts?: Array<{ text?: string }> } } } }).result;
      for (const part of result?.artifactUpdate?.artifact?.parts ?? []) if (!(part.text ?? "").startsWith(`#seq=${chunks++};`)) inOrder = false;
    },
  });
  all.feed(Buffer.concat(raw).toString("utf8"));
  return { cpuMicros: cpu, events, chunks, inOrder, wallMs };
}

/** A stream subject: our server at a pace, or the SDK's (its event bus is synchronous: one pace). */
interface Subject {
  readonly label: string;
  readonly served: Served;
  readonly yieldEach: boolean;
  readonly chunks: number;
}

async function streamFigure(cfg: typeof FULL, log: (s: string) => void): Promise<{ text: string; targets: Target[] }> {
  const [ours, sdk] = [await start("ours", "fanout", 2), await start("sdk", "fanout", 2)];
  const subjects: Subject[] = [
    { label: "ours, burst", served: ours!, yieldEach: false, chunks: cfg.chunks },
    { label: "ours, one chunk per turn", served: ours!, yieldEach: true, chunks: cfg.chunks },
    { label: "@a2a-js/sdk express", served: sdk!, yieldEach: true, chunks: cfg.sdkChunks },
  ];
  try {
    for (const s of subjects) await sseStream(s.served, 500, `warm-${s.label}`, s.yieldEach);
    for (const s of [ours!, sdk!]) await s.server.usageAfterGc();
    const runs = new Map<Subject, StreamRun[]>(subjects.map((s) => [s, []]));
    for (let round = 0; round < cfg.streamRounds; round++) {
      for (const s of round % 2 === 0 ? subjects : [...subjects].reverse()) {
        const run = await sseStream(s.served, s.chunks, `stream-${round}`, s.yieldEach);
        if (run.chunks !== s.chunks || !run.inOrder) throw new Error(`${s.label}: ${run.chunks} of ${s.chunks} chunks, in order: ${run.inOrder}`);
        runs.get(s)!.push(run);
        log(`stream round ${round + 1}/${cfg.streamRounds}: ${s.label} ${formatNumber(run.cpuMicros / s.chunks, 1)} µs/chunk, ${run.events} events`);
      }
    }
    const perChunk = (s: Subject) => runs.get(s)!.map((r) => r.cpuMicros / s.chunks);
    const sdkSubject = subjects[2]!;
    const ratiosOf = (s: Subject) => perChunk(sdkSubject).map((x, i) => x / perChunk(s)[i]!);
    const rows = subjects.map((s) => [
      s.label,
      formatNumber(s.chunks),
      formatNumber(median(perChunk(s)), 1),
      s === sdkSubject
        ? "1"
        : `${formatNumber(median(ratiosOf(s)))} (${ratiosOf(s)
            .map((r) => r.toFixed(0))
            .join(", ")})`,
      formatNumber(median(runs.get(s)!.map((r) => r.wallMs))),
      formatNumber(median(runs.get(s)!.map((r) => r.events))),
      runs.get(s)!.every((r) => r.inOrder && r.chunks === s.chunks) ? "yes" : "NO",
    ]);
    const lowerBound = cfg.sdkChunks < cfg.chunks;
    const text = [
      `### 2. One SendStreamingMessage over JSON-RPC (SSE), the agent appending chunks to one artifact, ${cfg.streamRounds} interleaved round(s)`,
      "",
      markdownTable(
        ["server, pace", "chunks", "CPU µs/chunk (median)", "SDK ÷ this, per round", "go → end ms", "SSE events on the wire", "every chunk, in order"],
        rows,
      ),
      "",
      "Burst: the agent writes as fast as the server takes them; ours then sends the appends that queued up as one event (A-32), so it writes fewer, larger events. " +
        "One chunk per turn: an event-loop turn after each chunk (an agent awaiting a model's tokens), about one event per chunk." +
        (lowerBound
          ? ` The SDK streamed ${formatNumber(cfg.sdkChunks)} chunks (its cost per chunk grows with the artifact, so SDK ÷ ours is a lower bound of the ratio at ${formatNumber(cfg.chunks)}).`
          : ""),
    ].join("\n");
    const target = (s: Subject): Target => ({
      what: `2. CPU per SSE chunk, SDK ÷ ${s.label} (median of ${cfg.streamRounds}; ${spread(ratiosOf(s), 0)})${lowerBound ? ", lower bound" : ""}`,
      actual: median(ratiosOf(s)),
      op: ">=",
      limit: 100,
    });
    return { text, targets: [target(subjects[0]!), target(subjects[1]!)] };
  } finally {
    await stop([ours!, sdk!]);
  }
}

/* ---- 3. many SSE subscribers ---- */

const SUBSCRIBER_CHILD = fileURLToPath(new URL("./lib/sse-subscriber-child.ts", import.meta.url));

async function fanoutRun(
  s: Served,
  subscribers: number,
  chunks: number,
  processes: number,
): Promise<{ reports: SseReport[]; hash: string; wallMs: number; cpuMicros: number }> {
  const created = JSON.parse(
    await postOnce(s.pool, {
      path: PATH,
      headers: HEADERS,
      body: rpc("SendMessage", { message: message(`fanout-${Date.now()}`, "stream"), configuration: { returnImmediately: true } }),
    }),
  ) as { result?: { task?: { id: string } } };
  const taskId = created.result?.task?.id;
  if (taskId === undefined) throw new Error(`SendMessage did not answer with a task: ${JSON.stringify(created).slice(0, 200)}`);
  const children = Array.from({ length: processes }, () =>
    fork(SUBSCRIBER_CHILD, [], { execArgv: ["--import", "tsx"], stdio: ["ignore", "inherit", "inherit", "ipc"] }),
  );
  try {
    const next = (child: (typeof children)[number], type: string) =>
      Promise.race([
        new Promise<unknown>((resolve) => child.on("message", (m: { type?: string }) => m?.type === type && resolve(m))),
        once(child, "exit").then(([code]) => Promise.reject(new Error(`subscriber process exited (${code})`))),
      ]);
    const attached = children.map((c) => next(c, "attached"));
    const done = children.map((c) => next(c, "done") as Promise<SseReport>);
    for (const p of done) p.catch(() => undefined);
    const per = Math.ceil(subscribers / processes);
    children.forEach((c, i) =>
      c.send({
        cmd: "start",
        origin: `http://${s.server.address}`,
        path: PATH,
        headers: SSE_HEADERS,
        body: rpc("SubscribeToTask", { id: taskId }).toString(),
        subscribers: Math.min(per, subscribers - i * per),
        expectArtifacts: chunks,
      }),
    );
    await Promise.all(attached);
    const before = await s.server.usage();
    const goAt = performance.timeOrigin + performance.now();
    const hash = s.published(taskId);
    s.server.send({ bench: "fanout-go", taskId, events: chunks, intervalMs: 0, yieldEach: false, padBytes: 0, replace: false, hash: true });
    const reports = await Promise.all(done);
    const after = await s.server.usage();
    return { reports, hash: await hash, wallMs: Math.max(...reports.map((r) => r.lastReceiveAt)) - goAt, cpuMicros: cpuMicros(before, after) };
  } finally {
    for (const c of children) if (c.exitCode === null) c.kill();
  }
}

async function fanoutFigure(cfg: typeof FULL, log: (s: string) => void): Promise<{ text: string; target: Target }> {
  // The fan-out benchmark's stream budgets (A-32), so that 500 streams' backlogs fit.
  const budgets = { A2A_STREAM_BUFFER_EVENTS: "256", A2A_STREAM_BACKLOG_BYTES: String(1024 * 1024), A2A_STREAMS_BACKLOG_BYTES: String(64 * 1024 * 1024) };
  const [s] = [await start("ours", "fanout", 4, budgets)];
  try {
    await fanoutRun(s!, 50, 100, 1); // warm-up
    const run = await fanoutRun(s!, cfg.subscribers, cfg.fanoutChunks, 2);
    const sum = (f: (r: SseReport) => number) => run.reports.reduce((n, r) => n + f(r), 0);
    const matched = run.reports.reduce((n, r) => n + (r.contentHashes[run.hash] ?? 0), 0);
    const complete = sum((r) => r.complete);
    const problem = run.reports.find((r) => r.firstProblem !== undefined)?.firstProblem;
    log(`fan-out: ${complete}/${cfg.subscribers} complete, ${matched} with the agent's content, ${formatNumber(run.wallMs)} ms`);
    const rows = [
      ["subscribers (SubscribeToTask SSE streams, 2 processes)", formatNumber(cfg.subscribers)],
      ["chunks the agent published", formatNumber(cfg.fanoutChunks)],
      ["streams complete: task, chunks 0…n-1 in order, COMPLETED, end", formatNumber(complete)],
      ["streams whose chunk texts hash to what the agent published", formatNumber(matched)],
      ["streams out of order", formatNumber(sum((r) => r.outOfOrder))],
      ["chunks received, all streams", `${formatNumber(sum((r) => r.chunks))} of ${formatNumber(cfg.subscribers * cfg.fanoutChunks)}`],
      ["SSE events received, all streams", formatNumber(sum((r) => r.events))],
      ["go → last event received, ms", formatNumber(run.wallMs)],
      [
        "server CPU per delivered chunk, µs",
        formatNumber(
          run.cpuMicros /
            Math.max(
              1,
              sum((r) => r.chunks),
            ),
          2,
        ),
      ],
      ["subscriber processes' CPU, ms", formatNumber(sum((r) => r.cpuMicros) / 1000)],
      ...(problem !== undefined ? [["first problem", problem.slice(0, 200)]] : []),
    ];
    const text = [
      `### 3. ${cfg.subscribers} SSE subscribers × ${formatNumber(cfg.fanoutChunks)} chunks on our server (correctness)`,
      "",
      markdownTable(["", ""], rows),
    ].join("\n");
    return {
      text,
      target: {
        what: "3. subscribers that got every chunk's content, in order",
        actual: Math.min(complete, matched),
        op: ">=",
        limit: cfg.subscribers,
        format: (v) => formatNumber(v),
      },
    };
  } finally {
    await stop([s!]);
  }
}

/* ---- 4. v0.3 message/send beside v1.0 SendMessage, on our server ---- */

const V03_COMPLETED = '"state":"completed"';

/** The same blocking send in both generations' JSON-RPC: v1.0 with its header, v0.3 on its own path without one (R-V03-10). */
function sendCalls(): Record<"v1" | "v03", HttpCall> {
  const text = "What is 2 + 2?";
  const v03Message = { kind: "message", messageId: "bench-message-1", role: "user", parts: [{ kind: "text", text }] };
  return {
    v1: { path: PATH, headers: HEADERS, body: rpc("SendMessage", { message: message("bench-message-1", text) }) },
    v03: { path: "/a2a/v0.3/jsonrpc", headers: { "content-type": "application/json" }, body: rpc("message/send", { message: v03Message }) },
  };
}

async function v03Figure(cfg: typeof FULL, log: (s: string) => void): Promise<{ text: string; target: Target }> {
  const calls = sendCalls();
  const expects = { v1: '"TASK_STATE_COMPLETED"', v03: V03_COMPLETED };
  const generations = ["v1", "v03"] as const;
  const s = await start("ours", "trivial", cfg.inFlight);
  try {
    for (const g of generations) await runHttpLoad(s.pool, calls[g], { inFlight: cfg.inFlight, calls: cfg.warmup, expect: expects[g] });
    await s.server.usageAfterGc();
    for (const g of generations) await runHttpLoad(s.pool, calls[g], { inFlight: cfg.inFlight, calls: Math.ceil(cfg.warmup / 3), expect: "" });
    const phases: Record<(typeof generations)[number], UnaryPhase[]> = { v1: [], v03: [] };
    const per = Math.ceil(cfg.calls / cfg.rounds);
    for (let round = 0; round < cfg.rounds; round++) {
      for (const g of round % 2 === 0 ? generations : [...generations].reverse())
        phases[g].push(await measureUnary(s, calls[g], cfg.inFlight, per, expects[g]));
      log(
        `v03 round ${round + 1}/${cfg.rounds}: v1.0 ${formatNumber(phases.v1.at(-1)!.cpuPerCall)} µs, v0.3 ${formatNumber(phases.v03.at(-1)!.cpuPerCall)} µs`,
      );
    }
    const ratios = phases.v03.map((p, i) => p.cpuPerCall / phases.v1[i]!.cpuPerCall);
    const label = { v1: "v1.0 SendMessage (/a2a/jsonrpc, A2A-Version 1.0)", v03: "v0.3 message/send (/a2a/v0.3/jsonrpc)" };
    const rows = generations.map((g) => {
      const ps = phases[g];
      const [p50, p99] = percentiles(Float64Array.from(ps.flatMap((p) => [...p.load.latenciesMs])), [50, 99]);
      const cpu = ps.map((p) => p.cpuPerCall);
      return [
        label[g],
        formatNumber(median(cpu)),
        spread(cpu, 0),
        formatNumber(median(ps.map((p) => (p.load.calls * 1000) / p.load.elapsedMs))),
        formatNumber(p50, 2),
        formatNumber(p99, 2),
        formatNumber(ps[0]!.load.responseBytes),
      ];
    });
    const text = [
      `### 4. Blocking send over JSON-RPC, v0.3 beside v1.0, our server only, trivial agent, ${cfg.inFlight} in flight, ${formatNumber(cfg.calls)} calls per generation in ${cfg.rounds} interleaved rounds on one pool`,
      "",
      markdownTable(["request", "CPU µs/call (median of rounds)", "range", "calls/s", "p50 ms", "p99 ms", "response B"], rows),
      "",
      `v0.3 ÷ v1.0, CPU per call, per round: ${ratios.map((r) => r.toFixed(2)).join(", ")}.`,
    ].join("\n");
    return {
      text,
      target: {
        what: `4. CPU per blocking send, v0.3 ÷ v1.0 (issue 35 item 9; median of ${cfg.rounds} rounds; ${spread(ratios)})`,
        actual: median(ratios),
        op: "<=",
        limit: 1.3,
      },
    };
  } finally {
    await stop([s]);
  }
}

export async function runHttp(options: HttpBenchOptions): Promise<string> {
  if (!existsSync(join(ROOT, "dist/src/main.js"))) throw new Error("dist/src/main.js is missing: run `npm run build` first");
  const cfg = options.quick ? QUICK : FULL;
  const log = (s: string) => process.stderr.write(`[http] ${s}\n`);
  const want = (name: string) => options.only === undefined || options.only.includes(name);
  const startedAt = new Date();
  const loadAtStart = loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");
  const figures: Array<{ text: string; targets: Target[] }> = [];
  if (want("unary")) figures.push(await unaryFigure(cfg, log).then((f) => ({ text: f.text, targets: [f.target] })));
  if (want("stream")) figures.push(await streamFigure(cfg, log));
  if (want("fanout")) figures.push(await fanoutFigure(cfg, log).then((f) => ({ text: f.text, targets: [f.target] })));
  if (want("v03")) figures.push(await v03Figure(cfg, log).then((f) => ({ text: f.text, targets: [f.target] })));
  const only = options.only === undefined ? "" : ` --only=${options.only.join(",")}`;
  return [
    `## HTTP benchmark: JSON-RPC, ours beside the @a2a-js/sdk express server${options.quick ? " (quick)" : ""}`,
    "",
    `Reproduce: \`npm run build && npm run bench -- http${options.quick ? " --quick" : ""}${only}\``,
    "",
    `${startedAt.toISOString()} · Node ${process.version} · ${cpus().length} × ${cpus()[0]?.model ?? "?"} · load average ${loadAtStart} at start, ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")} at end (a shared machine: judge ratios, not absolute figures)`,
    "",
    "Our server: compiled, memory store, metrics off, default SSE keep-alive. The SDK: express 5, jsonRpcHandler, DefaultRequestHandler + InMemoryTaskStore. Server CPU is user + system time read inside each server process.",
    "",
    ...figures.flatMap((f) => [f.text, ""]),
    "### Targets",
    "",
    targetsTable(figures.flatMap((f) => f.targets)),
  ].join("\n");
}
