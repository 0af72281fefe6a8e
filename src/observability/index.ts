/**
 * Observability: what the service tells operators.
 *
 * - Logs: `createLogger` (pino, one line per RPC, credentials redacted).
 * - Metrics: `ServiceMetrics` (prom-client registry fed by the core's diagnostics channels and by
 *   the call seam at the edge), served at `METRICS_PATH` on the card listener or on a listener of
 *   its own (`startMetricsServer`). The catalogue of every metric is `metrics-catalogue.ts`.
 */
export { createLogger, REDACTED_PATHS, type Logger, type LoggerOptions } from "./logger.js";
export { ServiceMetrics, type ServiceMetricsOptions } from "./metrics.js";
export { METRICS_PATH, metricsRoute, startMetricsServer, type MetricsServer } from "./metrics-endpoint.js";
export { createMetrics, type A2AMetrics } from "./metrics-catalogue.js";
