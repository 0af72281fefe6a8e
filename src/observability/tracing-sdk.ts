import { context, diag, propagation, trace } from "@opentelemetry/api";
import type { NodeSDKConfiguration } from "@opentelemetry/sdk-node";
import type { Sampler } from "@opentelemetry/sdk-trace-base";
import type { AsyncContextManager } from "./async-context.js";

/** The tracer's name (instrumentation scope) and the service name used when OTEL_SERVICE_NAME is unset. */
export const TRACER_NAME = "a2a-grpc-server";

/**
 * Tracing is off unless asked for: OTEL_TRACES_EXPORTER names an exporter (otlp, console; "none"
 * keeps it off), and OTEL_SDK_DISABLED is not true. (The OpenTelemetry default for an unset
 * OTEL_TRACES_EXPORTER is otlp; a server that sends spans nowhere unless told is the safer default.)
 */
export function tracingRequested(env: NodeJS.ProcessEnv): boolean {
  return exportersOf(env).length > 0 && (env.OTEL_SDK_DISABLED ?? "").trim().toLowerCase() !== "true";
}

export interface TracingOptions {
  readonly env: NodeJS.ProcessEnv;
  /** Instead of the exporters OTEL_TRACES_EXPORTER picks (tests: an in-memory exporter); turns tracing on. */
  readonly spanProcessors?: NodeSDKConfiguration["spanProcessors"];
}

/**
 * Starts the OpenTelemetry Node SDK, configured by the standard OTEL_* variables, and registers it
 * as OpenTelemetry's global tracer provider, propagator and context manager (`contextManager`).
 * Returns what stops it: the spans still queued are exported, the globals released.
 *
 * - Spans: for OTEL_TRACES_EXPORTER=otlp over http/protobuf (the default protocol) the SDK's
 *   BatchSpanProcessor feeding its OTLP http/protobuf exporter, which read OTEL_BSP_* and
 *   OTEL_EXPORTER_OTLP_* (endpoint, headers, timeout, compression) themselves; any other exporter
 *   or protocol (grpc, http/json, console, zipkin, several) as the SDK sets it up from the same
 *   variables.
 * - Sampling: OTEL_TRACES_SAMPLER when set; otherwise parent-based, with a root sampled by trace id
 *   at the ratio OTEL_TRACES_SAMPLER_ARG gives (default 1: every root).
 * The SDK packages are imported here, on demand: a server without tracing never loads them.
 */
export async function startTracingSdk(options: TracingOptions, contextManager: AsyncContextManager): Promise<() => Promise<void>> {
  const [{ NodeSDK }, spanProcessors, sampler] = await Promise.all([
    import("@opentelemetry/sdk-node"),
    options.spanProcessors ?? otlpProtobufProcessors(options.env),
    // From the process environment, where the SDK reads OTEL_TRACES_SAMPLER itself.
    defaultSampler(process.env),
  ]);
  const sdk = new NodeSDK({
    serviceName: options.env.OTEL_SERVICE_NAME === undefined ? TRACER_NAME : undefined,
    contextManager,
    instrumentations: [],
    // Metrics go to Prometheus (/metrics) and logs to pino: the SDK exports spans only.
    metricReaders: [],
    logRecordProcessors: [],
    ...(sampler !== undefined ? { sampler } : {}),
    ...(spanProcessors !== undefined ? { spanProcessors } : {}),
  });
  sdk.start();
  return async () => {
    await sdk.shutdown(); // flushes the spans still queued
    trace.disable();
    propagation.disable();
    context.disable();
  };
}

/** The BatchSpanProcessor and the OTLP http/protobuf exporter, when OTEL_TRACES_EXPORTER=otlp alone asks for that protocol; else undefined (the SDK's choice). */
async function otlpProtobufProcessors(env: NodeJS.ProcessEnv): Promise<NodeSDKConfiguration["spanProcessors"] | undefined> {
  const exporters = exportersOf(env);
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? "http/protobuf").trim().toLowerCase();
  if (exporters.length !== 1 || exporters[0] !== "otlp" || protocol !== "http/protobuf") return undefined;
  const [{ BatchSpanProcessor }, { OTLPTraceExporter }] = await Promise.all([
    import("@opentelemetry/sdk-trace-base"),
    import("@opentelemetry/exporter-trace-otlp-proto"),
  ]);
  return [new BatchSpanProcessor(new OTLPTraceExporter())];
}

/**
 * The sampler when OTEL_TRACES_SAMPLER is unset: ParentBasedSampler around a
 * TraceIdRatioBasedSampler at OTEL_TRACES_SAMPLER_ARG (a number from 0 to 1; default 1, also for
 * a value that is not one, as the SDK does). A client's sampled traceparent is followed whatever
 * the ratio. Undefined when OTEL_TRACES_SAMPLER names a sampler: the SDK builds that one.
 */
export async function defaultSampler(env: NodeJS.ProcessEnv): Promise<Sampler | undefined> {
  if ((env.OTEL_TRACES_SAMPLER ?? "").trim() !== "") return undefined;
  const { ParentBasedSampler, TraceIdRatioBasedSampler } = await import("@opentelemetry/sdk-trace-base");
  return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(samplingRatio(env.OTEL_TRACES_SAMPLER_ARG)) });
}

function samplingRatio(arg: string | undefined): number {
  if (arg === undefined || arg.trim() === "") return 1;
  const ratio = Number(arg);
  if (Number.isFinite(ratio) && ratio >= 0 && ratio <= 1) return ratio;
  diag.warn(`OTEL_TRACES_SAMPLER_ARG is not a ratio from 0 to 1; sampling every trace`);
  return 1;
}

function exportersOf(env: NodeJS.ProcessEnv): string[] {
  return (env.OTEL_TRACES_EXPORTER ?? "")
    .split(",")
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== "" && s !== "none");
}
