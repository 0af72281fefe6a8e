/*
 * Issue 34 item 4 across a restart and across replicas, over both HTTP bindings (JSON-RPC and
 * HTTP+JSON): with the stream-resume extension each SSE event's `id` is its cursor, and a
 * reconnect with Last-Event-ID continues exactly after it — on a SQLite server started again on
 * the same data dir, and on another replica of the same PostgreSQL database. A client that
 * disconnects ends its subscription, never the task (R-BIND-36). The replicas are two apps in this
 * process, each with its own pool and event relay: only the database joins them (the agent must
 * be driven by the test, which a server process's agent cannot be). gRPC's resume cases:
 * test/streaming/resume.test.ts and test/replicas/replicas.test.ts.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { EventSourceMessage } from "eventsource-parser";
import { STREAM_RESUME_EXTENSION, openStreamCount } from "../../src/streams/index.js";
import type { Agent } from "../../src/lifecycle/ports/agent.js";
import { readSse, type SseStream } from "../jsonrpc/sse-reader.js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import { createTestDatabase, type TestDatabase } from "../support/postgres/database.js";
import { controlledAgent } from "../streaming/support.js";

/** Wire JSON, read loosely: the expectations check its shape. */
type Json = Record<string, any>;

/** A server with its HTTP listener on, and where its two HTTP bindings are. */
interface HttpServer {
  readonly s: A2ATestServer;
  readonly jsonRpc: string;
  readonly rest: string;
}

async function startHttpServer(agent: Agent, env: Record<string, string>): Promise<HttpServer> {
  const s = await startA2AServer({ agent, env: { A2A_HTTP_LISTEN: "127.0.0.1:0", A2A_STREAM_HEARTBEAT: "off", ...env }, advertiseBoundAddress: true });
  const url = (binding: string) => s.app.card.supportedInterfaces.find((i) => i.protocolBinding === binding)?.url ?? "";
  return { s, jsonRpc: url("JSONRPC"), rest: url("HTTP+JSON") };
}

const RESUME = { "A2A-Extensions": STREAM_RESUME_EXTENSION };

/** What the test does over one HTTP binding. */
interface SseBinding {
  readonly name: string;
  /** A streaming send of `text` with the resume extension on. */
  stream(server: HttpServer, text: string): Promise<Response>;
  /** Re-subscribes to the task after the event whose SSE id was `lastEventId`. */
  resume(server: HttpServer, taskId: string, lastEventId: string): Promise<Response>;
  /** The StreamResponse an SSE event carries. */
  payloadOf(event: EventSourceMessage): Json;
  getTask(server: HttpServer, taskId: string): Promise<Json>;
}

const jsonRpcPost = (server: HttpServer, method: string, params: unknown, headers: Record<string, string> = {}) =>
  fetch(server.jsonRpc, {
    method: "POST",
    headers: { "Content-Type": "application/json", "A2A-Version": "1.0", Accept: "text/event-stream", ...headers },
    body: JSON.stringify({ jsonrpc: "2.0", id: method, method, params }),
  });

const restCall = (server: HttpServer, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  fetch(server.rest + path, {
    method,
    headers: { "A2A-Version": "1.0", Accept: "text/event-stream", ...(body === undefined ? {} : { "Content-Type": "application/a2a+json" }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

const userMessage = (text: string) => ({ message: { messageId: `m-${Math.random().toString(36).slice(2)}`, role: "ROLE_USER", parts: [{ text }] } });

const BINDINGS: SseBinding[] = [
  {
    name: "JSON-RPC",
    stream: (server, text) => jsonRpcPost(server, "SendStreamingMessage", userMessage(text), RESUME),
    resume: (server, id, lastEventId) => jsonRpcPost(server, "SubscribeToTask", { id }, { ...RESUME, "Last-Event-ID": lastEventId }),
    payloadOf: (event) => (JSON.parse(event.data) as { result: Json }).result,
    getTask: async (server, id) => ((await (await jsonRpcPost(server, "GetTask", { id })).json()) as { result: Json }).result,
  },
  {
    name: "HTTP+JSON",
    stream: (server, text) => restCall(server, "POST", "/message:stream", userMessage(text), RESUME),
    resume: (server, id, lastEventId) => restCall(server, "GET", `/tasks/${id}:subscribe`, undefined, { ...RESUME, "Last-Event-ID": lastEventId }),
    payloadOf: (event) => JSON.parse(event.data) as Json,
    getTask: async (server, id) => (await (await restCall(server, "GET", `/tasks/${id}`)).json()) as Json,
  },
];

/** An event as a comparable key: its kind, state or artifact, and text. */
function eventKey(payload: Json): string {
  if (payload["task"]) return `task:${payload["task"].status.state}`;
  if (payload["statusUpdate"]) return `status:${payload["statusUpdate"].status.state}:${payload["statusUpdate"].status.message?.parts?.[0]?.text ?? ""}`;
  if (payload["artifactUpdate"]) return `artifact:${payload["artifactUpdate"].artifact.artifactId}:${payload["artifactUpdate"].artifact.name}`;
  return `other:${Object.keys(payload).join(",")}`;
}

/** Reads `count` events (each must carry an SSE id: the extension is on). */
/** `promise`, or a failure naming `what` after WAIT_MS (so the test's finally closes its servers). */
function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no ${what} within ${WAIT_MS} ms`)), WAIT_MS)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** Reads `count` events (each must carry an SSE id: the extension is on). */
async function take(reader: SseStream, count: number): Promise<EventSourceMessage[]> {
  const events: EventSourceMessage[] = [];
  for (let k = 0; k < count; k++) {
    const event = await within(reader.next(), `event ${k + 1} of ${count}`);
    if (event === undefined) throw new Error(`the stream ended after ${k} events, ${count} expected`);
    expect(event.id).toMatch(/^[A-Za-z0-9_-]+$/);
    events.push(event);
  }
  return events;
}

/** The events up to the stream's end. */
const untilEnd = (reader: SseStream) => within(reader.rest(), "end of the stream");

/** The streams a test opened, dropped after it (also when it fails, so the next test starts with none open). */
const opened: SseStream[] = [];
afterEach(() => Promise.all(opened.splice(0).map((reader) => reader.abandon().catch(() => undefined))));

async function openStream(response: Response): Promise<SseStream> {
  expect([response.status, response.headers.get("content-type")]).toEqual([200, "text/event-stream"]);
  expect(response.headers.get("a2a-extensions")).toBe(STREAM_RESUME_EXTENSION);
  const reader = readSse(response);
  opened.push(reader);
  return reader;
}

const COMPLETED = "TASK_STATE_COMPLETED";
/** Each test waits on the server's events; a missing one fails it in this long, not in jest's 30 s. */
const TEST_TIMEOUT_MS = 10_000;
/** How long one expected event (or a stream's end) may take. */
const WAIT_MS = 3000;

/** Resolves once the server has closed every stream (in this process): a client that left ended its subscription. */
async function untilNoStreamOpen(): Promise<void> {
  for (let k = 0; k < 200 && openStreamCount() > 0; k++) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(openStreamCount()).toBe(0);
}

/** The controlled agent, declaring it can resume: a restart keeps its WORKING tasks and hands their resumed runs to the test too. */
/**
 * The controlled agent (each run handed to the test), whose runs also end when the server stops
 * them (so a stop, or a failed test's close, never waits on a run the test no longer drives).
 * `resumable`: it declares it can resume, so a stop keeps its WORKING tasks and the next start
 * hands their resumed runs to the test too.
 */
function stoppableAgent(resumable: boolean): ReturnType<typeof controlledAgent> {
  const ctl = controlledAgent();
  const execute: Agent["execute"] = (ctx) =>
    Promise.race([ctl.agent.execute(ctx), new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve(), { once: true }))]);
  return { ...ctl, agent: { ...ctl.agent, execute, ...(resumable ? { resume: execute } : {}) } };
}

describe("SQLite: resume by Last-Event-ID after the server is stopped and started again on the same data dir", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  test.each(BINDINGS)(
    "A-33, R-BIND-36, issue 34 item 4 ($name): stopped mid-task, started again: the events written before the stop from the log, then the resumed run's live ones, no duplicate, no gap, to COMPLETED",
    async (binding) => {
      const dir = mkdtempSync(join(tmpdir(), "a2a-sse-resume-")); // its own: a failed test leaves no lock behind for the next
      dirs.push(dir);
      const env = { A2A_STORE: "sqlite", A2A_DATA_DIR: dir };
      const before = stoppableAgent(true);
      const first = await startHttpServer(before.agent, env);
      let taskId: string;
      let seen: EventSourceMessage[];
      try {
        const response = binding.stream(first, "durable"); // the head comes with the first event the agent makes
        const run = await before.nextRun();
        await run.ctx.working("on it");
        const reader = await openStream(await response);
        await run.ctx.artifact({ artifactId: "r", name: "r0", parts: ["zero"] });
        seen = await take(reader, 3);
        taskId = binding.payloadOf(seen[0]!)["task"].id as string;
        await reader.abandon(); // the client goes away mid-task
        await untilNoStreamOpen();
        await run.ctx.artifact({ artifactId: "r", name: "r1", parts: ["one"] }, { append: true });
        await run.ctx.artifact({ artifactId: "r", name: "r2", parts: ["two"] }, { append: true });
        expect(run.ctx.signal.aborted).toBe(false);
      } finally {
        await first.s.close(); // with the task still WORKING: an agent that can resume keeps it so
      }

      const after = stoppableAgent(true);
      const second = await startHttpServer(after.agent, env);
      try {
        const resumed = await openStream(await binding.resume(second, taskId, seen.at(-1)!.id!));
        const fromLog = await take(resumed, 2);
        // The restarted server resumes the run: its events arrive live on the resumed stream.
        const run = await after.nextRun();
        await run.ctx.artifact({ artifactId: "r", name: "r3", parts: ["three"] }, { append: true, lastChunk: true });
        await run.ctx.complete("done");
        run.finish();
        const live = await untilEnd(resumed);
        const all = [...seen, ...fromLog, ...live];
        expect(all.map((e) => eventKey(binding.payloadOf(e)))).toEqual([
          "task:TASK_STATE_SUBMITTED",
          "status:TASK_STATE_WORKING:on it",
          "artifact:r:r0",
          "artifact:r:r1",
          "artifact:r:r2",
          "artifact:r:r3",
          `status:${COMPLETED}:done`,
        ]);
        for (const event of live) expect(event.id).toMatch(/^[A-Za-z0-9_-]+$/);
        expect(new Set(all.map((e) => e.id)).size).toBe(all.length);
        const task = await binding.getTask(second, taskId);
        expect(task["status"].state).toBe(COMPLETED);
        expect(task["artifacts"].map((x: Json) => x.parts.map((p: Json) => p.text))).toEqual([["zero", "one", "two", "three"]]);
      } finally {
        await second.s.close();
      }
    },
    TEST_TIMEOUT_MS,
  );
});

describe("PostgreSQL: read on replica A, resume by Last-Event-ID on replica B", () => {
  let db: TestDatabase;
  let a: HttpServer;
  let b: HttpServer;
  const onA = stoppableAgent(false);
  beforeAll(async () => {
    db = await createTestDatabase("sseresume");
    const env = { A2A_STORE: "postgres", A2A_DATABASE_URL: db.url, A2A_DATABASE_POOL_SIZE: "2" };
    a = await startHttpServer(onA.agent, env);
    b = await startHttpServer(stoppableAgent(false).agent, env);
  });
  afterAll(async () => {
    await a?.s.close();
    await b?.s.close();
    await db?.drop();
  });

  test.each(BINDINGS)(
    "A-33, R-BIND-36 ($name): B gives exactly the rest from A's cursor, then A's live events, to COMPLETED; A's dropped client never stopped the task",
    async (binding) => {
      const response = binding.stream(a, "across");
      const run = await onA.nextRun();
      await run.ctx.working("on A");
      const reader = await openStream(await response);
      await run.ctx.artifact({ artifactId: "p", name: "p0", parts: ["zero"] });
      const seen = await take(reader, 3);
      const taskId = binding.payloadOf(seen[0]!)["task"].id as string;
      await reader.abandon();
      await untilNoStreamOpen();
      await run.ctx.artifact({ artifactId: "p", name: "p1", parts: ["one"] }, { append: true }); // while no one listens
      const resumed = await openStream(await binding.resume(b, taskId, seen.at(-1)!.id!));
      const missed = await take(resumed, 1);
      // Live on A after the resume on B: B must carry them over from the shared database.
      await run.ctx.artifact({ artifactId: "p", name: "p2", parts: ["two"] }, { append: true, lastChunk: true });
      await run.ctx.complete("done");
      expect(run.ctx.signal.aborted).toBe(false);
      run.finish();
      const rest = await untilEnd(resumed);
      const all = [...seen, ...missed, ...rest];
      expect(all.map((e) => eventKey(binding.payloadOf(e)))).toEqual([
        "task:TASK_STATE_SUBMITTED",
        "status:TASK_STATE_WORKING:on A",
        "artifact:p:p0",
        "artifact:p:p1",
        "artifact:p:p2",
        `status:${COMPLETED}:done`,
      ]);
      expect(new Set(all.map((e) => e.id)).size).toBe(all.length);

      // The client that left A did not end the task: read back on B, it completed with every chunk.
      const task = await binding.getTask(b, taskId);
      expect(task["status"].state).toBe(COMPLETED);
      expect(task["artifacts"].map((x: Json) => x.parts.map((p: Json) => p.text))).toEqual([["zero", "one", "two"]]);
    },
    TEST_TIMEOUT_MS,
  );
});
