import {
  createContextKey,
  diag,
  INVALID_SPAN_CONTEXT,
  isSpanContextValid,
  SamplingDecision,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Attributes,
  type AttributeValue,
  type Context,
  type Exception,
  type HrTime,
  type Link,
  type Span,
  type SpanContext,
  type SpanKind,
  type SpanStatus,
  type TimeInput,
  type Tracer,
} from "@opentelemetry/api";
import {
  hrTimeDuration,
  hrTimeToMilliseconds,
  isAttributeValue,
  isTimeInput,
  isTracingSuppressed,
  millisToHrTime,
  sanitizeAttributes,
  timeInputToHrTime,
} from "@opentelemetry/core";
import type { IdGenerator, ReadableSpan, Sampler, SamplingResult, SpanLimits, SpanProcessor, TimedEvent } from "@opentelemetry/sdk-trace-base";
import { PooledIdGenerator } from "./id-generator.js";

/*
 * The spans the service makes itself (a call's SERVER span, the agent run's invoke_agent span,
 * store commits, push deliveries), started with the SDK tracer's own sampler, id generator,
 * resource, scope, span limits and span processor, but as lighter objects than the SDK's
 * SpanImpl: measured (`npm run bench -- otel-spans`), the SDK's span start and end were the
 * largest part of a traced call's cost (attributes sanitised twice and copied one by one, the
 * SDK's self-metrics' attribute objects and closure per span, times kept as [s, ns] pairs and
 * converted on every use). These keep times as epoch milliseconds (the OTLP writer reads them
 * directly) and take the attribute object they are given.
 *
 * They behave as the SDK's spans do for everything the OpenTelemetry API lets a holder do (the
 * agent may get its run's span as the active span): attributes, events, links and their limits,
 * status, name, end, recordException; and they are ReadableSpans, so any span processor or
 * exporter takes them. test/observability/service-span-tracing.test.ts compares them with the SDK's.
 * What they leave out: the SDK's self-metrics (otel.sdk.span.*), which need a meter provider the
 * service does not configure.
 */

/** What a ServiceTracer takes from the SDK's tracer. */
interface SdkTracerParts {
  readonly sampler: Sampler;
  readonly spanLimits: SpanLimits;
  readonly idGenerator: IdGenerator;
  readonly resource: ReadableSpan["resource"];
  readonly instrumentationScope: ReadableSpan["instrumentationScope"];
  readonly spanProcessor: SpanProcessor;
}

/**
 * The parts of an SDK Tracer (sdk-trace 2.x keeps them as plain fields, typed private), or
 * undefined if this is not such a tracer: the caller then keeps using the SDK's spans.
 */
function sdkTracerParts(tracer: Tracer): SdkTracerParts | undefined {
  const t = tracer as unknown as Record<string, unknown>;
  const sampler = t._sampler as Sampler | undefined;
  const idGenerator = t._idGenerator as IdGenerator | undefined;
  const spanProcessor = t._spanProcessor as SpanProcessor | undefined;
  const spanLimits = t._spanLimits as SpanLimits | undefined;
  const resource = t._resource as ReadableSpan["resource"] | undefined;
  const instrumentationScope = t.instrumentationScope as ReadableSpan["instrumentationScope"] | undefined;
  if (
    typeof sampler?.shouldSample !== "function" ||
    typeof idGenerator?.generateSpanId !== "function" ||
    typeof spanProcessor?.onEnd !== "function" ||
    typeof spanLimits !== "object" ||
    typeof resource?.attributes !== "object" ||
    typeof instrumentationScope?.name !== "string"
  ) {
    return undefined;
  }
  return { sampler, idGenerator, spanProcessor, spanLimits, resource, instrumentationScope };
}

const NO_LINKS: Link[] = [];
const NONE: never[] = Object.freeze([]) as never[];
const UNSET: SpanStatus = Object.freeze({ code: SpanStatusCode.UNSET });

/** A sampler's decision for a child of a local span, from the parent's trace flags alone. */
type LocalChildDecision = (parentFlags: number) => SamplingResult;

const RECORD_AND_SAMPLE: SamplingResult = Object.freeze({ decision: SamplingDecision.RECORD_AND_SAMPLED });
const DROP: SamplingResult = Object.freeze({ decision: SamplingDecision.NOT_RECORD });

/**
 * How `sampler` decides a child of a local span, when that depends on the parent's sampled flag
 * alone: the ParentBasedSampler with its default local delegates (AlwaysOn for a sampled parent,
 * AlwaysOff for the other), which every parentbased_* value of OTEL_TRACES_SAMPLER makes, and
 * always_on. Read from toString(), the samplers' public description of their parts, so that any
 * copy of the SDK's classes is recognised; undefined for anything else (the sampler is asked).
 * Why: the invoke_agent and store-commit spans are children of our own spans, and the parent-based
 * sampler checks the parent's ids with regular expressions on every call.
 */
export function localChildDecision(sampler: Sampler): LocalChildDecision | undefined {
  const described = sampler.toString();
  if (described === "AlwaysOnSampler") return () => RECORD_AND_SAMPLE;
  if (/^ParentBased\{root=.*, localParentSampled=AlwaysOnSampler, localParentNotSampled=AlwaysOffSampler\}$/.test(described)) {
    return (parentFlags) => ((parentFlags & TraceFlags.SAMPLED) !== 0 ? RECORD_AND_SAMPLE : DROP);
  }
  return undefined;
}

/** Starts the service's spans: ServiceSpans where the SDK's tracer lends its parts, else the SDK's own spans. */
export class ServiceTracer {
  readonly #parts: SdkTracerParts | undefined;
  readonly #sdk: Tracer;
  readonly #localChild: LocalChildDecision | undefined;
  /** The id generator when it is ours: it says where each id's bytes are (see ServiceSpan.spanIdPool). */
  readonly #pooled: PooledIdGenerator | undefined;

  constructor(sdkTracer: Tracer) {
    this.#sdk = sdkTracer;
    this.#parts = sdkTracerParts(sdkTracer);
    this.#localChild = this.#parts === undefined ? undefined : localChildDecision(this.#parts.sampler);
    this.#pooled = this.#parts?.idGenerator instanceof PooledIdGenerator ? this.#parts.idGenerator : undefined;
  }

  /** True when spans are ServiceSpans (the SDK's tracer was recognised). */
  get lean(): boolean {
    return this.#parts !== undefined;
  }

  /** Whether `span` is a ServiceSpan this tracer started. */
  made(span: Span): boolean {
    return span instanceof ServiceSpan && this.#parts !== undefined && span.startedWith(this.#parts);
  }

  /** `parent` with `span` current in it (as trace.setSpan, cheaper: see withSpan). */
  contextWith(parent: Context, span: Span): Context {
    return withSpan(parent, span);
  }

  /**
   * A span named `name`, child of the span in `parent` (if any), decided by the sampler.
   * `attributes` becomes the span's own object: pass a fresh one, best grown from {} (keys are
   * added to it later: see the constructor). `startMs`: epoch ms, default now.
   */
  startSpan(name: string, kind: SpanKind, attributes: Attributes, parent: Context, startMs?: number): Span {
    const parts = this.#parts;
    if (parts === undefined) return this.#sdk.startSpan(name, { kind, attributes, startTime: startMs }, parent);
    if (isTracingSuppressed(parent)) return trace.wrapSpanContext(INVALID_SPAN_CONTEXT);
    const parentSpan = trace.getSpan(parent);
    const parentContext = parentSpan?.spanContext();
    // A ServiceSpan's ids are the id generator's: valid without the check's regular expressions.
    const ours = parentSpan instanceof ServiceSpan;
    const child = parentContext !== undefined && (ours || isSpanContextValid(parentContext));
    const pooled = this.#pooled;
    const spanId = parts.idGenerator.generateSpanId();
    const spanIdPool = pooled?.lastPool;
    const spanIdAt = pooled?.lastAt ?? 0;
    const traceId = child ? parentContext.traceId : parts.idGenerator.generateTraceId();
    const localChild = ours ? this.#localChild : undefined;
    const sampled =
      localChild !== undefined ? localChild(parentContext!.traceFlags) : parts.sampler.shouldSample(parent, traceId, name, kind, attributes, NO_LINKS);
    const traceFlags = sampled.decision === SamplingDecision.RECORD_AND_SAMPLED ? TraceFlags.SAMPLED : TraceFlags.NONE;
    const traceState = sampled.traceState ?? (child ? parentContext.traceState : undefined);
    const spanContext: SpanContext = { traceId, spanId, traceFlags, traceState };
    if (sampled.decision === SamplingDecision.NOT_RECORD) return trace.wrapSpanContext(spanContext);
    if (sampled.attributes !== undefined) Object.assign(attributes, sampled.attributes);
    const span = new ServiceSpan(parts, spanContext, child ? parentContext : undefined, name, kind, attributes, startMs ?? nowMs(), parent);
    if (pooled !== undefined) {
      span.spanIdPool = spanIdPool;
      span.spanIdAt = spanIdAt;
      if (!child) {
        span.traceIdPool = pooled.lastPool;
        span.traceIdAt = pooled.lastAt;
      } else if (ours) {
        // A child of our own span: the same trace id, and the parent's span id, both already in a pool.
        const of = parentSpan as ServiceSpan;
        span.traceIdPool = of.traceIdPool;
        span.traceIdAt = of.traceIdAt;
        span.parentIdPool = of.spanIdPool;
        span.parentIdAt = of.spanIdAt;
      }
    }
    return span;
  }
}

/** Epoch milliseconds with sub-millisecond precision. */
export function nowMs(): number {
  return TIME_ORIGIN + performance.now();
}

/** A `performance.now()` reading as epoch milliseconds (what nowMs() would have said then). */
export function epochMs(performanceNow: number): number {
  return TIME_ORIGIN + performanceNow;
}

/**
 * Read once: it does not change in a process, and Node 20's getter (a brand check and a call) cost
 * more than the clock read beside it, four times per traced call (0.8% of a traced server's time).
 */
const TIME_ORIGIN = performance.timeOrigin;

/** A span of the service's own: see the top of this file. */
export class ServiceSpan implements Span, ReadableSpan {
  name: string;
  readonly kind: SpanKind;
  readonly parentSpanContext: SpanContext | undefined;
  readonly attributes: Attributes;
  /** Shared empty arrays until something is added (most spans get none). */
  links: Link[] = NONE;
  events: TimedEvent[] = NONE;
  status: SpanStatus = UNSET;
  /** Epoch ms; what the OTLP writer reads (startTime and endTime are made from them when asked). */
  readonly startMs: number;
  endMs = 0;
  ended = false;
  droppedAttributesCount = 0;
  droppedEventsCount = 0;
  droppedLinksCount = 0;
  /**
   * @internal Where the bytes of this span's ids are (PooledIdGenerator's pools), so the OTLP writer
   * copies them instead of parsing hex: a pool and an offset per id, undefined when not known
   * (another id generator, a remote parent).
   */
  spanIdPool: Buffer | undefined = undefined;
  spanIdAt = 0;
  traceIdPool: Buffer | undefined = undefined;
  traceIdAt = 0;
  parentIdPool: Buffer | undefined = undefined;
  parentIdAt = 0;
  readonly #context: SpanContext;
  readonly #parts: SdkTracerParts;
  #attributeCount: number;
  /** The span limits on attributes, read once: a count (Infinity: none) and a value length (0: none). */
  readonly #countLimit: number;
  readonly #lengthLimit: number;

  constructor(
    parts: SdkTracerParts,
    context: SpanContext,
    parentSpanContext: SpanContext | undefined,
    name: string,
    kind: SpanKind,
    attributes: Attributes,
    startMs: number,
    parent: Context,
  ) {
    this.#parts = parts;
    this.#context = context;
    this.parentSpanContext = parentSpanContext;
    this.name = name;
    this.kind = kind;
    this.startMs = startMs;
    const { attributeCountLimit, attributeValueLengthLimit } = parts.spanLimits;
    this.#countLimit = attributeCountLimit ?? Number.POSITIVE_INFINITY;
    this.#lengthLimit =
      attributeValueLengthLimit !== undefined && Number.isFinite(attributeValueLengthLimit) && attributeValueLengthLimit > 0 ? attributeValueLengthLimit : 0;
    let count = 0;
    let valid = true;
    for (const key in attributes) {
      count++;
      if (attributes[key] == null || !isAttributeValue(attributes[key])) valid = false;
    }
    const truncates = attributeValueLengthLimit !== undefined && Number.isFinite(attributeValueLengthLimit);
    if (valid && !truncates && (attributeCountLimit === undefined || count <= attributeCountLimit)) {
      // Taken as it is (the caller's fresh object, see startSpan): tracing.ts grows its objects from
      // {}, to which keys added later cost far less than to an object literal or a spread (V8's
      // hidden classes); copying each one here was a visible part of a span's start.
      this.attributes = attributes;
      this.#attributeCount = count;
    } else {
      // Limits apply (or a value is not an attribute value): set one by one, as the SDK does.
      this.attributes = {};
      this.#attributeCount = 0;
      for (const key in attributes) this.setAttribute(key, attributes[key]!);
    }
    parts.spanProcessor.onStart(this, parent);
  }

  /** @internal Whether this span was started with these parts (by that ServiceTracer). */
  startedWith(parts: SdkTracerParts): boolean {
    return this.#parts === parts;
  }

  get resource(): ReadableSpan["resource"] {
    return this.#parts.resource;
  }

  get instrumentationScope(): ReadableSpan["instrumentationScope"] {
    return this.#parts.instrumentationScope;
  }

  get startTime(): HrTime {
    return millisToHrTime(this.startMs);
  }

  get endTime(): HrTime {
    return this.ended ? millisToHrTime(this.endMs) : [0, 0];
  }

  get duration(): HrTime {
    return this.ended ? hrTimeDuration(this.startTime, this.endTime) : [-1, -1];
  }

  spanContext(): SpanContext {
    return this.#context;
  }

  isRecording(): boolean {
    return !this.ended;
  }

  setAttribute(key: string, value: AttributeValue): this {
    if (value == null || this.#endedWarn()) return this;
    if (key.length === 0) {
      diag.warn(`Invalid attribute key: ${key}`);
      return this;
    }
    if (!isAttributeValue(value)) {
      diag.warn(`Invalid attribute value set for key: ${key}`);
      return this;
    }
    const isNew = !Object.hasOwn(this.attributes, key);
    if (isNew && this.#attributeCount >= this.#countLimit) {
      this.droppedAttributesCount++;
      return this;
    }
    this.attributes[key] = this.#lengthLimit === 0 ? value : truncated(value, this.#lengthLimit);
    if (isNew) this.#attributeCount++;
    return this;
  }

  setAttributes(attributes: Attributes): this {
    for (const key in attributes) if (Object.hasOwn(attributes, key)) this.setAttribute(key, attributes[key]!);
    return this;
  }

  addEvent(name: string, attributesOrStartTime?: Attributes | TimeInput, startTime?: TimeInput): this {
    if (this.#endedWarn()) return this;
    const { eventCountLimit, attributePerEventCountLimit } = this.#parts.spanLimits;
    if (eventCountLimit === 0) {
      this.droppedEventsCount++;
      return this;
    }
    if (eventCountLimit !== undefined && this.events.length >= eventCountLimit) {
      this.events.shift();
      this.droppedEventsCount++;
    }
    let time = startTime;
    let given: Attributes | undefined;
    if (isTimeInput(attributesOrStartTime)) {
      if (!isTimeInput(time)) time = attributesOrStartTime;
    } else given = attributesOrStartTime;
    const { attributes, dropped } = this.#limited(given, attributePerEventCountLimit);
    if (this.events === NONE) this.events = [];
    this.events.push({ name, attributes, time: time === undefined ? millisToHrTime(nowMs()) : timeInputToHrTime(time), droppedAttributesCount: dropped });
    return this;
  }

  addLink(link: Link): this {
    if (this.#endedWarn()) return this;
    const { linkCountLimit, attributePerLinkCountLimit } = this.#parts.spanLimits;
    if (linkCountLimit === 0) {
      this.droppedLinksCount++;
      return this;
    }
    if (linkCountLimit !== undefined && this.links.length >= linkCountLimit) {
      this.links.shift();
      this.droppedLinksCount++;
    }
    const { attributes, dropped, count } = this.#limited(link.attributes, attributePerLinkCountLimit);
    const kept: Link = { context: link.context };
    if (count > 0) kept.attributes = attributes;
    if (dropped > 0) kept.droppedAttributesCount = dropped;
    if (this.links === NONE) this.links = [];
    this.links.push(kept);
    return this;
  }

  addLinks(links: Link[]): this {
    for (const link of links) this.addLink(link);
    return this;
  }

  setStatus(status: SpanStatus): this {
    if (this.#endedWarn() || status.code === SpanStatusCode.UNSET || this.status.code === SpanStatusCode.OK) return this;
    const next: SpanStatus = { code: status.code };
    if (status.code === SpanStatusCode.ERROR && typeof status.message === "string") next.message = status.message;
    this.status = next;
    return this;
  }

  updateName(name: string): this {
    if (!this.#endedWarn()) this.name = name;
    return this;
  }

  /** `endTime`: as the API takes it; our own callers pass epoch ms. */
  end(endTime?: TimeInput): void {
    if (this.ended) {
      diag.error(`${this.name} ${this.#context.traceId}-${this.#context.spanId} - You can only call end() on a span once.`);
      return;
    }
    let end = endTime === undefined ? nowMs() : typeof endTime === "number" ? endTime : hrTimeToMilliseconds(timeInputToHrTime(endTime));
    if (end < this.startMs) {
      diag.warn("Inconsistent start and end time, startTime > endTime. Setting span duration to 0ms.");
      end = this.startMs;
    }
    this.endMs = end;
    const processor = this.#parts.spanProcessor;
    processor.onEnding?.(this);
    this.ended = true;
    processor.onEnd(this);
  }

  recordException(exception: Exception, time?: TimeInput): void {
    const attributes: Attributes = {};
    if (typeof exception === "string") attributes["exception.message"] = exception;
    else if (exception) {
      if (exception.code) attributes["exception.type"] = exception.code.toString();
      else if (exception.name) attributes["exception.type"] = exception.name;
      if (exception.message) attributes["exception.message"] = exception.message;
      if (exception.stack) attributes["exception.stacktrace"] = exception.stack;
    }
    if (attributes["exception.type"] || attributes["exception.message"]) this.addEvent("exception", attributes, time);
    else diag.warn(`Failed to record an exception ${exception}`);
  }

  #endedWarn(): boolean {
    if (this.ended) diag.warn(`Cannot execute the operation on ended Span {traceId: ${this.#context.traceId}, spanId: ${this.#context.spanId}}`);
    return this.ended;
  }

  /** An event's or link's attributes, sanitised and limited as the SDK does. */
  #limited(given: Attributes | undefined, limit: number | undefined): { attributes: Attributes; dropped: number; count: number } {
    const attributes: Attributes = {};
    let dropped = 0;
    let count = 0;
    const sanitized = sanitizeAttributes(given);
    for (const key in sanitized) {
      if (limit !== undefined && count >= limit) {
        dropped++;
        continue;
      }
      attributes[key] = this.#lengthLimit === 0 ? sanitized[key]! : truncated(sanitized[key]!, this.#lengthLimit);
      count++;
    }
    return { attributes, dropped, count };
  }
}

/** `value` with its strings cut to `limit` characters (the SDK's attributeValueLengthLimit rule). */
function truncated(value: AttributeValue, limit: number): AttributeValue {
  if (typeof value === "string") return value.length <= limit ? value : value.substring(0, limit);
  if (Array.isArray(value)) return value.map((v) => (typeof v === "string" && v.length > limit ? v.substring(0, limit) : v)) as AttributeValue;
  return value;
}

/** The key the API keeps the current span under (trace.getSpan / trace.setSpan): createContextKey is Symbol.for. */
const SPAN_KEY = createContextKey("OpenTelemetry Context Key SPAN");

/**
 * `parent` with `span` as its span, as trace.setSpan makes it, but as a link to `parent` rather
 * than a copy of its map of values: two are made per call. Anything else asked of it (another
 * value set or deleted) is answered by the API's own context.
 */
export function withSpan(parent: Context, span: Span): Context {
  return new SpanLink(parent, span);
}

class SpanLink implements Context {
  readonly #parent: Context;
  readonly #span: Span;

  constructor(parent: Context, span: Span) {
    this.#parent = parent;
    this.#span = span;
  }

  getValue(key: symbol): unknown {
    return key === SPAN_KEY ? this.#span : this.#parent.getValue(key);
  }

  setValue(key: symbol, value: unknown): Context {
    if (key === SPAN_KEY) return new SpanLink(this.#parent, value as Span);
    return this.#parent.setValue(SPAN_KEY, this.#span).setValue(key, value);
  }

  deleteValue(key: symbol): Context {
    if (key === SPAN_KEY) return this.#parent.deleteValue(key);
    return this.#parent.setValue(SPAN_KEY, this.#span).deleteValue(key);
  }
}
