import { context, isSpanContextValid, propagation, trace } from "@opentelemetry/api";

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
