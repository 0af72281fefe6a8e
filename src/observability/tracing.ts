import { subscribe, unsubscribe } from "node:diagnostics_channel";
import type * as grpc from "@grpc/grpc-js";
import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Attributes,
  isSpanContextValid,
  type Context,
  type Span,
  type TextMapGetter,
} from "@opentelemetry/api";
import type { NodeSDKConfiguration } from "@opentelemetry/sdk-node";
import { A2AService } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { CHANNELS, runStartChannel, type PushDelivery, type PushDeliveryStart, type RunObservation, type StoreCommit } from "../lifecycle/diagnostics.js";
import { AsyncContextManager } from "./async-context.js";
import { PooledIdGenerator } from "./id-generator.js";
import { epochMs, nowMs, type ServiceTracer } from "./service-span.js";
import type { CallEnded, CallObserver, CallStart } from "../protocol/call-observer.js";

/** The tracer's name (instrumentation scope) and the service name used when OTEL_SERVICE_NAME is unset. */
export const TRACER_NAME = "a2a-grpc-server";
const A2A_SERVICE = A2AService.typeName;

/**
 * Tracing is off unless asked for: OTEL_TRACES_EXPORTER names an exporter (otlp, console; "none"
 * keeps it off), and OTEL_SDK_DISABLED is not true. (The OpenTelemetry default for an unset
 * OTEL_TRACES_EXPORTER is otlp; a server that sends spans nowhere unless told is the safer default.)
 */
export function tracingRequested(env: NodeJS.ProcessEnv): boolean {
  const exporters = (env.OTEL_TRACES_EXPORTER ?? "")
    .split(",")
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== "" && s !== "none");
  return exporters.length > 0 && (env.OTEL_SDK_DISABLED ?? "").trim().toLowerCase() !== "true";
}

export interface TracingOptions {
  readonly env: NodeJS.ProcessEnv;
  /** Instead of the exporters OTEL_TRACES_EXPORTER picks (tests: an in-memory exporter); turns tracing on. */
  readonly spanProcessors?: NodeSDKConfiguration["spanProcessors"];
}

/** What the tracer keeps per call: the server span and the context that makes it current. */
export interface CallSpan {
  readonly span: Span;
  readonly context: Context;
}

/** An A2A method's server span name. */
interface MethodSpan {
  readonly name: string;
  readonly method: string;
}

/** gRPC metadata as a carrier for the W3C propagators (traceparent, tracestate, baggage). */
const metadataGetter: TextMapGetter<grpc.Metadata> = {
  keys: (carrier) => Object.keys(carrier.getMap()),
  get: (carrier, key) => {
    const value = carrier.get(key)[0];
    return typeof value === "string" ? value : undefined;
  },
};

/** Codes that mean the server failed (OpenTelemetry's RPC conventions for server spans); the others are the client's. */
const SERVER_ERROR_CODES: ReadonlySet<number> = new Set([2, 4, 12, 13, 14, 15]);

/**
 * OpenTelemetry tracing for the service: the OpenTelemetry Node SDK configured by the standard
 * OTEL_* variables (exporter, endpoint, protocol, service name, sampler, propagators), and the
 * spans of the service:
 * - a SERVER span per A2A RPC, continuing the client's W3C traceparent from the gRPC metadata
 *   (or starting a trace), current while the handler runs;
 * - an `invoke_agent` span per agent run, child of the RPC's span, current while the agent runs
 *   (so the agent's own spans nest under it);
 * - a span per store commit, child of what was current when it happened (the write that opened
 *   the batch);
 * - a span per push delivery attempt: for an event whose write was traced, a child of that
 *   write's context (kept with the outbox entry, see currentTraceContext) whose traceparent the
 *   webhook request carries; else a span of its own.
 * Load it only when tracing is requested: the SDK is imported on demand.
 */
export class Tracing {
  /** The agent's name, for the run spans; set once the agent is loaded. */
  agentName = "agent";
  readonly observer: CallObserver<CallSpan | undefined>;
  /** Our spans (service-span.ts): the SDK tracer's sampler, ids, processor and limits, lighter span objects. */
  readonly #spans: ServiceTracer;
  readonly #contextManager: AsyncContextManager;
  readonly #shutdownSdk: () => Promise<void>;
  /** Run spans not kept on their observation (see #runStarted). */
  readonly #otherRunSpans = new WeakMap<RunObservation, Span>();
  #runSpanNameOf: string | undefined;
  #runSpanNameCached = "";
  readonly #deliverySpans = new WeakMap<PushDeliveryStart, Span>();
  readonly #commitSpanNames = new Map<string, string>();
  readonly #handlers: Array<[string, (message: unknown) => void]>;
  /** The headers the configured propagators read (propagation.fields()). */
  readonly #propagatorFields: readonly string[];
  readonly #methodSpans = new Map<string, MethodSpan>();
  readonly #peers = new PeerCache();

  private constructor(contextManager: AsyncContextManager, spans: ServiceTracer, shutdownSdk: () => Promise<void>) {
    this.#contextManager = contextManager;
    this.#shutdownSdk = shutdownSdk;
    this.#spans = spans;
    this.#propagatorFields = propagation.fields().map((field) => field.toLowerCase());
    this.observer = {
      started: (call) => this.#callStarted(call),
      // Our context manager's storage directly: the API's context.with looks the global manager up
      // (with a version check) on every call.
      around: (_call, state, run) => (state === undefined ? run() : contextManager.storage.run(state.context, run)),
      ended: (call, state) => {
        if (state !== undefined) this.#callEnded(call, state.span);
      },
    };
    // The agent runs inside its span's context: the channel's store is the context manager's storage.
    runStartChannel.bindStore(contextManager.storage, (message) => this.#runStarted(message as RunObservation));
    this.#handlers = [
      [CHANNELS.runEnd, (m) => this.#runEnded(m as RunObservation)],
      [CHANNELS.storeCommit, (m) => this.#storeCommitted(m as StoreCommit)],
      [CHANNELS.pushDeliveryStart, (m) => this.#pushDeliveryStarted(m as PushDeliveryStart)],
      [CHANNELS.pushDelivery, (m) => this.#pushDelivered(m as PushDelivery)],
    ];
    for (const [name, handler] of this.#handlers) subscribe(name, handler);
  }

  /** Starts the SDK (and registers it as OpenTelemetry's global tracer, propagator and context manager). */
  static async start(options: TracingOptions): Promise<Tracing> {
    const [{ NodeSDK }, { ServiceTracer }] = await Promise.all([import("@opentelemetry/sdk-node"), import("./service-span.js")]);
    const contextManager = new AsyncContextManager();
    const spanProcessors = options.spanProcessors ?? (await directOtlpProcessors(options.env));
    const sdk = new NodeSDK({
      serviceName: options.env.OTEL_SERVICE_NAME === undefined ? TRACER_NAME : undefined,
      contextManager,
      idGenerator: new PooledIdGenerator(),
      instrumentations: [],
      // Metrics go to Prometheus (/metrics) and logs to pino: the SDK exports spans only.
      metricReaders: [],
      logRecordProcessors: [],
      ...(spanProcessors !== undefined ? { spanProcessors } : {}),
    });
    sdk.start();
    return new Tracing(contextManager, new ServiceTracer(trace.getTracer(TRACER_NAME)), async () => {
      await sdk.shutdown(); // flushes the spans still queued
      trace.disable();
      propagation.disable();
      context.disable();
    });
  }

  /** Stops tracing: no new spans, the queued ones exported, OpenTelemetry's globals released. */
  async shutdown(): Promise<void> {
    for (const [name, handler] of this.#handlers) unsubscribe(name, handler);
    runStartChannel.unbindStore(this.#contextManager.storage);
    await this.#shutdownSdk();
  }

  #callStarted(call: CallStart): CallSpan | undefined {
    if (call.service !== A2A_SERVICE) return undefined; // health checks and reflection are not traced
    const parent = this.#carriesContext(call.metadata) ? propagation.extract(ROOT_CONTEXT, call.metadata, metadataGetter) : ROOT_CONTEXT;
    const method = this.#methodSpan(call.method);
    // Grown from {}: the span takes this object and adds its end attributes to it (see ServiceTracer.startSpan).
    const attributes: Attributes = {};
    attributes["rpc.system"] = "grpc";
    attributes["rpc.service"] = A2A_SERVICE;
    attributes["rpc.method"] = method.method;
    const span = this.#spans.startSpan(method.name, SpanKind.SERVER, attributes, parent);
    return { span, context: this.#spans.contextWith(parent, span) };
  }

  /**
   * Whether the metadata holds any header the propagators read (traceparent, tracestate, baggage, or
   * whatever OTEL_PROPAGATORS chose): most calls carry none, and extracting from nothing still costs
   * a context per propagator.
   */
  #carriesContext(metadata: grpc.Metadata): boolean {
    // grpc-js keeps the values in a Map of lowercase keys (the fields are lowercase); its get()
    // makes an empty array for each absent key, three per call.
    const values = (metadata as unknown as { internalRepr?: unknown }).internalRepr;
    if (values instanceof Map) {
      for (const field of this.#propagatorFields) if ((values.get(field) as unknown[] | undefined)?.length) return true;
      return false;
    }
    for (const field of this.#propagatorFields) if (metadata.get(field).length > 0) return true;
    return false;
  }

  /** The span name of an A2A method, made once per method. */
  #methodSpan(method: string): MethodSpan {
    let known = this.#methodSpans.get(method);
    if (known === undefined) {
      known = { name: `${A2A_SERVICE}/${method}`, method };
      this.#methodSpans.set(method, known);
    }
    return known;
  }

  #callEnded(call: CallEnded, span: Span): void {
    if (span.isRecording()) {
      span.setAttribute("rpc.grpc.status_code", call.code);
      if (call.taskId !== undefined) span.setAttribute("a2a.task.id", call.taskId);
      const remote = call.remote;
      if (remote?.remoteAddress !== undefined && remote.remotePort !== undefined) {
        span.setAttribute("network.peer.address", remote.remoteAddress);
        span.setAttribute("network.peer.port", remote.remotePort);
      } else {
        const peer = this.#peers.parse(call.peer);
        if (peer !== undefined) {
          span.setAttribute("network.peer.address", peer.address);
          span.setAttribute("network.peer.port", peer.port);
        }
      }
      if (SERVER_ERROR_CODES.has(call.code)) span.setStatus({ code: SpanStatusCode.ERROR, message: call.details ?? "" });
    }
    span.end();
  }

  /** The store transform of the run channel: starts the run's span and returns the context the agent runs in. */
  #runStarted(run: RunObservation): Context {
    const parent = this.#contextManager.active();
    // A call that is not sampled: its run would not be either (see isUnsampledChild), so the agent
    // runs in the call's context as it is, and no span is made only to be dropped.
    if (isUnsampledChild(parent)) return parent;
    const attributes: Attributes = {};
    attributes["gen_ai.operation.name"] = "invoke_agent";
    attributes["gen_ai.agent.name"] = this.agentName;
    attributes["gen_ai.conversation.id"] = run.contextId;
    if (run.taskId !== undefined) attributes["a2a.task.id"] = run.taskId;
    if (run.resumed) attributes["a2a.run.resumed"] = true;
    // Its times are the observation's own clock readings (startedAt, durationMs): none of the span's.
    const span = this.#spans.startSpan(this.#runSpanName(), SpanKind.INTERNAL, attributes, parent, epochMs(run.startedAt));
    // Kept on the observation; in a WeakMap only when another tracer of this process holds that field (tests).
    if (run.tracerState === undefined && this.#spans.lean) run.tracerState = span;
    else this.#otherRunSpans.set(run, span);
    return this.#spans.contextWith(parent, span);
  }

  /** "invoke_agent <agent>", made once per agent name (a new string per run would be hashed anew by the OTLP writer's cache). */
  #runSpanName(): string {
    if (this.#runSpanNameOf !== this.agentName) {
      this.#runSpanNameOf = this.agentName;
      this.#runSpanNameCached = `invoke_agent ${this.agentName}`;
    }
    return this.#runSpanNameCached;
  }

  #runEnded(run: RunObservation): void {
    const held = run.tracerState as Span | undefined;
    let span: Span | undefined;
    if (held !== undefined && this.#spans.made(held)) {
      span = held;
      run.tracerState = undefined;
    } else {
      span = this.#otherRunSpans.get(run);
      if (span === undefined) return;
      this.#otherRunSpans.delete(run);
    }
    if (run.taskId !== undefined) span.setAttribute("a2a.task.id", run.taskId);
    if (run.failed) span.setStatus({ code: SpanStatusCode.ERROR, message: "the agent failed" });
    span.end(run.durationMs === undefined ? undefined : epochMs(run.startedAt + run.durationMs));
  }

  #storeCommitted(commit: StoreCommit): void {
    const parent = this.#contextManager.active();
    if (isUnsampledChild(parent)) return;
    const end = nowMs();
    const attributes: Attributes = {};
    attributes["db.system.name"] = commit.store;
    attributes["db.operation.name"] = "COMMIT";
    attributes["a2a.store.batch.writes"] = commit.writes;
    attributes["a2a.store.batch.tasks"] = commit.tasks;
    const span = this.#spans.startSpan(this.#commitSpanName(commit.store), SpanKind.CLIENT, attributes, parent, end - commit.durationMs);
    if (commit.failed) span.setStatus({ code: SpanStatusCode.ERROR, message: "the commit failed; its writes were lost" });
    span.end(end);
  }

  /** "<store> commit", made once per store (as #runSpanName: a new string per commit is hashed anew by the OTLP writer's cache). */
  #commitSpanName(store: string): string {
    let name = this.#commitSpanNames.get(store);
    if (name === undefined) {
      name = `${store} commit`;
      this.#commitSpanNames.set(store, name);
    }
    return name;
  }

  /** A traced event's attempt starts: its span, child of the write's context, and the traceparent the request carries. */
  #pushDeliveryStarted(start: PushDeliveryStart): void {
    const parent = propagation.extract(ROOT_CONTEXT, { traceparent: start.traceContext });
    const span = this.#spans.startSpan("push delivery", SpanKind.CLIENT, {}, parent);
    this.#deliverySpans.set(start, span);
    propagation.inject(trace.setSpan(parent, span), start.headers);
  }

  #pushDelivered(delivery: PushDelivery): void {
    const end = nowMs();
    const started = delivery.started && this.#deliverySpans.get(delivery.started);
    const span = started || this.#spans.startSpan("push delivery", SpanKind.CLIENT, {}, this.#contextManager.active(), end - delivery.durationMs);
    span.setAttributes({ "a2a.push.outcome": delivery.outcome, "a2a.push.attempt": delivery.attempt });
    if (delivery.outcome === "gave-up" || delivery.outcome === "retrying") span.setStatus({ code: SpanStatusCode.ERROR, message: delivery.outcome });
    span.end(end);
  }
}

/**
 * OTLP over HTTP protobuf alone (OTEL_TRACES_EXPORTER=otlp, the default protocol): our processor
 * that writes each span as protobuf when it ends (otlp-span-processor.ts), sending through the
 * SDK's HTTP export. Anything else (grpc, http/json, console, zipkin, several exporters): undefined,
 * and the SDK sets up its own processors from the same variables.
 */
async function directOtlpProcessors(env: NodeJS.ProcessEnv): Promise<NodeSDKConfiguration["spanProcessors"] | undefined> {
  const exporters = (env.OTEL_TRACES_EXPORTER ?? "")
    .split(",")
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== "");
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? "http/protobuf").trim().toLowerCase();
  if (exporters.length !== 1 || exporters[0] !== "otlp" || protocol !== "http/protobuf") return undefined;
  const [{ OtlpProtobufSpanProcessor, batchLimitsFromEnv }, { otlpHttpProtobufSender }] = await Promise.all([
    import("./otlp-span-processor.js"),
    import("./otlp-http-sender.js"),
  ]);
  return [new OtlpProtobufSpanProcessor(otlpHttpProtobufSender(), batchLimitsFromEnv(env))];
}

/**
 * The active span's context as a W3C traceparent, or undefined when no span is active: what a
 * store keeps with an outbox entry (the TraceContextSource port of src/lifecycle/push-outbox.ts),
 * so the webhook request joins the trace of the write. Formatted here, without a propagator
 * carrier: it runs on every traced write of a task with push configs.
 */
export function currentTraceContext(): string | undefined {
  const span = trace.getSpan(context.active());
  if (span === undefined) return undefined;
  const sc = span.spanContext();
  if (!isSpanContextValid(sc)) return undefined;
  return `00-${sc.traceId}-${sc.spanId}-${(sc.traceFlags & 0xff).toString(16).padStart(2, "0")}`;
}

/**
 * Adds the current trace context (W3C `traceparent`, `tracestate`) to outgoing HTTP headers,
 * e.g. a push notification's webhook request, so the receiver's spans join the trace. Does
 * nothing while tracing is off.
 */
export function injectTraceHeaders(headers: Record<string, string>): void {
  propagation.inject(context.active(), headers);
}

/**
 * Whether a span started in `parent` would be dropped: its parent span is local and not sampled.
 * Every sampler OTEL_TRACES_SAMPLER can name drops it then: the parent-based ones follow the parent,
 * traceidratio decides by the trace id the parent was decided by, always_on records every server
 * span (so never leaves such a parent), always_off drops everything.
 */
function isUnsampledChild(parent: Context): boolean {
  const span = trace.getSpan(parent);
  if (span === undefined) return false;
  const sc = span.spanContext();
  // The sampled flag, not isRecording alone: a sampled parent (an agent's step) may have ended before the commit it opened.
  return sc.isRemote !== true && (sc.traceFlags & TraceFlags.SAMPLED) === 0 && !span.isRecording();
}

/**
 * Peers parsed into the span's address and port, kept: the calls of one connection share their
 * peer string, and parsing it each time (a regular expression) was a visible part of a call's
 * tracing cost. Bounded: emptied when full.
 */
class PeerCache {
  static readonly MAX = 1024;
  readonly #parsed = new Map<string, PeerAddress | undefined>();

  parse(peer: string): PeerAddress | undefined {
    const known = this.#parsed.get(peer);
    if (known !== undefined || this.#parsed.has(peer)) return known;
    if (this.#parsed.size >= PeerCache.MAX) this.#parsed.clear();
    const parsed = splitPeer(peer);
    this.#parsed.set(peer, parsed);
    return parsed;
  }
}

interface PeerAddress {
  readonly address: string;
  readonly port: number;
}

/** "127.0.0.1:5555", "[::1]:5555" → address and port; undefined for anything else ("unknown"). */
function splitPeer(peer: string): PeerAddress | undefined {
  const colon = peer.lastIndexOf(":");
  const port = Number(peer.slice(colon + 1));
  if (colon <= 0 || !Number.isInteger(port)) return undefined;
  return { address: peer.slice(0, colon).replace(/^\[(.*)\]$/, "$1"), port };
}
