import { subscribe, unsubscribe } from "node:diagnostics_channel";
import type { CallMetadata } from "../service/face.js";
import { propagation, ROOT_CONTEXT, trace, TraceFlags, type Context, type Span, type TextMapGetter } from "@opentelemetry/api";
import { CHANNELS, runStartChannel, type PushDelivery, type PushDeliveryStart, type RunObservation, type StoreCommit } from "../lifecycle/index.js";
import type { CallObserver, CallStart } from "../service/call-observer.js";
import { AsyncContextManager } from "./async-context.js";
import { nowMs, ServiceSpans } from "./service-span.js";
import { startTracingSdk, TRACER_NAME, type TracingOptions } from "./tracing-sdk.js";

export { currentTraceContext, injectTraceHeaders } from "./trace-context.js";
export { TRACER_NAME, tracingRequested, type TracingOptions } from "./tracing-sdk.js";

/** What the tracer keeps per call: the server span and the context that makes it current. */
export interface CallSpan {
  readonly span: Span;
  readonly context: Context;
}

/** gRPC metadata as a carrier for the W3C propagators (traceparent, tracestate, baggage). */
const metadataGetter: TextMapGetter<CallMetadata> = {
  keys: (carrier) => Object.keys(carrier.getMap()),
  get: (carrier, key) => {
    const value = carrier.get(key)[0];
    return typeof value === "string" ? value : undefined;
  },
};

/**
 * OpenTelemetry tracing for the service: the OpenTelemetry Node SDK configured by the standard
 * OTEL_* variables (tracing-sdk.ts), and when the service's spans (service-span.ts) start and end:
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
  readonly observer: CallObserver<CallSpan | undefined>;
  readonly #spans: ServiceSpans;
  readonly #contextManager: AsyncContextManager;
  readonly #shutdownSdk: () => Promise<void>;
  /** Run spans whose observation's tracerState another tracer of this process holds (tests). */
  readonly #otherRunSpans = new WeakMap<RunObservation, Span>();
  readonly #deliverySpans = new WeakMap<PushDeliveryStart, Span>();
  readonly #handlers: Array<[string, (message: unknown) => void]>;
  /** The headers the configured propagators read (propagation.fields()). */
  readonly #propagatorFields: readonly string[];

  private constructor(contextManager: AsyncContextManager, spans: ServiceSpans, shutdownSdk: () => Promise<void>) {
    this.#contextManager = contextManager;
    this.#shutdownSdk = shutdownSdk;
    this.#spans = spans;
    this.#propagatorFields = propagation.fields().map((field) => field.toLowerCase());
    this.observer = {
      started: (call) => this.#callStarted(call),
      // Our context manager's storage directly: the API's context.with looks the global manager up on every call.
      around: (_call, state, run) => (state === undefined ? run() : contextManager.storage.run(state.context, run)),
      ended: (call, state) => {
        if (state !== undefined) this.#spans.endCall(state.span, call);
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
    const contextManager = new AsyncContextManager();
    const shutdownSdk = await startTracingSdk(options, contextManager);
    return new Tracing(contextManager, new ServiceSpans(trace.getTracer(TRACER_NAME)), shutdownSdk);
  }

  /** The agent's name, for the run spans; set once the agent is loaded. */
  get agentName(): string {
    return this.#spans.agentName;
  }

  set agentName(name: string) {
    this.#spans.agentName = name;
  }

  /** Stops tracing: no new spans, the queued ones exported, OpenTelemetry's globals released. */
  async shutdown(): Promise<void> {
    for (const [name, handler] of this.#handlers) unsubscribe(name, handler);
    runStartChannel.unbindStore(this.#contextManager.storage);
    await this.#shutdownSdk();
  }

  #callStarted(call: CallStart): CallSpan | undefined {
    if (!this.#spans.traces(call.service)) return undefined;
    const parent = this.#carriesContext(call.metadata) ? propagation.extract(ROOT_CONTEXT, call.metadata, metadataGetter) : ROOT_CONTEXT;
    const span = this.#spans.startCall(call.method, parent, call.binding);
    return { span, context: trace.setSpan(parent, span) };
  }

  /**
   * Whether the metadata holds any header the propagators read (traceparent, tracestate, baggage, or
   * whatever OTEL_PROPAGATORS chose): most calls carry none, and extracting from nothing still costs
   * a context per propagator.
   */
  #carriesContext(metadata: CallMetadata): boolean {
    for (const field of this.#propagatorFields) if (metadata.get(field).length > 0) return true;
    return false;
  }

  /** The store transform of the run channel: starts the run's span and returns the context the agent runs in. */
  #runStarted(run: RunObservation): Context {
    const parent = this.#contextManager.active();
    // A call that is not sampled: its run would not be either (see isUnsampledChild), so the agent
    // runs in the call's context as it is, and no span is made only to be dropped.
    if (isUnsampledChild(parent)) return parent;
    const span = this.#spans.startRun(run, parent);
    if (run.tracerState === undefined) run.tracerState = new HeldRunSpan(this, span);
    else this.#otherRunSpans.set(run, span);
    return trace.setSpan(parent, span);
  }

  #runEnded(run: RunObservation): void {
    const held = run.tracerState;
    let span: Span | undefined;
    if (held instanceof HeldRunSpan && held.tracing === this) {
      span = held.span;
      run.tracerState = undefined;
    } else {
      span = this.#otherRunSpans.get(run);
      if (span === undefined) return;
      this.#otherRunSpans.delete(run);
    }
    this.#spans.endRun(span, run);
  }

  #storeCommitted(commit: StoreCommit): void {
    const parent = this.#contextManager.active();
    if (!isUnsampledChild(parent)) this.#spans.commit(commit, parent);
  }

  /** A traced event's attempt starts: its span, child of the write's context, and the traceparent the request carries. */
  #pushDeliveryStarted(start: PushDeliveryStart): void {
    const parent = propagation.extract(ROOT_CONTEXT, { traceparent: start.traceContext });
    const span = this.#spans.startDelivery(parent);
    this.#deliverySpans.set(start, span);
    propagation.inject(trace.setSpan(parent, span), start.headers);
  }

  #pushDelivered(delivery: PushDelivery): void {
    const end = nowMs();
    const started = delivery.started && this.#deliverySpans.get(delivery.started);
    const span = started || this.#spans.startDelivery(this.#contextManager.active(), end - delivery.durationMs);
    this.#spans.endDelivery(span, delivery, end);
  }
}

/** A run's span, kept on its observation (tracerState) by the tracer that started it. */
class HeldRunSpan {
  constructor(
    readonly tracing: Tracing,
    readonly span: Span,
  ) {}
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
