import { ROOT_CONTEXT, SpanKind, SpanStatusCode, TraceFlags, trace, type Link } from "@opentelemetry/api";
import { ExportResultCode } from "@opentelemetry/core";
import { ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import { BasicTracerProvider, type ReadableSpan, type SpanProcessor } from "@opentelemetry/sdk-trace-base";
import { OtlpProtobufSpanProcessor, batchLimitsFromEnv, type EncodedBatch, type OtlpBatchSender } from "../../src/observability/otlp-span-processor.js";
import { PooledIdGenerator } from "../../src/observability/id-generator.js";
import { decodeProtobuf } from "../support/otlp-receiver.js";

/**
 * Our OTLP protobuf writer against the OpenTelemetry SDK's own serialiser: the same spans, made by
 * the SDK, written both ways and read back with the receiver's protobuf decoder, must say the same.
 * And the batch processor around it keeps the BatchSpanProcessor's rules (OTEL_BSP_*).
 */

/** A sender that keeps what it is given and answers at once (or never, when `hold`). */
function recordingSender(options: { hold?: boolean } = {}) {
  const batches: EncodedBatch[] = [];
  const held: Array<() => void> = [];
  let shutdowns = 0;
  const sender: OtlpBatchSender = {
    send(batch, done) {
      // A copy: the bytes are lent until done (the processor writes its next batches into them after).
      batches.push({ ...batch, bytes: Buffer.from(batch.bytes) });
      if (options.hold) held.push(() => done({ code: ExportResultCode.SUCCESS }));
      else done({ code: ExportResultCode.SUCCESS });
    },
    forceFlush: async () => {},
    shutdown: async () => void shutdowns++,
  };
  return { sender, batches, release: () => held.splice(0).forEach((f) => f()), shutdowns: () => shutdowns };
}

const LIMITS = { maxQueueSize: 2048, maxExportBatchSize: 512, scheduledDelayMillis: 60_000, exportTimeoutMillis: 30_000 };

function provider(processors: SpanProcessor[]) {
  return new BasicTracerProvider({ spanProcessors: processors });
}

function keeper(): SpanProcessor & { spans: ReadableSpan[] } {
  const spans: ReadableSpan[] = [];
  return { spans, onStart() {}, onEnd: (s) => void spans.push(s), forceFlush: async () => {}, shutdown: async () => {} };
}

/** Spans with everything a span can carry: a remote parent with trace state, every attribute type, events, links, error status. */
function makeSpans(p: BasicTracerProvider): void {
  const tracer = p.getTracer("a2a-grpc-server", "1.2.3");
  const remote = trace.setSpanContext(ROOT_CONTEXT, {
    traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
    spanId: "00f067aa0ba902b7",
    traceFlags: TraceFlags.SAMPLED,
    isRemote: true,
  });
  const server = tracer.startSpan(
    "lf.a2a.v1.A2AService/SendMessage",
    { kind: SpanKind.SERVER, attributes: { "rpc.system": "grpc", "rpc.method": "SendMessage" } },
    remote,
  );
  server.setAttributes({
    "rpc.grpc.status_code": 13,
    "network.peer.port": 50_123,
    "a.negative": -7,
    "a.big": 2 ** 40 + 3,
    "a.double": 0.25,
    "a.bool": false,
    "a.unicode": "tâche ✓ 任务",
    "a.long": "x".repeat(300),
    "a.huge": "é".repeat(9_000), // 18,000 bytes: a three-byte length
    "a.strings": ["one", "two"],
    "a.numbers": [1, 2.5],
  });
  server.addEvent("retry", { "a2a.attempt": 2 });
  server.setStatus({ code: SpanStatusCode.ERROR, message: "the agent failed" });
  const links: Link[] = [
    { context: { traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "b7ad6b7169203331", traceFlags: 1 }, attributes: { why: "follow-up" } },
  ];
  const run = tracer.startSpan(
    "invoke_agent bench",
    { kind: SpanKind.INTERNAL, links, attributes: { "gen_ai.conversation.id": "ctx-1" } },
    trace.setSpan(remote, server),
  );
  run.end();
  server.end();
  p.getTracer("the-agent").startSpan("agent step", { kind: SpanKind.CLIENT }).end();
}

describe("OTLP protobuf spans written as they end", () => {
  test("OBS-TRACE: our bytes decode to what the SDK's serialiser writes for the same spans (ids, parent, kind, times, every attribute type, events, links, status, resource, scopes)", async () => {
    const kept = keeper();
    const out = recordingSender();
    const p = provider([kept, new OtlpProtobufSpanProcessor(out.sender, LIMITS)]);
    makeSpans(p);
    await p.forceFlush();
    expect(out.batches).toHaveLength(1);
    expect(out.batches[0]!.spans).toBe(3);

    const ours = decodeProtobuf(out.batches[0]!.bytes);
    const sdks = decodeProtobuf(ProtobufTraceSerializer.serializeRequest(kept.spans)!);
    const byName = (spans: typeof ours) => [...spans].sort((a, b) => a.name.localeCompare(b.name));
    expect(byName(ours)).toEqual(byName(sdks));
    // And they are what the spans were (the comparison above cannot tell if both lose something).
    const server = ours.find((s) => s.name === "lf.a2a.v1.A2AService/SendMessage")!;
    expect(server).toMatchObject({ traceId: "4bf92f3577b34da6a3ce929d0e0e4736", parentSpanId: "00f067aa0ba902b7", kind: 2, scope: "a2a-grpc-server" });
    expect(server.attributes).toMatchObject({ "a.negative": -7, "a.big": 2 ** 40 + 3, "a.double": 0.25, "a.bool": false, "a.unicode": "tâche ✓ 任务" });
    expect(server.attributes["a.huge"]).toBe("é".repeat(9_000));
    expect(server.attributes["a.strings"]).toEqual(["one", "two"]);
    expect(server.status).toEqual({ code: 2, message: "the agent failed" });
    expect(server.events).toMatchObject([{ name: "retry", attributes: { "a2a.attempt": 2 } }]);
    expect(server.resource["telemetry.sdk.name"]).toBe("opentelemetry");
    const run = ours.find((s) => s.name === "invoke_agent bench")!;
    expect(run.parentSpanId).toBe(server.spanId);
    expect(run.links).toEqual([{ traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "b7ad6b7169203331", attributes: { why: "follow-up" } }]);
    // Start and end times to the nanosecond (fixed64 past 2^53).
    const original = kept.spans.find((s) => s.name === "invoke_agent bench")!;
    expect(run.startNanos).toBe(BigInt(original.startTime[0]) * 1_000_000_000n + BigInt(original.startTime[1]));
    expect(ours.find((s) => s.name === "agent step")!.scope).toBe("the-agent");
  });

  test("OBS-TRACE: a batch goes when it holds OTEL_BSP_MAX_EXPORT_BATCH_SIZE spans, or when its first span has waited OTEL_BSP_SCHEDULE_DELAY", async () => {
    const out = recordingSender();
    const p = provider([new OtlpProtobufSpanProcessor(out.sender, { ...LIMITS, maxExportBatchSize: 4, scheduledDelayMillis: 50 })]);
    const tracer = p.getTracer("t");
    for (let i = 0; i < 9; i++) tracer.startSpan(`s${i}`).end();
    expect(out.batches.map((b) => b.spans)).toEqual([4, 4]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(out.batches.map((b) => b.spans)).toEqual([4, 4, 1]);
    expect(out.batches.flatMap((b) => decodeProtobuf(b.bytes).map((s) => s.name))).toEqual(["s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8"]);
    await p.shutdown();
  });

  test("OBS-TRACE: a batch's bytes stay as sent until the sender is done with them, and the next batches are right when written into buffers given back", async () => {
    const inFlight: Array<{ bytes: Uint8Array; done: () => void }> = [];
    const sender: OtlpBatchSender = {
      send: (batch, done) => void inFlight.push({ bytes: batch.bytes, done: () => done({ code: ExportResultCode.SUCCESS }) }),
      forceFlush: async () => {},
      shutdown: async () => {},
    };
    const p = provider([new OtlpProtobufSpanProcessor(sender, { ...LIMITS, maxExportBatchSize: 4 })]);
    const tracer = p.getTracer("t");
    const names = (bytes: Uint8Array) => decodeProtobuf(bytes).map((s) => s.name);
    for (let round = 0; round < 3; round++) {
      // Three batches in flight at once, then answered: later rounds write into the buffers the earlier ones gave back.
      for (let i = 0; i < 12; i++) tracer.startSpan(`r${round}-${i}`).end();
      expect(inFlight).toHaveLength(3);
      expect(inFlight.map((b) => names(b.bytes))).toEqual([0, 1, 2].map((b) => [0, 1, 2, 3].map((i) => `r${round}-${4 * b + i}`)));
      for (const b of inFlight.splice(0)) b.done();
    }
    await p.shutdown();
  });

  test("OBS-TRACE: spans past OTEL_BSP_MAX_QUEUE_SIZE (waiting or in flight) are dropped, unsampled spans are never written, shutdown sends what is left", async () => {
    const out = recordingSender({ hold: true });
    const p = provider([new OtlpProtobufSpanProcessor(out.sender, { ...LIMITS, maxQueueSize: 6, maxExportBatchSize: 3 })]);
    const tracer = p.getTracer("t");
    for (let i = 0; i < 10; i++) tracer.startSpan(`s${i}`).end();
    // Two batches of 3 in flight, unanswered: the queue is full, s6..s9 are dropped.
    expect(out.batches.map((b) => b.spans)).toEqual([3, 3]);
    out.release();
    const unsampled = trace.setSpanContext(ROOT_CONTEXT, { traceId: "1".repeat(32), spanId: "2".repeat(16), traceFlags: TraceFlags.NONE });
    tracer.startSpan("unsampled", {}, unsampled).end();
    tracer.startSpan("after").end();
    const shutdown = p.shutdown();
    out.release();
    await shutdown;
    expect(out.batches.flatMap((b) => decodeProtobuf(b.bytes).map((s) => s.name))).toEqual(["s0", "s1", "s2", "s3", "s4", "s5", "after"]);
    expect(out.shutdowns()).toBe(1);
  });

  test("OBS-TRACE: the limits come from OTEL_BSP_* with the BatchSpanProcessor's defaults", () => {
    expect(batchLimitsFromEnv({})).toEqual({ maxQueueSize: 2048, maxExportBatchSize: 512, scheduledDelayMillis: 5000, exportTimeoutMillis: 30000 });
    expect(
      batchLimitsFromEnv({
        OTEL_BSP_MAX_QUEUE_SIZE: "100",
        OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "500",
        OTEL_BSP_SCHEDULE_DELAY: "200",
        OTEL_BSP_EXPORT_TIMEOUT: "nope",
      }),
    ).toEqual({ maxQueueSize: 100, maxExportBatchSize: 100, scheduledDelayMillis: 200, exportTimeoutMillis: 30000 });
  });
});

describe("ids", () => {
  test("OBS-TRACE: the pooled id generator gives W3C ids: 32 and 16 lowercase hex, distinct, never all zero", () => {
    const ids = new PooledIdGenerator();
    const traces = new Set<string>();
    const spans = new Set<string>();
    for (let i = 0; i < 5_000; i++) {
      traces.add(ids.generateTraceId());
      spans.add(ids.generateSpanId());
    }
    expect(traces.size).toBe(5_000);
    expect(spans.size).toBe(5_000);
    for (const id of traces) expect(id).toMatch(/^(?!0+$)[0-9a-f]{32}$/);
    for (const id of spans) expect(id).toMatch(/^(?!0+$)[0-9a-f]{16}$/);
  });
});
