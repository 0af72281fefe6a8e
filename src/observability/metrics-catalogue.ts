import { Counter, Gauge, Registry, collectDefaultMetrics } from "prom-client";
import { TaskState } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { HotPathHistogram } from "./hot-path-histogram.js";

/**
 * Every metric the service exports, in one place: names, help texts, labels and buckets. The
 * README's metric table, the Grafana dashboard and the alert rules are checked against it.
 *
 * Names follow OpenTelemetry's semantic conventions where they have one, mapped to Prometheus
 * as OpenTelemetry's exporters map them (dots to underscores, the unit as a suffix):
 * `rpc.server.call.duration` (s) with `rpc.method` and `rpc.grpc.status_code` becomes
 * `rpc_server_call_duration_seconds{rpc_method, rpc_grpc_status_code}`. The service's own
 * metrics start with `a2a_`. Every label takes a bounded set of values (no task or context ids).
 *
 * What changes on every call is kept in plain numbers (`Tallies`, and HotPathHistogram's series)
 * and handed to prom-client when it is scraped (each metric's collect()): prom-client's own inc()
 * and observe() hash their labels per call (see hot-path-histogram.ts).
 */

/** RPC durations: from sub-millisecond unary calls to streams that stay open for minutes. */
const CALL_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
const RUN_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 1800];
const COMMIT_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];
/** Writes per group commit; a batch is cut at 1,000 writes (src/storage/sqlite). */
const BATCH_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000];
const PUSH_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * The resolution of prom-client's event-loop lag sampler (`collectDefaultMetrics`' own
 * `monitorEventLoopDelay`), ms: a blocked loop is seen to within this, well inside the 200 ms
 * alert; each tick wakes an idle process, 20 times a second (prom-client's default of 10 ms
 * would be 100).
 */
export const EVENT_LOOP_SAMPLE_MS = 50;

/** Label values known in advance, so each series exists (at zero) from the first scrape. */
const SETTLED_STATE_NUMBERS: ReadonlyArray<readonly [string, TaskState]> = [
  ["completed", TaskState.COMPLETED],
  ["failed", TaskState.FAILED],
  ["canceled", TaskState.CANCELED],
  ["rejected", TaskState.REJECTED],
  ["input_required", TaskState.INPUT_REQUIRED],
  ["auth_required", TaskState.AUTH_REQUIRED],
];
export const PUSH_OUTCOMES = ["delivered", "retrying", "gave-up", "removed", "refused"] as const;
export const STREAM_END_REASONS = ["budget", "client-gone", "done"] as const;

/** Counts bumped on the hot path, read at scrape time. */
export class Tallies {
  tasksCreated = 0;
  /** Settlements by TaskState number. */
  readonly tasksSettled = new Float64Array(16);
  runsStarted = 0;
  runsEnded = 0;
  streamEventsWritten = 0;
  streamEventsMerged = 0;
  /** Push delivery attempts by outcome. */
  readonly pushDeliveries = new Map<string, number>();
}

export interface A2AMetrics {
  readonly registry: Registry;
  readonly tallies: Tallies;
  readonly callDuration: HotPathHistogram<"rpc_system" | "rpc_service" | "rpc_method" | "rpc_grpc_status_code" | "a2a_version">;
  readonly activeCalls: Gauge<"rpc_method">;
  readonly tasksCreated: Counter;
  readonly tasksSettled: Counter<"state">;
  readonly runsActive: Gauge;
  readonly runDuration: HotPathHistogram<"outcome">;
  readonly streamsOpen: Gauge;
  readonly streamEventsWritten: Counter;
  readonly streamEventsMerged: Counter;
  readonly streamsEnded: Counter<"reason">;
  readonly pushDeliveries: Counter<"outcome">;
  readonly pushDeliveryDuration: HotPathHistogram;
  readonly pushPending: Gauge;
  readonly pushOldestPendingAge: Gauge;
  readonly storeCommitDuration: HotPathHistogram<"store">;
  readonly storeCommitWrites: HotPathHistogram<"store">;
  readonly storeCommitsFailed: Counter<"store">;
  readonly authKeyReloadFailures: Counter;
}

/** Reads for the gauges that are sampled at scrape time rather than kept up to date. */
export interface GaugeSources {
  /** RPCs in progress, by method. */
  activeCalls(): ReadonlyMap<string, number>;
  /** Streams open now. */
  openStreams(): number;
  /** Push deliveries waiting, and the age of the oldest (0 when none); undefined while push is off. */
  pushStats(): { readonly pending: number; readonly oldestPendingAgeMs: number } | undefined;
}

/** A fresh registry with prom-client's default process metrics (event-loop lag among them) and the service's own. */
export function createMetrics(sources: GaugeSources): A2AMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  const registers = [registry];
  const tallies = new Tallies();
  const metrics: A2AMetrics = {
    registry,
    tallies,
    callDuration: new HotPathHistogram({
      name: "rpc_server_call_duration_seconds",
      help: "Duration of RPCs as the server sees them, from the call's arrival to its status (streams: until they end); _count is the number of calls",
      // rpc_system: the binding that carried the call, "grpc" or "jsonrpc" (OpenTelemetry's rpc.system).
      // a2a_version: the A2A generation the call spoke, "1.0" or "0.3" (from its service, a2aVersionOf).
      labelNames: ["rpc_system", "rpc_service", "rpc_method", "rpc_grpc_status_code", "a2a_version"],
      buckets: CALL_BUCKETS,
      registry,
    }),
    activeCalls: new Gauge({
      name: "rpc_server_active_calls",
      help: "A2A RPCs in progress",
      labelNames: ["rpc_method"],
      registers,
      collect() {
        for (const [method, count] of sources.activeCalls()) this.set({ rpc_method: method }, count);
      },
    }),
    tasksCreated: new Counter({
      name: "a2a_tasks_created_total",
      help: "Tasks created (counted once durable)",
      registers,
      collect() {
        this.reset();
        this.inc(tallies.tasksCreated);
      },
    }),
    tasksSettled: new Counter({
      name: "a2a_tasks_settled_total",
      help: "Times a task became terminal or interrupted, by the state it reached (a continued task settles again)",
      labelNames: ["state"],
      registers,
      collect() {
        this.reset();
        for (const [state, number] of SETTLED_STATE_NUMBERS) this.inc({ state }, tallies.tasksSettled[number]!);
      },
    }),
    runsActive: new Gauge({
      name: "a2a_agent_runs_active",
      help: "Agent runs in progress",
      registers,
      collect() {
        this.set(tallies.runsStarted - tallies.runsEnded);
      },
    }),
    runDuration: new HotPathHistogram({
      name: "a2a_agent_run_duration_seconds",
      help: "How long the agent took per run; outcome error = the agent threw",
      labelNames: ["outcome"],
      buckets: RUN_BUCKETS,
      registry,
    }),
    streamsOpen: new Gauge({
      name: "a2a_streams_open",
      help: "SendStreamingMessage and SubscribeToTask streams open now",
      registers,
      collect() {
        this.set(sources.openStreams());
      },
    }),
    streamEventsWritten: new Counter({
      name: "a2a_stream_events_written_total",
      help: "Stream responses written to clients (SendStreamingMessage, SubscribeToTask), merged ones included",
      registers,
      collect() {
        this.reset();
        this.inc(tallies.streamEventsWritten);
      },
    }),
    streamEventsMerged: new Counter({
      name: "a2a_stream_events_merged_total",
      help: "Stream responses that stood for several task events, merged while their client was behind",
      registers,
      collect() {
        this.reset();
        this.inc(tallies.streamEventsMerged);
      },
    }),
    streamsEnded: new Counter({
      name: "a2a_streams_ended_total",
      help: "Streams ended, by reason: done (the task settled), client-gone, budget (the client's backlog passed a budget: RESOURCE_EXHAUSTED)",
      labelNames: ["reason"],
      registers,
    }),
    pushDeliveries: new Counter({
      name: "a2a_push_deliveries_total",
      help: "Push notification delivery attempts, by outcome (delivered, retrying, gave-up, removed, refused)",
      labelNames: ["outcome"],
      registers,
      collect() {
        this.reset();
        for (const outcome of PUSH_OUTCOMES) this.inc({ outcome }, tallies.pushDeliveries.get(outcome) ?? 0);
        // An outcome the catalogue does not list yet is still counted, not dropped.
        for (const [outcome, count] of tallies.pushDeliveries) if (!(PUSH_OUTCOMES as readonly string[]).includes(outcome)) this.inc({ outcome }, count);
      },
    }),
    pushDeliveryDuration: new HotPathHistogram({
      name: "a2a_push_delivery_duration_seconds",
      help: "Duration of push notification delivery attempts",
      labelNames: [],
      buckets: PUSH_BUCKETS,
      registry,
    }),
    pushPending: new Gauge({
      name: "a2a_push_pending",
      help: "Push notifications waiting to be delivered",
      registers,
      collect() {
        this.set(sources.pushStats()?.pending ?? 0);
      },
    }),
    pushOldestPendingAge: new Gauge({
      name: "a2a_push_oldest_pending_age_seconds",
      help: "Age of the oldest push notification still waiting to be delivered (0 when none)",
      registers,
      collect() {
        this.set((sources.pushStats()?.oldestPendingAgeMs ?? 0) / 1000);
      },
    }),
    storeCommitDuration: new HotPathHistogram({
      name: "a2a_store_commit_duration_seconds",
      help: "Duration of the task store's group commits",
      labelNames: ["store"],
      buckets: COMMIT_BUCKETS,
      registry,
    }),
    storeCommitWrites: new HotPathHistogram({
      name: "a2a_store_commit_writes",
      help: "Task writes per group commit (batch size)",
      labelNames: ["store"],
      buckets: BATCH_BUCKETS,
      registry,
    }),
    storeCommitsFailed: new Counter({
      name: "a2a_store_commits_failed_total",
      help: "Group commits that failed (their writes were lost and their callers told)",
      labelNames: ["store"],
      registers,
    }),
    authKeyReloadFailures: new Counter({
      name: "a2a_auth_key_reload_failures_total",
      help: "Reloads of the API key file (SIGHUP) that failed: the file did not read or parse, and the keys it still lists stayed in force",
      registers,
    }),
  };
  for (const reason of STREAM_END_REASONS) metrics.streamsEnded.inc({ reason }, 0);
  for (const outcome of ["ok", "error"]) metrics.runDuration.series({ outcome });
  metrics.pushDeliveryDuration.series({});
  return metrics;
}
