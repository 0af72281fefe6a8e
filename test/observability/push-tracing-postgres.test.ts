/**
 * #16 / #17: webhook requests carry `traceparent` on the PostgreSQL store too. A task write
 * passes the trace context of the write to `a2a_push_owe`, which keeps it in the outbox row's
 * `trace_context` (migration 3), in the write's own transaction; a config put's snapshot row
 * keeps the put's. The delivery span is a child of that context and the POST carries the
 * delivery span's traceparent. A real gRPC server on the tests' throwaway PostgreSQL, a real HTTP
 * receiver on loopback, the in-memory span exporter.
 */
import { SpanKind } from "@opentelemetry/api";
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import pg from "pg";
import { dispatchAgent, rpc, sendForTask, sendRequest, taskOf, userMessage } from "../e2e/e2e-helpers.js";
import { until } from "../foundation/helpers.js";
import { pushConfig } from "../push/push-helpers.js";
import { startReceiver, type Received, type Receiver } from "../push/receiver.js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import { createTestDatabase, type TestDatabase } from "../support/postgres/database.js";

const agents = dispatchAgent({ name: "Push tracing agent (PostgreSQL)" });
const STEPS = agents.on(async (ctx) => {
  await ctx.working("starting");
  await ctx.complete("done");
});

const PUSH_ENV = {
  A2A_PUSH_ALLOW_HOSTS: "127.0.0.1",
  A2A_PUSH_ALLOW_HTTP: "true",
  A2A_PUSH_BACKOFF_MS: "20",
  A2A_PUSH_MAX_BACKOFF_MS: "100",
  A2A_PUSH_TIMEOUT_MS: "60000", // a held request (HOLD) is not timed out while a test looks at the outbox
};
/** The receiver's answer that holds the lane's first request (the rows behind it stay in the outbox) for the rest of a test. */
const HOLD = { status: 200, delayMs: 50_000 };
const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN = "00f067aa0ba902b7";
const SEND_SPAN = "lf.a2a.v1.A2AService/SendMessage";

let db: TestDatabase;
let receiver: Receiver;
const servers: A2ATestServer[] = [];

beforeEach(async () => {
  db = await createTestDatabase("pushtrace");
  receiver = await startReceiver();
});
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  await receiver.close();
  await db.drop();
});

async function server(exporter?: InMemorySpanExporter): Promise<A2ATestServer> {
  const s = await startA2AServer({
    agent: agents.agent,
    env: { ...PUSH_ENV, A2A_STORE: "postgres", A2A_DATABASE_URL: db.url, A2A_DATABASE_POOL_SIZE: "3", A2A_LEASE_MS: "2000" },
    ...(exporter ? { telemetry: { env: {}, spanProcessors: [new SimpleSpanProcessor(exporter)] } } : {}),
  });
  servers.push(s);
  return s;
}

const traceparentOf = (r: Received) => r.headers.traceparent as string | undefined;
const idsOf = (traceparent: string) => {
  const [, traceId, spanId] = traceparent.split("-");
  return { traceId: traceId!, spanId: spanId! };
};
const named = (exporter: InMemorySpanExporter, name: string) => exporter.getFinishedSpans().filter((s) => s.name === name);
const distinct = (requests: readonly Received[]) => new Set(requests.map((r) => r.headers["webhook-id"])).size;
/**
 * On PostgreSQL the inline config's put and the agent's first writes are separate statements, so
 * the snapshot may already hold WORKING (or the end): the requests are the snapshot and whatever
 * came after it, the last one COMPLETED. 1 when it came.
 */
const completedCame = (requests: readonly Received[]) => (requests.some((r) => r.body.includes("TASK_STATE_COMPLETED")) ? 1 : 0);

/** Sends a message with an inline config, continuing the client's trace (TRACE_ID); the task id. */
async function sendTraced(s: A2ATestServer): Promise<string> {
  const request = sendRequest(userMessage(`${STEPS} go`), { taskPushNotificationConfig: pushConfig({ url: receiver.url("/hook") }) });
  const { response, error } = await rpc(s).send(request, s.metadata({ traceparent: `00-${TRACE_ID}-${CLIENT_SPAN}-01` }));
  if (error) throw new Error(`SendMessage failed: ${error.code} ${error.details}`);
  return taskOf(response!).id;
}

/** Polls the outbox until it holds `n` rows; their trace_context column, in seq order. */
async function outboxRows(n: number): Promise<Array<string | null>> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const rows = await storedTraceContexts();
    if (rows.length >= n) return rows;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${n} outbox rows (have ${rows.length})`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function storedTraceContexts(): Promise<Array<string | null>> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    const { rows } = await client.query<{ trace_context: string | null }>("SELECT trace_context FROM a2a_push_outbox ORDER BY seq");
    return rows.map((r) => r.trace_context);
  } finally {
    await client.end();
  }
}

describe("OBS-TRACE / #16 / #17 on the postgres store: webhook requests join the trace of the call whose write they carry", () => {
  test("the POST's traceparent has the SendMessage server span's trace id and is the delivery span, a child of the write's span", async () => {
    const exporter = new InMemorySpanExporter();
    const s = await server(exporter);
    const taskId = await sendTraced(s);
    const requests = await receiver.waitFor(1, 10_000, completedCame);
    await until(() => named(exporter, "push delivery").length >= requests.length && named(exporter, SEND_SPAN).length === 1, "the spans");
    const [send] = named(exporter, SEND_SPAN);
    expect(send!.spanContext().traceId).toBe(TRACE_ID);
    const deliveries = new Map<string, ReadableSpan>(named(exporter, "push delivery").map((span) => [span.spanContext().spanId, span]));
    const writers = new Set(exporter.getFinishedSpans().map((span) => span.spanContext().spanId));
    for (const request of requests) {
      const traceparent = traceparentOf(request);
      expect(traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
      const { traceId, spanId } = idsOf(traceparent!);
      expect(traceId).toBe(TRACE_ID);
      const delivery = deliveries.get(spanId);
      expect(delivery?.kind).toBe(SpanKind.CLIENT);
      expect(delivery?.attributes["a2a.push.outcome"]).toBe("delivered");
      expect(writers.has(delivery!.parentSpanContext!.spanId)).toBe(true);
    }
    expect(JSON.stringify(requests[0]!.json)).toContain(taskId);
  });

  test("the trace context is kept in the outbox row: delivered by a restarted server, the POST still joins the call's trace", async () => {
    receiver.answerWith(() => HOLD); // nothing is delivered before the restart
    const exporter = new InMemorySpanExporter();
    const first = await server(exporter);
    await sendTraced(first);
    await receiver.waitFor(1);
    const kept = await outboxRows(1); // final: the blocking call has returned
    for (const traceContext of kept) expect(traceContext).toMatch(new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-01$`));
    await servers.splice(0)[0]!.close();
    const before = receiver.requests.length;
    receiver.answerWith(() => ({ status: 200 }));
    await server(new InMemorySpanExporter());
    const requests = (await receiver.waitFor(kept.length, 10_000, (r) => distinct(r.slice(before)))).slice(before);
    expect(distinct(requests)).toBe(kept.length);
    expect(completedCame(requests)).toBe(1);
    for (const request of requests) expect(idsOf(traceparentOf(request)!).traceId).toBe(TRACE_ID);
  });

  test("tracing off: no traceparent is sent and the rows keep none", async () => {
    // The first request is held, so the lane's three rows are all still there while they are looked at.
    receiver.answerWith((_request, n) => (n === 0 ? HOLD : { status: 200 }));
    const s = await server();
    await sendForTask(s, userMessage(`${STEPS} go`), { taskPushNotificationConfig: pushConfig({ url: receiver.url("/hook") }) });
    const [first] = await receiver.waitFor(1);
    const kept = await outboxRows(1);
    expect(kept).toEqual(kept.map(() => null));
    expect(first!.headers["webhook-id"]).toBeDefined();
    expect(traceparentOf(first!)).toBeUndefined();
  });
});
