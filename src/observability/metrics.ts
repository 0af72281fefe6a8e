import { subscribeCoreMetrics } from "./core-metrics.js";
import type { CallObserver } from "../protocol/call-observer.js";
import { createMetrics, type A2AMetrics } from "./metrics-catalogue.js";
import { metricsRoute } from "./metrics-endpoint.js";

export interface ServiceMetricsOptions {
  /** Streams open now, from the stream edge; by default the streaming calls in progress. */
  readonly openStreams?: () => number;
  /** Push delivery backlog, from the push service, when it runs. */
  readonly pushStats?: () => { readonly pending: number; readonly oldestPendingAgeMs: number };
}

/** The streaming RPCs: their calls in progress are the open streams. */
const STREAMING_METHODS = ["SendStreamingMessage", "SubscribeToTask"];

/**
 * The service's Prometheus metrics: the registry, what feeds it from the diagnostics channels,
 * and the recording of RPCs for the call seam at the edge.
 */
export class ServiceMetrics {
  readonly metrics: A2AMetrics;
  /** The /metrics handler, for whichever HTTP listener serves it. */
  readonly route: ReturnType<typeof metricsRoute>;
  readonly #unsubscribe: () => void;
  /** Calls in progress by method: plain numbers, read by the gauges at scrape time. */
  readonly #active = new Map<string, number>();

  constructor(options: ServiceMetricsOptions = {}) {
    const openStreams = options.openStreams ?? (() => STREAMING_METHODS.reduce((sum, method) => sum + (this.#active.get(method) ?? 0), 0));
    this.metrics = createMetrics({ activeCalls: () => this.#active, openStreams, pushStats: () => options.pushStats?.() });
    this.route = metricsRoute(this.metrics.registry);
    this.#unsubscribe = subscribeCoreMetrics(this.metrics);
  }

  /** The call seam's observer: counts calls in progress, and each call's duration by method and status. */
  readonly observer: CallObserver<undefined> = {
    started: (call) => {
      this.#active.set(call.method, (this.#active.get(call.method) ?? 0) + 1);
      return undefined;
    },
    ended: (call) => {
      this.#active.set(call.method, (this.#active.get(call.method) ?? 1) - 1);
      this.metrics.callDuration.observe({ rpc_service: call.service, rpc_method: call.method, rpc_grpc_status_code: String(call.code) }, call.durationMs / 1000);
    },
  };

  /** Stops listening to the diagnostics channels (the registry stays readable). */
  close(): void {
    this.#unsubscribe();
  }
}
