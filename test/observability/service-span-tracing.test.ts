import { createContextKey, ROOT_CONTEXT, SpanKind, SpanStatusCode, TraceFlags, trace, type Attributes, type Context, type Span } from "@opentelemetry/api";
import { ExportResultCode, suppressTracing, W3CTraceContextPropagator } from "@opentelemetry/core";
import { ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BasicTracerProvider,
  ParentBasedSampler,
  SamplingDecision,
  TraceIdRatioBasedSampler,
  type Sampler,
  type ReadableSpan,
  type SpanLimits,
  type SpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { PooledIdGenerator } from "../../src/observability/id-generator.js";
import { OtlpProtobufSpanProcessor, type EncodedBatch } from "../../src/observability/otlp-span-processor.js";
import { localChildDecision, ServiceSpan, ServiceTracer, withSpan } from "../../src/observability/service-span.js";
import { TRACER_NAME, Tracing } from "../../src/observability/tracing.js";
import { decodeProtobuf } from "../support/otlp-receiver.js";

/**
 * The service's own spans (service-span.ts) against the SDK's: the same calls through the API,
 * with the same span limits and sampler, must give the same ReadableSpan (what every processor
 * and exporter sees), and our OTLP writer's bytes for them must decode as the SDK serialiser's.
 */

function keeper(): SpanProcessor & { spans: ReadableSpan[]; started: number } {
  const spans: ReadableSpan[] = [];
  const k = {
    spans,
    started: 0,
    onStart: () => void k.started++,
    onEnd: (s: ReadableSpan) => void spans.push(s),
    forceFlush: async () => {},
    shutdown: async () => {},
  };
  return k;
}

const LIMITS: SpanLimits = {
  attributeCountLimit: 4,
  attributeValueLengthLimit: 6,
  eventCountLimit: 2,
  linkCountLimit: 1,
  attributePerEventCountLimit: 1,
  attributePerLinkCountLimit: 1,
};

const REMOTE = trace.setSpanContext(ROOT_CONTEXT, {
  traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
  spanId: "00f067aa0ba902b7",
  traceFlags: TraceFlags.SAMPLED,
  isRemote: true,
  traceState: undefined,
});

type Starter = (name: string, kind: SpanKind, attributes: Attributes, parent: Context, startMs?: number) => Span;

/** What a holder of the span may do through the API, limits included. */
function exercise(start: Starter): void {
  const span = start(
    "lf.a2a.v1.A2AService/SendMessage",
    SpanKind.SERVER,
    { "rpc.system": "grpc", "rpc.method": "SendMessage", "a.long": "abcdefghij" },
    REMOTE,
  );
  span.setAttribute("rpc.grpc.status_code", 13);
  span.setAttribute("a.strings", ["one", "seventeen"]);
  span.setAttribute("a.over-the-count", true); // the fifth: dropped
  span.setAttribute("rpc.system", "grpc-js"); // an existing key: replaced, truncated
  span.setAttributes({ "a.nothing": undefined as never });
  span.addEvent("first", { "a2a.attempt": 1, extra: "dropped" });
  span.addEvent("second", 1_700_000_000_123);
  span.recordException(new Error("the agent failed"));
  span.addLink({
    context: { traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "b7ad6b7169203331", traceFlags: 1 },
    attributes: { why: "follow-up", more: 1 },
  });
  span.addLinks([{ context: { traceId: "1af7651916cd43dd8448eb211c80319c", spanId: "c7ad6b7169203331", traceFlags: 0 } }]);
  span.setStatus({ code: SpanStatusCode.ERROR, message: "failed" });
  span.setStatus({ code: SpanStatusCode.UNSET });
  span.updateName("renamed");
  expect(span.isRecording()).toBe(true);
  const child = start("invoke_agent bench", SpanKind.INTERNAL, { "gen_ai.conversation.id": "ctx-1" }, trace.setSpan(REMOTE, span), 1_700_000_000_000.5);
  child.setStatus({ code: SpanStatusCode.OK });
  child.setStatus({ code: SpanStatusCode.ERROR, message: "too late: OK stays" });
  child.end(1_700_000_000_002.25);
  span.end();
  expect(span.isRecording()).toBe(false);
  span.setAttribute("after.end", 1); // ignored
  span.end(); // a second end: ignored
}

/** A ReadableSpan as processors see it, minus what differs between two runs (ids, now-based times). */
function view(span: ReadableSpan) {
  return {
    name: span.name,
    kind: span.kind,
    traceFlags: span.spanContext().traceFlags,
    traceId: span.spanContext().traceId,
    parent: span.parentSpanContext?.spanId === undefined ? undefined : span.parentSpanContext.spanId.length,
    parentRemote: span.parentSpanContext?.isRemote,
    attributes: span.attributes,
    droppedAttributesCount: span.droppedAttributesCount,
    events: span.events.map((e) => ({
      name: e.name,
      attributes: e.attributes,
      dropped: e.droppedAttributesCount,
      stack: e.attributes?.["exception.stacktrace"] !== undefined,
    })),
    droppedEventsCount: span.droppedEventsCount,
    links: span.links,
    droppedLinksCount: span.droppedLinksCount,
    status: span.status,
    ended: span.ended,
    resource: span.resource.attributes,
    scope: span.instrumentationScope,
  };
}

/** Events carry their stack trace: compared by presence above, so drop it here. */
function withoutStacks(spans: ReadableSpan[]) {
  return spans.map((s) => {
    const v = view(s);
    return { ...v, events: v.events.map((e) => ({ ...e, attributes: { ...e.attributes, "exception.stacktrace": undefined } })) };
  });
}

describe("The service's own spans (service-span.ts) against the SDK's", () => {
  test("OBS-TRACE: the same API calls with the same span limits give the same spans as the SDK's: attributes, limits, events, links, status, name, times, end once", () => {
    const sdk = keeper();
    const ours = keeper();
    const sdkTracer = new BasicTracerProvider({ spanProcessors: [sdk], spanLimits: LIMITS }).getTracer("a2a-grpc-server", "1.0.0");
    const ourTracer = new ServiceTracer(new BasicTracerProvider({ spanProcessors: [ours], spanLimits: LIMITS }).getTracer("a2a-grpc-server", "1.0.0"));
    expect(ourTracer.lean).toBe(true);
    exercise((name, kind, attributes, parent, startMs) => sdkTracer.startSpan(name, { kind, attributes, startTime: startMs }, parent));
    exercise((name, kind, attributes, parent, startMs) => ourTracer.startSpan(name, kind, attributes, parent, startMs));

    expect(ours.spans.every((s) => s instanceof ServiceSpan)).toBe(true);
    expect(ours.started).toBe(2);
    expect(withoutStacks(ours.spans)).toEqual(withoutStacks(sdk.spans));
    // And they are what was asked for (equal could mean both lost something).
    const [child, server] = ours.spans;
    expect(server!.attributes).toEqual({ "rpc.system": "grpc-j", "rpc.method": "SendMe", "a.long": "abcdef", "rpc.grpc.status_code": 13 });
    expect(server!.droppedAttributesCount).toBe(2);
    expect(server!.events.map((e) => e.name)).toEqual(["second", "exception"]);
    expect(server!.links).toHaveLength(1);
    expect(server!.parentSpanContext?.spanId).toBe("00f067aa0ba902b7");
    expect(child!.parentSpanContext?.spanId).toBe(server!.spanContext().spanId);
    expect(child!.status).toEqual({ code: SpanStatusCode.OK });
    // Given times, to the SDK's nanosecond.
    const sdkChild = sdk.spans[0]!;
    expect(child!.startTime).toEqual(sdkChild.startTime);
    expect(child!.endTime).toEqual(sdkChild.endTime);
    expect(child!.duration).toEqual(sdkChild.duration);
    expect(server!.events[0]!.time).toEqual(sdk.spans[1]!.events[0]!.time);
    const [seconds] = server!.duration;
    expect(seconds).toBeGreaterThanOrEqual(0);
  });

  test("OBS-TRACE: the SDK tracer's sampler decides: an unsampled root is a non-recording span that reaches no processor; a sampled remote parent is followed; suppressed tracing makes nothing", () => {
    const ours = keeper();
    const sampler = new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(0) });
    const tracer = new ServiceTracer(new BasicTracerProvider({ spanProcessors: [ours], sampler }).getTracer("t"));
    const root = tracer.startSpan("root", SpanKind.SERVER, {}, ROOT_CONTEXT);
    expect(root).not.toBeInstanceOf(ServiceSpan);
    expect(root.isRecording()).toBe(false);
    expect(root.spanContext().traceFlags).toBe(TraceFlags.NONE);
    expect(root.spanContext().traceId).toMatch(/^[0-9a-f]{32}$/);
    root.end();
    const followed = tracer.startSpan("followed", SpanKind.SERVER, {}, REMOTE);
    expect(followed.spanContext().traceId).toBe("4bf92f3577b34da6a3ce929d0e0e4736");
    followed.end();
    const suppressed = tracer.startSpan("suppressed", SpanKind.INTERNAL, {}, suppressTracing(REMOTE));
    expect(suppressed.isRecording()).toBe(false);
    suppressed.end();
    expect(ours.spans.map((s) => s.name)).toEqual(["followed"]);
    expect(ours.started).toBe(1);
  });

  test("OBS-TRACE: a child of the service's own span is decided without asking the sampler only where the sampler would follow the parent's flag (parent-based defaults, always_on); any other sampler is asked", () => {
    const parentBased = (root: Sampler, more: Partial<ConstructorParameters<typeof ParentBasedSampler>[0]> = {}) => new ParentBasedSampler({ root, ...more });
    const sampledFlags = [TraceFlags.SAMPLED, TraceFlags.NONE];
    const decisions = (sampler: Sampler) => sampledFlags.map((flags) => localChildDecision(sampler)?.(flags).decision);
    const RECORD = SamplingDecision.RECORD_AND_SAMPLED;
    expect(decisions(parentBased(new AlwaysOnSampler()))).toEqual([RECORD, SamplingDecision.NOT_RECORD]);
    expect(decisions(parentBased(new TraceIdRatioBasedSampler(0.1)))).toEqual([RECORD, SamplingDecision.NOT_RECORD]);
    expect(decisions(new AlwaysOnSampler())).toEqual([RECORD, RECORD]);
    // The sampler is asked: other local delegates, a plain ratio, always_off, a sampler of the user's.
    expect(localChildDecision(parentBased(new AlwaysOnSampler(), { localParentSampled: new AlwaysOffSampler() }))).toBeUndefined();
    expect(localChildDecision(parentBased(new AlwaysOnSampler(), { localParentNotSampled: new AlwaysOnSampler() }))).toBeUndefined();
    expect(localChildDecision(new TraceIdRatioBasedSampler(0.5))).toBeUndefined();
    expect(localChildDecision(new AlwaysOffSampler())).toBeUndefined();
    expect(localChildDecision({ shouldSample: () => ({ decision: RECORD }) })).toBeUndefined();

    // End to end: a sampled root's child is recorded; a sampler that drops local children is still obeyed.
    for (const [sampler, childRecorded] of [
      [parentBased(new AlwaysOnSampler()), true],
      [parentBased(new AlwaysOnSampler(), { localParentSampled: new AlwaysOffSampler() }), false],
    ] as const) {
      const kept = keeper();
      const tracer = new ServiceTracer(new BasicTracerProvider({ spanProcessors: [kept], sampler }).getTracer("t"));
      const root = tracer.startSpan("root", SpanKind.SERVER, {}, ROOT_CONTEXT);
      const child = tracer.startSpan("child", SpanKind.INTERNAL, {}, tracer.contextWith(ROOT_CONTEXT, root));
      expect(child.isRecording()).toBe(childRecorded);
      expect(child.spanContext().traceId).toBe(root.spanContext().traceId);
      child.end();
      root.end();
      expect(kept.spans.map((span) => span.name)).toEqual(childRecorded ? ["child", "root"] : ["root"]);
    }
  });

  test("OBS-TRACE: our OTLP bytes for the service's spans decode to what the SDK's serialiser writes for them (times from epoch ms to the nanosecond)", async () => {
    const kept = keeper();
    const batches: EncodedBatch[] = [];
    const processor = new OtlpProtobufSpanProcessor(
      { send: (b, done) => (batches.push(b), done({ code: ExportResultCode.SUCCESS })), forceFlush: async () => {}, shutdown: async () => {} },
      { maxQueueSize: 100, maxExportBatchSize: 100, scheduledDelayMillis: 60_000, exportTimeoutMillis: 30_000 },
    );
    const provider = new BasicTracerProvider({ spanProcessors: [kept, processor] });
    exercise((name, kind, attributes, parent, startMs) =>
      new ServiceTracer(provider.getTracer("a2a-grpc-server")).startSpan(name, kind, attributes, parent, startMs),
    );
    await provider.forceFlush();
    expect(batches).toHaveLength(1);
    const ours = decodeProtobuf(batches[0]!.bytes);
    expect(ours).toEqual(decodeProtobuf(ProtobufTraceSerializer.serializeRequest(kept.spans)!));
    expect(ours.find((s) => s.name === "invoke_agent bench")!.startNanos).toBe(1_700_000_000_000_500_000n);
  });

  test("OBS-TRACE: with the pooled id generator, the ids our writer copies from its pools are the spans' ids (roots, children, remote parents, across pool refills)", async () => {
    const kept = keeper();
    const batches: EncodedBatch[] = [];
    const processor = new OtlpProtobufSpanProcessor(
      { send: (b, done) => (batches.push(b), done({ code: ExportResultCode.SUCCESS })), forceFlush: async () => {}, shutdown: async () => {} },
      { maxQueueSize: 10_000, maxExportBatchSize: 10_000, scheduledDelayMillis: 60_000, exportTimeoutMillis: 30_000 },
    );
    const provider = new BasicTracerProvider({ spanProcessors: [kept, processor], idGenerator: new PooledIdGenerator() });
    const tracer = new ServiceTracer(provider.getTracer("a2a-grpc-server"));
    // 1,500 calls of three spans: more ids than one pool holds (1,024 span ids), so pools change mid-call too.
    for (let i = 0; i < 1_500; i++) {
      const root = tracer.startSpan("call", SpanKind.SERVER, {}, i % 3 === 0 ? REMOTE : ROOT_CONTEXT);
      const run = tracer.startSpan("run", SpanKind.INTERNAL, {}, tracer.contextWith(ROOT_CONTEXT, root));
      const commit = tracer.startSpan("commit", SpanKind.CLIENT, {}, tracer.contextWith(ROOT_CONTEXT, run));
      commit.end();
      run.end();
      root.end();
    }
    await provider.forceFlush();
    expect(batches).toHaveLength(1);
    const ours = decodeProtobuf(batches[0]!.bytes);
    expect(ours).toHaveLength(4_500);
    expect(ours).toEqual(decodeProtobuf(ProtobufTraceSerializer.serializeRequest(kept.spans)!));
  });

  test("OBS-TRACE: withSpan is trace.setSpan: the span is current, the parent's other values are kept, setting or deleting values works as on the API's contexts", () => {
    const other = createContextKey("other");
    const parentSpan = trace.wrapSpanContext({ traceId: "1".repeat(32), spanId: "2".repeat(16), traceFlags: 1 });
    const span = trace.wrapSpanContext({ traceId: "3".repeat(32), spanId: "4".repeat(16), traceFlags: 1 });
    const parent = trace.setSpan(ROOT_CONTEXT.setValue(other, "kept"), parentSpan);
    const ours = withSpan(parent, span);
    expect(trace.getSpan(ours)).toBe(span);
    expect(ours.getValue(other)).toBe("kept");
    expect(trace.getSpan(withSpan(ours, parentSpan))).toBe(parentSpan);
    const more = ours.setValue(createContextKey("more"), 1);
    expect([trace.getSpan(more), more.getValue(other), more.getValue(createContextKey("more"))]).toEqual([span, "kept", 1]);
    expect(trace.getSpan(ours.deleteValue(createContextKey("OpenTelemetry Context Key SPAN")))).toBeUndefined();
    expect(ours.deleteValue(other).getValue(other)).toBeUndefined();
    expect(trace.getSpan(ours.deleteValue(other))).toBe(span);
    // What a propagator writes from it (a webhook's traceparent).
    const headers: Record<string, string> = {};
    new W3CTraceContextPropagator().inject(ours, headers, { set: (c, k, v) => void (c[k] = v) });
    expect(headers.traceparent).toBe(`00-${"3".repeat(32)}-${"4".repeat(16)}-01`);
  });

  test("OBS-TRACE: under the Node SDK the service's tracer makes its own spans (not silently the SDK's)", async () => {
    const kept = keeper();
    const tracing = await Tracing.start({ env: {}, spanProcessors: [kept] });
    try {
      const tracer = new ServiceTracer(trace.getTracer(TRACER_NAME));
      expect(tracer.lean).toBe(true);
      tracer.startSpan("s", SpanKind.INTERNAL, {}, ROOT_CONTEXT).end();
      expect(kept.spans[0]).toBeInstanceOf(ServiceSpan);
      expect(kept.spans[0]!.resource.attributes["service.name"]).toBe(TRACER_NAME);
    } finally {
      await tracing.shutdown();
    }
  });
});
