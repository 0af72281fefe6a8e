import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import * as grpc from "@grpc/grpc-js";
import { defaultSampler } from "../../src/observability/tracing-sdk.js";
import { dispatchAgent, rpc, sendRequest, userMessage } from "../e2e/e2e-helpers.js";
import { until } from "../foundation/helpers.js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import { startOtlpReceiver, type OtlpReceiver } from "../support/otlp-receiver.js";

/**
 * The SDK's own pieces (tracing-sdk.ts): the BatchSpanProcessor and the OTLP http/protobuf
 * exporter, configured by OTEL_* from the process environment as a deployment sets them, and the
 * default parent-based sampler with its OTEL_TRACES_SAMPLER_ARG ratio.
 */

const behaviours = dispatchAgent({ name: "SDK test agent" });
const complete = behaviours.on(async (ctx) => {
  await ctx.working();
  await ctx.complete("done");
});

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN_ID = "00f067aa0ba902b7";
const OTEL_KEYS = [
  "OTEL_TRACES_SAMPLER",
  "OTEL_TRACES_SAMPLER_ARG",
  "OTEL_EXPORTER_OTLP_ENDPOINT",
  "OTEL_BSP_SCHEDULE_DELAY",
  "OTEL_BSP_MAX_EXPORT_BATCH_SIZE",
] as const;

let s: A2ATestServer | undefined;
let receiver: OtlpReceiver | undefined;
const saved = Object.fromEntries(OTEL_KEYS.map((key) => [key, process.env[key]]));

afterEach(async () => {
  await s?.close();
  s = undefined;
  await receiver?.close();
  receiver = undefined;
  for (const key of OTEL_KEYS) {
    if (saved[key] === undefined) delete process.env[key];
    else process.env[key] = saved[key];
  }
});

describe("tracing through the OpenTelemetry SDK's own processor and exporter", () => {
  test("OBS-TRACE: OTEL_TRACES_EXPORTER=otlp: spans reach a real OTLP receiver on loopback as http/protobuf, in batches of at most OTEL_BSP_MAX_EXPORT_BATCH_SIZE", async () => {
    receiver = await startOtlpReceiver();
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.endpoint;
    process.env.OTEL_BSP_SCHEDULE_DELAY = "50";
    process.env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE = "2";
    s = await startA2AServer({ agent: behaviours.agent, env: { A2A_STORE: "memory" }, telemetry: { env: { OTEL_TRACES_EXPORTER: "otlp" } } });
    const md = s.metadata({ traceparent: `00-${TRACE_ID}-${CLIENT_SPAN_ID}-01` });
    for (let i = 0; i < 3; i++) expect((await rpc(s).send(sendRequest(userMessage(`${complete} go`)), md)).error).toBeUndefined();
    const server = (r: OtlpReceiver) => r.spans.filter((span) => span.name === "lf.a2a.v1.A2AService/SendMessage");
    const runs = (r: OtlpReceiver) => r.spans.filter((span) => span.name === "invoke_agent SDK test agent");
    await until(() => server(receiver!).length === 3 && runs(receiver!).length === 3, "three calls' server and run spans", 10_000);

    expect(new Set(receiver.contentTypes)).toEqual(new Set(["application/x-protobuf"]));
    // Each request carries at most two spans: at least half as many requests as spans.
    expect(receiver.contentTypes.length).toBeGreaterThanOrEqual(Math.ceil(receiver.spans.length / 2));
    for (const span of server(receiver)) {
      expect(span).toMatchObject({ traceId: TRACE_ID, parentSpanId: CLIENT_SPAN_ID, kind: 2, scope: "a2a-grpc-server" });
      expect(span.attributes).toMatchObject({ "rpc.system": "grpc", "rpc.method": "SendMessage", "rpc.grpc.status_code": 0 });
      expect(span.resource["service.name"]).toBe("a2a-grpc-server");
    }
    const serverIds = new Set(server(receiver).map((span) => span.spanId));
    for (const run of runs(receiver)) expect(serverIds.has(run.parentSpanId)).toBe(true);
  }, 20_000);

  test("OBS-TRACE: by default sampling is parent-based with OTEL_TRACES_SAMPLER_ARG as the root ratio: 0 records no trace of its own, yet a sampled client's trace is continued", async () => {
    delete process.env.OTEL_TRACES_SAMPLER;
    process.env.OTEL_TRACES_SAMPLER_ARG = "0";
    const exporter = new InMemorySpanExporter();
    s = await startA2AServer({
      agent: behaviours.agent,
      env: { A2A_STORE: "memory" },
      telemetry: { env: {}, spanProcessors: [new SimpleSpanProcessor(exporter)] },
    });
    expect((await rpc(s).get({ id: "not-sampled" })).error!.code).toBe(grpc.status.NOT_FOUND);
    const sampledParent = s.metadata({ traceparent: `00-${TRACE_ID}-${CLIENT_SPAN_ID}-01` });
    expect((await rpc(s).get({ id: "sampled-by-the-client" }, sampledParent)).error!.code).toBe(grpc.status.NOT_FOUND);
    const named = () => exporter.getFinishedSpans().filter((span) => span.name === "lf.a2a.v1.A2AService/GetTask");
    await until(() => named().length >= 1, "the continued trace's span");
    expect(named().map((span) => span.spanContext().traceId)).toEqual([TRACE_ID]);
  });

  test("OBS-TRACE: the default sampler is ParentBasedSampler around TraceIdRatioBasedSampler (ratio 1 unless OTEL_TRACES_SAMPLER_ARG says); a named OTEL_TRACES_SAMPLER is the SDK's to build", async () => {
    expect(String(await defaultSampler({}))).toBe(
      "ParentBased{root=TraceIdRatioBased{1}, remoteParentSampled=AlwaysOnSampler, remoteParentNotSampled=AlwaysOffSampler, localParentSampled=AlwaysOnSampler, localParentNotSampled=AlwaysOffSampler}",
    );
    expect(String(await defaultSampler({ OTEL_TRACES_SAMPLER_ARG: "0.25" }))).toContain("root=TraceIdRatioBased{0.25}");
    expect(String(await defaultSampler({ OTEL_TRACES_SAMPLER_ARG: "2" }))).toContain("root=TraceIdRatioBased{1}");
    expect(await defaultSampler({ OTEL_TRACES_SAMPLER: "always_off", OTEL_TRACES_SAMPLER_ARG: "0.25" })).toBeUndefined();
  });

  test("OBS-TRACE: no observability code reads a dependency's private fields (the SDK tracer's _sampler, _spanProcessor, ...; grpc-js's internalRepr)", () => {
    const dir = fileURLToPath(new URL("../../src/observability", import.meta.url));
    for (const file of readdirSync(dir).filter((name) => name.endsWith(".ts"))) {
      const text = readFileSync(join(dir, file), "utf8");
      expect({ file, privateReads: text.match(/\._[a-zA-Z]+\b|\binternalRepr\b|\bas unknown as Record<string, unknown>/g) ?? [] }).toEqual({
        file,
        privateReads: [],
      });
    }
  });
});
