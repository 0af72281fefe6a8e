import type { Registry } from "prom-client";
import { startHttpThread, type DocumentSource, type HttpThread } from "../protocol/http-thread.js";

export const METRICS_PATH = "/metrics";

/** The registry in the Prometheus text format, made on the main thread for each GET or HEAD /metrics. */
export function metricsDocument(registry: Registry): DocumentSource {
  return async () => ({ status: 200, contentType: registry.contentType, body: await registry.metrics(), headers: { "Cache-Control": "no-store" } });
}

export type MetricsServer = HttpThread;

/** A listener of its own for /metrics (A2A_METRICS_LISTEN set to an address): e.g. on a private interface. */
export function startMetricsServer(options: { host: string; port: number; registry: Registry; onError?: (error: Error) => void }): Promise<MetricsServer> {
  return startHttpThread({
    host: options.host,
    port: options.port,
    documents: new Map([[METRICS_PATH, metricsDocument(options.registry)]]),
    notFound: `not found; the metrics are at ${METRICS_PATH}\n`,
    onError: options.onError,
  });
}
