/**
 * #16: webhook requests carry `traceparent` when tracing is on. The outbox entry keeps the trace
 * context of the write that produced its event (SQLite: the column of migration 5), the delivery
 * span is a child of that context, and the POST carries the delivery span's traceparent, so the
 * receiver joins the trace of the SendMessage call. A real gRPC server, a real HTTP receiver on
 * loopback, the in-memory span exporter.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SpanKind } from "@opentelemetry/api";
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { dispatchAgent, rpc, sendForTask, sendRequest, taskOf, userMessage } from "../e2e/e2e-helpers.js";
import { until } from "../foundation/helpers.js";
import { pushConfig } from "../push/push-helpers.js";
import { startReceiver, type Received, type Receiver } from "../push/receiver.js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";

const agents = dispatchAgent({ name: "Push tracing agent" });
const STEPS = agents.on(async (ctx) => {
  await ctx.working("starting");
  await ctx.complete("done");
});

const PUSH_ENV = { A2A_PUSH_ALLOW_HOSTS: "127.0.0.1", A2A_PUSH_ALLOW_HTTP: "true", A2A_PUSH_BACKOFF_MS: "20", A2A_PUSH_MAX_BACKOFF_MS: "100" };
const TRACE_ID = "5af7183fb1d4cf5f8b3e1c2d4a6b8c0e";
const CLIENT_SPAN = "b7ad6b7169203331";
const SEND_SPAN = "lf.a2a.v1.A2AService/SendMessage";

let dataDir: string;
let receiver: Receiver;
const servers: A2ATestServer[] = [];

beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "a2a-push-tracing-"));
  receiver = await startReceiver();
});
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  await receiver.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function server(store: string, exporter?: InMemorySpanExporter): Promise<A2ATestServer> {
  const s = await startA2AServer({
    agent: agents.agent,
    env: { ...PUSH_ENV, A2A_STORE: store, A2A_DATA_DIR: dataDir },
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

/** Sends a message with an inline config, continuing the client's trace (TRACE_ID); the task id. */
async function sendTraced(s: A2ATestServer): Promise<string> {
  const request = sendRequest(userMessage(`${STEPS} go`), { taskPushNotificationConfig: pushConfig({ url: receiver.url("/hook") }) });
  const { response, error } = await rpc(s).send(request, s.metadata({ traceparent: `00-${TRACE_ID}-${CLIENT_SPAN}-01` }));
  if (error) throw new Error(`SendMessage failed: ${error.code} ${error.details}`);
  return taskOf(response!).id;
}

/** Distinct events (webhook ids) among requests. */
const distinct = (requests: readonly Received[]) => new Set(requests.map((r) => r.headers["webhook-id"])).size;

describe.each(["sqlite", "memory"])("OBS-TRACE / #16 on the %s store: webhook requests join the trace of the call whose write they carry", (store) => {
  test("the POST's traceparent has the SendMessage server span's trace id and is the delivery span, a child of the write's span", async () => {
    const exporter = new InMemorySpanExporter();
    const s = await server(store, exporter);
    const taskId = await sendTraced(s);
    // The snapshot, WORKING, COMPLETED.
    const requests = await receiver.waitFor(3);
    // The agent run's span ends when its execute() returns, which may be after the blocking reply: waited for too.
    const parentsEnded = () => {
      const ended = new Set(exporter.getFinishedSpans().map((span) => span.spanContext().spanId));
      return named(exporter, "push delivery").every((d) => ended.has(d.parentSpanContext?.spanId ?? ""));
    };
    await until(() => named(exporter, "push delivery").length >= 3 && named(exporter, SEND_SPAN).length === 1 && parentsEnded(), "the spans");
    const [send] = named(exporter, SEND_SPAN);
    expect(send!.spanContext().traceId).toBe(TRACE_ID);
    const deliveries = new Map<string, ReadableSpan>(named(exporter, "push delivery").map((span) => [span.spanContext().spanId, span]));
    const writers = new Set(exporter.getFinishedSpans().map((span) => span.spanContext().spanId));
    for (const request of requests) {
      const traceparent = traceparentOf(request);
      expect(traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
      const { traceId, spanId } = idsOf(traceparent!);
      expect(traceId).toBe(send!.spanContext().traceId);
      // The header names the delivery span itself, a CLIENT span whose parent is the span of the write (server span or agent run).
      const delivery = deliveries.get(spanId);
      expect(delivery?.kind).toBe(SpanKind.CLIENT);
      expect(delivery?.attributes["a2a.push.outcome"]).toBe("delivered");
      expect(writers.has(delivery!.parentSpanContext!.spanId)).toBe(true);
    }
    expect(JSON.stringify(requests[0]!.json)).toContain(taskId);
  });

  test("tracing off: no traceparent is sent (nothing was kept with the entries)", async () => {
    const s = await server(store);
    await sendForTask(s, userMessage(`${STEPS} go`), { taskPushNotificationConfig: pushConfig({ url: receiver.url("/hook") }) });
    const requests = await receiver.waitFor(3);
    for (const request of requests) expect(traceparentOf(request)).toBeUndefined();
  });
});

test("OBS-TRACE / #16 on SQLite: the trace context is durable with its outbox row: delivered after a restart, the POST still joins the call's trace", async () => {
  receiver.answerWith(() => ({ status: 503 })); // nothing is delivered before the restart
  const exporter = new InMemorySpanExporter();
  const first = await server("sqlite", exporter);
  await sendTraced(first);
  await receiver.waitFor(1);
  await until(() => named(exporter, SEND_SPAN).length === 1, "the server span");
  await servers.splice(0)[0]!.close();
  const before = receiver.requests.length;
  receiver.answerWith(() => ({ status: 200 }));
  await server("sqlite", new InMemorySpanExporter());
  const requests = (await receiver.waitFor(3, 10_000, (r) => distinct(r.slice(before)))).slice(before);
  expect(distinct(requests)).toBe(3); // the snapshot, WORKING, COMPLETED
  for (const request of requests) expect(idsOf(traceparentOf(request)!).traceId).toBe(TRACE_ID);
});
