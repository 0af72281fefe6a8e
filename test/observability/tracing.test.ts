import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import * as grpc from "@grpc/grpc-js";
import { injectTraceHeaders, tracingRequested } from "../../src/observability/tracing.js";
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

const silent = behaviours.on(async () => {});

let exporter: InMemorySpanExporter;
let dataDir: string;
let s: A2ATestServer;

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN_ID = "00f067aa0ba902b7";
const spanId = (span: ReadableSpan) => span.spanContext().spanId;
const parentId = (span: ReadableSpan) => span.parentSpanContext?.spanId;
const named = (name: string) => exporter.getFinishedSpans().filter((span) => span.name === name);

describe("OpenTelemetry tracing (in-memory exporter)", () => {
  beforeEach(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "a2a-tracing-"));
    exporter = new InMemorySpanExporter();
    s = await startA2AServer({
      agent: behaviours.agent,
      env: { A2A_STORE: "sqlite", A2A_DATA_DIR: dataDir },
      telemetry: { env: {}, spanProcessors: [new SimpleSpanProcessor(exporter)] },
    });
  });
  afterEach(async () => {
    await s.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test("OBS-TRACE: an agent run is an invoke_agent span with the GenAI agent attributes; the agent's own spans and the store commit nest under it", async () => {
    const md = s.metadata({ traceparent: `00-${TRACE_ID}-${CLIENT_SPAN_ID}-01` });
    const { response, error } = await rpc(s).send(sendRequest(userMessage(`${withOwnSpan} go`)), md);
    expect(error).toBeUndefined();
    const task = taskOf(response!);
    await until(() => named("agent step").length === 1 && named("invoke_agent Tracer test agent").length === 1, "the run's spans");

    await until(() => named("lf.a2a.v1.A2AService/SendMessage").length === 1, "the server span");

    // The RPC's span continues the client's trace.
    const [server] = named("lf.a2a.v1.A2AService/SendMessage");
    expect(server!.kind).toBe(SpanKind.SERVER);
    expect(server!.spanContext().traceId).toBe(TRACE_ID);
    expect(parentId(server!)).toBe(CLIENT_SPAN_ID);
    expect(server!.attributes).toEqual({
      "rpc.system": "grpc",
      "rpc.service": "lf.a2a.v1.A2AService",
      "rpc.method": "SendMessage",
      "rpc.grpc.status_code": 0,
      "a2a.task.id": task.id,
      "network.peer.address": "127.0.0.1",
      "network.peer.port": expect.any(Number),
    });
    expect(server!.status.code).toBe(SpanStatusCode.UNSET);

    const [run] = named("invoke_agent Tracer test agent");
    expect(run!.kind).toBe(SpanKind.INTERNAL);
    expect(parentId(run!)).toBe(spanId(server!));
    expect(run!.spanContext().traceId).toBe(TRACE_ID);
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

  test("OBS-TRACE: a call without traceparent starts a trace; a client error is not a server error; health checks are not traced", async () => {
    const { error } = await rpc(s).get({ id: "no-such-task" });
    expect(error!.code).toBe(grpc.status.NOT_FOUND);
    await until(() => named("lf.a2a.v1.A2AService/GetTask").length === 1, "the server span");
    const [get] = named("lf.a2a.v1.A2AService/GetTask");
    expect(get!.parentSpanContext).toBeUndefined();
    expect(get!.attributes["rpc.grpc.status_code"]).toBe(grpc.status.NOT_FOUND);
    expect(get!.status.code).toBe(SpanStatusCode.UNSET); // NOT_FOUND is the client's error (RPC conventions)

    const health = new grpc.Client(s.target, grpc.credentials.createInsecure());
    await new Promise<void>((resolve, reject) =>
      health.makeUnaryRequest(
        "/grpc.health.v1.Health/Check",
        (b: Buffer) => b,
        (b: Buffer) => b,
        Buffer.alloc(0),
        (err) => (err ? reject(err) : resolve()),
      ),
    );
    health.close();
    expect(exporter.getFinishedSpans().filter((span) => span.name.includes("Health"))).toEqual([]);
  });

  test("OBS-TRACE: a call that fails on the server's side (INTERNAL) marks its span as an error", async () => {
    const { error } = await rpc(s).send(sendRequest(userMessage(`${silent} go`)));
    expect(error!.code).toBe(grpc.status.INTERNAL); // InvalidAgentResponse: the agent gave no answer
    await until(() => named("lf.a2a.v1.A2AService/SendMessage").length === 1, "the server span");
    const [send] = named("lf.a2a.v1.A2AService/SendMessage");
    expect(send!.status.code).toBe(SpanStatusCode.ERROR);
    expect(send!.attributes["rpc.grpc.status_code"]).toBe(grpc.status.INTERNAL);
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

describe("OpenTelemetry sampling (OTEL_TRACES_SAMPLER)", () => {
  const saved = { sampler: process.env.OTEL_TRACES_SAMPLER, arg: process.env.OTEL_TRACES_SAMPLER_ARG };
  afterEach(async () => {
    await s.close();
    for (const [key, value] of [
      ["OTEL_TRACES_SAMPLER", saved.sampler],
      ["OTEL_TRACES_SAMPLER_ARG", saved.arg],
    ] as const) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  });

  test("OBS-TRACE: parentbased_traceidratio is respected: ratio 0 records no trace of its own, yet a sampled client's trace is continued", async () => {
    // The SDK reads the sampler from the process environment, as a deployment sets it.
    process.env.OTEL_TRACES_SAMPLER = "parentbased_traceidratio";
    process.env.OTEL_TRACES_SAMPLER_ARG = "0";
    exporter = new InMemorySpanExporter();
    s = await startA2AServer({
      agent: behaviours.agent,
      env: { A2A_STORE: "memory" },
      telemetry: { env: {}, spanProcessors: [new SimpleSpanProcessor(exporter)] },
    });
    expect((await rpc(s).get({ id: "not-sampled" })).error!.code).toBe(grpc.status.NOT_FOUND);
    const sampledParent = s.metadata({ traceparent: `00-${TRACE_ID}-${CLIENT_SPAN_ID}-01` });
    expect((await rpc(s).get({ id: "sampled-by-the-client" }, sampledParent)).error!.code).toBe(grpc.status.NOT_FOUND);
    await until(() => named("lf.a2a.v1.A2AService/GetTask").length >= 1, "the continued trace's span");
    // Spans are exported as they end (SimpleSpanProcessor): the first call's would be there already.
    const spans = named("lf.a2a.v1.A2AService/GetTask");
    expect(spans.map((span) => span.spanContext().traceId)).toEqual([TRACE_ID]);
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
