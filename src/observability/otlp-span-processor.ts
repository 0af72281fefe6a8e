import { diag, TraceFlags, type Context } from "@opentelemetry/api";
import { ExportResultCode, type ExportResult } from "@opentelemetry/core";
import type { ReadableSpan, Span, SpanProcessor } from "@opentelemetry/sdk-trace-base";
import { encodeRequest, encodeRequestInPlace, encodeResource, encodeScope, ProtoWriter, writeSpan, type ScopeBatch } from "./otlp-protobuf.js";

/** Sent-from buffers kept for reuse at most: two batches in flight at once is the usual most. */
const MAX_SPARES = 2;

/** Where encoded batches go: an ExportTraceServiceRequest's bytes and how many spans they hold. */
export interface OtlpBatchSender {
  /** `batch.bytes` are lent: the processor writes later batches into them once `done` was called, so keep a copy to use them after. */
  send(batch: EncodedBatch, done: (result: ExportResult) => void): void;
  /** Waits for the batches in flight. */
  forceFlush(): Promise<void>;
  shutdown(): Promise<void>;
}

export interface EncodedBatch {
  readonly bytes: Uint8Array;
  readonly spans: number;
}

/** The batch processor's knobs, as the SDK's BatchSpanProcessor takes them (OTEL_BSP_*). */
export interface BatchLimits {
  /** Spans waiting or in flight at most; more are dropped. OTEL_BSP_MAX_QUEUE_SIZE, default 2048. */
  readonly maxQueueSize: number;
  /** Spans per request at most. OTEL_BSP_MAX_EXPORT_BATCH_SIZE, default 512. */
  readonly maxExportBatchSize: number;
  /** How long the first span of a batch waits for others, ms. OTEL_BSP_SCHEDULE_DELAY, default 5000. */
  readonly scheduledDelayMillis: number;
  /** How long an export may take before it counts as failed, ms. OTEL_BSP_EXPORT_TIMEOUT, default 30000. */
  readonly exportTimeoutMillis: number;
}

/** The BatchSpanProcessor's limits from OTEL_BSP_* (its defaults where unset or not a non-negative number). */
export function batchLimitsFromEnv(env: NodeJS.ProcessEnv): BatchLimits {
  const number = (name: string, fallback: number) => {
    const raw = env[name]?.trim();
    const value = raw === undefined || raw === "" ? Number.NaN : Number(raw);
    return Number.isFinite(value) && value >= 0 ? value : fallback;
  };
  const maxQueueSize = number("OTEL_BSP_MAX_QUEUE_SIZE", 2048);
  return {
    maxQueueSize,
    maxExportBatchSize: Math.min(number("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512), maxQueueSize),
    scheduledDelayMillis: number("OTEL_BSP_SCHEDULE_DELAY", 5000),
    exportTimeoutMillis: number("OTEL_BSP_EXPORT_TIMEOUT", 30000),
  };
}

/**
 * A batching span processor that writes each sampled span as OTLP protobuf the moment it ends and
 * keeps only those bytes until the batch is sent. It behaves as the SDK's BatchSpanProcessor does
 * (the same OTEL_BSP_* limits: a batch goes when it is full or its first span has waited the
 * delay; spans past the queue size are dropped; forceFlush and shutdown send what is left), but
 * no span object outlives its call: with the SDK's processor every span of a batch stays in the
 * heap until the export and is then measured and written, which made span retention and the
 * OTLP serialisation most of tracing's cost per call (bench/observability.ts).
 *
 * A span of another resource than the batch's (one tracer provider has one) sends the batch first.
 */
export class OtlpProtobufSpanProcessor implements SpanProcessor {
  readonly #sender: OtlpBatchSender;
  readonly #limits: BatchLimits;
  /** The current batch: per scope, its spans' bytes. */
  #scopes = new Map<object, { scope: Buffer; schemaUrl: string | undefined; writer: ProtoWriter }>();
  #resource: ReadableSpan["resource"] | undefined;
  #resourceBytes: Buffer | undefined;
  #batchSpans = 0;
  /** Spans of batches sent and not yet answered. */
  #inFlight = 0;
  readonly #pending = new Set<Promise<void>>();
  #timer: NodeJS.Timeout | undefined;
  #dropped = 0;
  #shutdown: Promise<void> | undefined;
  readonly #scopeCache = new WeakMap<object, Buffer>();
  /** Writer buffers sent from and given back (see #request). */
  readonly #spares: Buffer[] = [];

  constructor(sender: OtlpBatchSender, limits: BatchLimits) {
    this.#sender = sender;
    this.#limits = limits;
  }

  onStart(_span: Span, _parentContext: Context): void {}

  onEnd(span: ReadableSpan): void {
    if (this.#shutdown !== undefined || (span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
    if (this.#batchSpans + this.#inFlight >= this.#limits.maxQueueSize) {
      if (this.#dropped++ === 0) diag.debug("maxQueueSize reached, dropping spans");
      return;
    }
    if (this.#resource !== span.resource) {
      if (this.#batchSpans > 0) this.#send();
      this.#resource = span.resource;
      this.#resourceBytes = encodeResource(span.resource);
    }
    const scopeKey = span.instrumentationScope as object;
    let scope = this.#scopes.get(scopeKey);
    if (scope === undefined) {
      const bytes = this.#scopeBytes(span.instrumentationScope);
      // Room for the request's head before the spans (see #send): two tags and two lengths besides the resource and scope.
      const writer = new ProtoWriter(16 * 1024, this.#resourceBytes!.length + bytes.length + 16);
      scope = { scope: bytes, schemaUrl: span.instrumentationScope.schemaUrl, writer };
      this.#scopes.set(scopeKey, scope);
    }
    writeSpan(scope.writer, 2, span);
    this.#batchSpans++;
    if (this.#batchSpans >= this.#limits.maxExportBatchSize) this.#send();
    else if (this.#timer === undefined) {
      this.#timer = setTimeout(() => this.#send(), this.#limits.scheduledDelayMillis);
      this.#timer.unref();
    }
  }

  async forceFlush(): Promise<void> {
    if (this.#batchSpans > 0) this.#send();
    await Promise.all([...this.#pending]);
    await this.#sender.forceFlush();
  }

  shutdown(): Promise<void> {
    this.#shutdown ??= (async () => {
      if (this.#batchSpans > 0) this.#send();
      await Promise.all([...this.#pending]);
      await this.#sender.shutdown();
    })();
    return this.#shutdown;
  }

  /**
   * The batch's request. Usually one scope has spans (the service's own tracer): the request is then
   * written around them in that writer's buffer and sent from it (lent), and the writer goes on in
   * a spare buffer, one given back by an earlier send when there is one (a reused buffer's pages are
   * already in memory). Otherwise the parts are copied into a new buffer (encodeRequest).
   */
  #request(): { bytes: Buffer; lent: Buffer | undefined } {
    let only: { scope: Buffer; schemaUrl: string | undefined; writer: ProtoWriter } | undefined;
    let scopesWithSpans = 0;
    for (const s of this.#scopes.values()) {
      if (s.writer.empty) continue;
      scopesWithSpans++;
      only = s;
    }
    if (scopesWithSpans === 1) {
      const writer = only!.writer;
      const bytes = encodeRequestInPlace(writer, this.#resourceBytes!, this.#resource?.schemaUrl, only!.scope, only!.schemaUrl);
      if (bytes !== undefined) {
        const lent = writer.buf;
        writer.resetInto(this.#spares.pop() ?? Buffer.allocUnsafe(lent.length));
        return { bytes, lent };
      }
    }
    const scopes: ScopeBatch[] = [];
    for (const s of this.#scopes.values()) if (!s.writer.empty) scopes.push({ scope: s.scope, schemaUrl: s.schemaUrl, spans: s.writer.bytes() });
    const bytes = encodeRequest(this.#resourceBytes!, this.#resource?.schemaUrl, scopes);
    // The writers are reused: encodeRequest copied their bytes.
    for (const s of this.#scopes.values()) s.writer.reset();
    return { bytes, lent: undefined };
  }

  #scopeBytes(scope: ReadableSpan["instrumentationScope"]): Buffer {
    let bytes = this.#scopeCache.get(scope);
    if (bytes === undefined) {
      bytes = encodeScope(scope);
      this.#scopeCache.set(scope, bytes);
    }
    return bytes;
  }

  #send(): void {
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    if (this.#batchSpans === 0 || this.#resourceBytes === undefined) return;
    if (this.#dropped > 0) {
      diag.warn(`Dropped ${this.#dropped} spans because maxQueueSize reached`);
      this.#dropped = 0;
    }
    const { bytes, lent } = this.#request();
    const spans = this.#batchSpans;
    this.#batchSpans = 0;
    this.#inFlight += spans;
    const sent = new Promise<void>((resolve) => {
      let settled = false;
      const finish = (result: ExportResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timeout);
        this.#inFlight -= spans;
        if (result.code !== ExportResultCode.SUCCESS) diag.error("BatchSpanProcessor: span export failed", result.error);
        resolve();
      };
      const timeout = setTimeout(() => finish({ code: ExportResultCode.FAILED, error: new Error("Timeout") }), this.#limits.exportTimeoutMillis);
      timeout.unref();
      // The lent buffer is taken back only when the sender is done with it (not at our timeout: it may still be writing it).
      const sent = (result: ExportResult) => {
        if (lent !== undefined && this.#spares.length < MAX_SPARES) this.#spares.push(lent);
        finish(result);
      };
      try {
        this.#sender.send({ bytes, spans }, sent);
      } catch (error) {
        finish({ code: ExportResultCode.FAILED, error: error as Error });
      }
    });
    this.#pending.add(sent);
    void sent.then(() => this.#pending.delete(sent));
    // Scopes that sent nothing for a while are let go, so the map does not keep every tracer ever seen.
    if (this.#scopes.size > 16) this.#scopes.clear();
  }
}
