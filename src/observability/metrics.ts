import { subscribeCoreMetrics } from "./core-metrics.js";
import { A2A_V03_SERVICE, a2aVersionOf, type CallObserver } from "../service/call-observer.js";
import type { HistogramSeries } from "./hot-path-histogram.js";
import { createMetrics, type A2AMetrics } from "./metrics-catalogue.js";
import { metricsDocument } from "./metrics-endpoint.js";
import type { DocumentSource } from "../protocol/http-thread.js";

export interface ServiceMetricsOptions {
  /** Streams open now, from the stream edge; by default the streaming calls in progress. */
  readonly openStreams?: () => number;
  /** Push delivery backlog, from the push service, when it runs. */
  readonly pushStats?: () => { readonly pending: number; readonly oldestPendingAgeMs: number };
}

/** One RPC method's calls: in progress now, and the duration series of each status code (made on first use). */
interface MethodCalls {
  readonly service: string;
  readonly method: string;
  /** The binding that carried the calls ("grpc", "jsonrpc"): the rpc_system label. */
  readonly binding: string;
  /** The A2A generation of the service ("1.0", "0.3"): the a2a_version label. */
  readonly version: string;
  active: number;
  readonly byCode: Array<HistogramSeries | undefined>;
}

/** The A2A services, v1.0 and v0.3, whose streaming calls are streams. */
const A2A_SERVICES = ["lf.a2a.v1.A2AService", A2A_V03_SERVICE];

/** The streaming RPCs: their calls in progress are the open streams. */
const STREAMING_METHODS = ["SendStreamingMessage", "SubscribeToTask"];

/**
 * The service's Prometheus metrics: the registry, what feeds it from the diagnostics channels,
 * and the recording of RPCs for the call seam at the edge.
 */
export class ServiceMetrics {
  readonly metrics: A2AMetrics;
  /** The /metrics document, for whichever HTTP listener serves it. */
  readonly document: DocumentSource;
  readonly #unsubscribe: () => void;
  /** Per service, per method: found once per call (two Map reads), then handed back to `ended` as the call's state. */
  readonly #calls = new Map<string, Map<string, MethodCalls>>();
  /** Set once the push service runs (it is made after the telemetry). */
  #pushStats: ServiceMetricsOptions["pushStats"];

  constructor(options: ServiceMetricsOptions = {}) {
    const openStreams =
      options.openStreams ??
      (() => {
        let open = 0;
        for (const service of A2A_SERVICES)
          for (const calls of this.#calls.get(service)?.values() ?? []) if (STREAMING_METHODS.includes(calls.method)) open += calls.active;
        return open;
      });
    this.metrics = createMetrics({
      activeCalls: () => this.#activeByMethod(),
      openStreams,
      pushStats: () => this.#pushStats?.(),
    });
    this.#pushStats = options.pushStats;
    this.document = metricsDocument(this.metrics.registry);
    this.#unsubscribe = subscribeCoreMetrics(this.metrics);
  }

  /** Feeds the push backlog gauges from the push service once it runs. */
  usePushStats(stats: NonNullable<ServiceMetricsOptions["pushStats"]>): void {
    this.#pushStats = stats;
  }

  /** The call seam's observer: counts calls in progress, and each call's duration by method and status. */
  readonly observer: CallObserver<MethodCalls> = {
    started: (call) => {
      const calls = this.#methodCalls(call.service, call.method, call.binding);
      calls.active++;
      return calls;
    },
    ended: (call, calls) => {
      calls.active--;
      const code = call.code;
      const series =
        calls.byCode[code] ??
        (calls.byCode[code] = this.metrics.callDuration.series({
          rpc_system: calls.binding,
          rpc_service: calls.service,
          rpc_method: calls.method,
          rpc_grpc_status_code: String(code),
          a2a_version: calls.version,
        }));
      series.observe(call.durationMs / 1000);
    },
  };

  #methodCalls(service: string, method: string, binding: string): MethodCalls {
    let methods = this.#calls.get(service);
    if (methods === undefined) this.#calls.set(service, (methods = new Map()));
    // gRPC's calls keyed by the method alone (the hot path: no string built per call).
    const key = binding === "grpc" ? method : `${binding}:${method}`;
    let calls = methods.get(key);
    if (calls === undefined) methods.set(key, (calls = { service, method, binding, version: a2aVersionOf(service), active: 0, byCode: [] }));
    return calls;
  }

  #activeByMethod(): Map<string, number> {
    const active = new Map<string, number>();
    for (const methods of this.#calls.values()) for (const calls of methods.values()) active.set(calls.method, (active.get(calls.method) ?? 0) + calls.active);
    return active;
  }

  /** Stops listening to the diagnostics channels (the registry stays readable). */
  close(): void {
    this.#unsubscribe();
  }
}
