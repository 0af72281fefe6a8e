import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { injectTraceHeaders, Tracing, tracingRequested } from "../../src/observability/tracing.js";
import { dispatchAgent, rpc, sendRequest, taskOf, userMessage } from "../e2e/e2e-helpers.js";
import { until } from "../foundation/helpers.js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";

const behaviours = dispatchAgent({ name: "Tracer test agent" });
/** What the agent saw of the trace: the headers it would send on a webhook request. */
let injected: Record<string, string> = {};
const withOwnSpan = behaviours.on(async (ctx) => {
  await trace.getTracer("the-agent").startActiveSpan("agent step", async (span) => {
    await ctx.working();
    injected = {};
    injectTraceHeaders(injected);
    await ctx.complete("done");
    span.end();
  });
});
const crash = behaviours.on(async (ctx) => {
  await ctx.working();
  throw new Error("the agent broke");
});

const exporter = new InMemorySpanExporter();
let tracing: Tracing;
let dataDir: string;
let s: A2ATestServer;

beforeAll(async () => {
  tracing = await Tracing.start({ env: {}, spanProcessors: [new SimpleSpanProcessor(exporter)] });
});
afterAll(() => tracing.shutdown());
beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "a2a-tracing-"));
  s = await startA2AServer({ agent: behaviours.agent, env: { A2A_STORE: "sqlite", A2A_DATA_DIR: dataDir } });
  tracing.agentName = s.app.card.name;
  exporter.reset();
});
afterEach(async () => {
  await s.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const spanId = (span: ReadableSpan) => span.spanContext().spanId;
const parentId = (span: ReadableSpan) => span.parentSpanContext?.spanId;
const named = (name: string) => exporter.getFinishedSpans().filter((span) => span.name === name);

describe("OpenTelemetry tracing (in-memory exporter)", () => {
  test("OBS-TRACE: an agent run is an invoke_agent span with the GenAI agent attributes; the agent's own spans and the store commit nest under it", async () => {
    const { response, error } = await rpc(s).send(sendRequest(userMessage(`${withOwnSpan} go`)));
    expect(error).toBeUndefined();
    const task = taskOf(response!);
    await until(() => named("agent step").length === 1 && named("invoke_agent Tracer test agent").length === 1, "the run's spans");

    const [run] = named("invoke_agent Tracer test agent");
    expect(run!.kind).toBe(SpanKind.INTERNAL);
    expect(run!.attributes).toEqual({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": "Tracer test agent",
      "gen_ai.conversation.id": task.contextId,
      "a2a.task.id": task.id,
    });
    expect(run!.status.code).toBe(SpanStatusCode.UNSET);
    const [step] = named("agent step");
    expect(parentId(step!)).toBe(spanId(run!));
    expect(step!.spanContext().traceId).toBe(run!.spanContext().traceId);

    // The agent's trace context is what a webhook request would carry.
    expect(injected.traceparent).toBe(`00-${step!.spanContext().traceId}-${spanId(step!)}-01`);

    // The group commit that held the task's writes: a child of what opened the batch (the agent's step).
    const commits = named("sqlite commit").filter((c) => c.spanContext().traceId === run!.spanContext().traceId);
    expect(commits.length).toBeGreaterThanOrEqual(1);
    expect(commits[0]!.attributes).toMatchObject({ "db.system.name": "sqlite", "db.operation.name": "COMMIT" });
    expect(commits.reduce((n, c) => n + Number(c.attributes["a2a.store.batch.writes"]), 0)).toBe(3); // created, working, completed
    expect([spanId(step!), spanId(run!)]).toContain(parentId(commits[0]!));
  });

  test("OBS-TRACE: a run whose agent throws ends its span with an error status", async () => {
    await rpc(s).send(sendRequest(userMessage(`${crash} go`)));
    await until(() => named("invoke_agent Tracer test agent").length === 1, "the run's span");
    expect(named("invoke_agent Tracer test agent")[0]!.status).toEqual({ code: SpanStatusCode.ERROR, message: "the agent failed" });
  });

  test("OBS-TRACE: injectTraceHeaders adds nothing outside a trace", () => {
    const headers: Record<string, string> = { "content-type": "application/json" };
    injectTraceHeaders(headers);
    expect(headers).toEqual({ "content-type": "application/json" });
  });
});

describe("OTEL_* configuration", () => {
  test.each([
    [{}, false],
    [{ OTEL_TRACES_EXPORTER: "none" }, false],
    [{ OTEL_TRACES_EXPORTER: "otlp" }, true],
    [{ OTEL_TRACES_EXPORTER: "console" }, true],
    [{ OTEL_TRACES_EXPORTER: "otlp", OTEL_SDK_DISABLED: "true" }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" }, false],
  ])("OBS-TRACE: tracing is off unless OTEL_TRACES_EXPORTER names an exporter: %j → %s", (env, on) => {
    expect(tracingRequested(env)).toBe(on);
  });
});
