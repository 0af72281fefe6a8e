/**
 * Observability: what the service tells operators.
 *
 * - Logs: `createLogger` (pino, one line per RPC, credentials redacted).
 * - Telemetry: `createTelemetry` makes metrics and tracing as one piece, before the gRPC server,
 *   whose calls they observe (`observers`), and closes them.
 * - Metrics: `ServiceMetrics` (prom-client registry fed by the core's diagnostics channels and by
 *   the call seam at the edge), served at `METRICS_PATH` on the card listener or on a listener of
 *   its own (`startMetricsServer`). The catalogue of every metric is `metrics-catalogue.ts`.
 * - Tracing: `Tracing` (OpenTelemetry, configured by OTEL_*, off by default): a server span per A2A
 *   RPC, an invoke_agent span per agent run, spans for store commits and push deliveries;
 *   `currentTraceContext` for the trace context a push outbox entry keeps of its write (the
 *   webhook request's traceparent). OTLP/HTTP protobuf goes through the SDK's BatchSpanProcessor
 *   and OTLP http/protobuf exporter; other exporters are the SDK's (tracing-sdk.ts).
 */
export { createLogger, REDACTED_PATHS, type Logger, type LoggerOptions } from "./logger.js";
export { ServiceMetrics, type ServiceMetricsOptions } from "./metrics.js";
export { METRICS_PATH, metricsDocument, startMetricsServer, type MetricsServer } from "./metrics-endpoint.js";
export { createMetrics, type A2AMetrics } from "./metrics-catalogue.js";
export { currentTraceContext, injectTraceHeaders, Tracing, tracingRequested, type TracingOptions } from "./tracing.js";
export { createTelemetry, type Telemetry, type TelemetryOptions } from "./telemetry.js";
