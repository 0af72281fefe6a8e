import type { CallObserver } from "../service/call-observer.js";
import { ServiceMetrics, type ServiceMetricsOptions } from "./metrics.js";
import { Tracing, tracingRequested, type TracingOptions } from "./tracing.js";

/**
 * Metrics and tracing as one piece: made before the gRPC server (they observe its calls through
 * `observers`), then handed to the app, which serves /metrics and names the agent for the run
 * spans, and closes them last. A capability switched off is undefined and adds no observer.
 */
export interface Telemetry {
  readonly metrics: ServiceMetrics | undefined;
  readonly tracing: Tracing | undefined;
  /** For startServer's `observers`: tracing first (its span is current around the handler), then metrics. */
  readonly observers: ReadonlyArray<CallObserver<any>>;
  /** Stops listening; flushes the spans still queued. */
  close(): Promise<void>;
}

export interface TelemetryOptions {
  /** Collect metrics (there is somewhere to serve them). */
  readonly metrics: boolean;
  readonly metricsSources?: ServiceMetricsOptions;
  /** The OTEL_* variables; tracing runs when they ask for it (see tracingRequested). */
  readonly env: NodeJS.ProcessEnv;
  /** Tests: span processors (an in-memory exporter); turns tracing on whatever `env` says. */
  readonly spanProcessors?: TracingOptions["spanProcessors"];
}

export async function createTelemetry(options: TelemetryOptions): Promise<Telemetry> {
  const metrics = options.metrics ? new ServiceMetrics(options.metricsSources) : undefined;
  const tracing =
    options.spanProcessors !== undefined || tracingRequested(options.env)
      ? await Tracing.start({ env: options.env, spanProcessors: options.spanProcessors })
      : undefined;
  const observers: Array<CallObserver<any>> = [];
  if (tracing !== undefined) observers.push(tracing.observer);
  if (metrics !== undefined) observers.push(metrics.observer);
  return {
    metrics,
    tracing,
    observers,
    async close() {
      metrics?.close();
      await tracing?.shutdown();
    },
  };
}
