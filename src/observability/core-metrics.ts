import { subscribe, unsubscribe } from "node:diagnostics_channel";
import {
  CHANNELS,
  type PushDelivery,
  type RunObservation,
  type StoreCommit,
  type StreamEnded,
  type StreamEvent,
  type TaskSettled,
} from "../lifecycle/index.js";
import type { HistogramSeries } from "./hot-path-histogram.js";
import type { A2AMetrics } from "./metrics-catalogue.js";

/**
 * Feeds the metrics from what the core, the stores, the stream edge and push delivery publish
 * on their diagnostics channels (src/lifecycle/diagnostics.ts). Subscribing is what turns the
 * publishing on; the returned function turns it off again.
 */
export function subscribeCoreMetrics(metrics: A2AMetrics): () => void {
  const { tallies } = metrics;
  const runOk = metrics.runDuration.series({ outcome: "ok" });
  const runError = metrics.runDuration.series({ outcome: "error" });
  const pushDuration = metrics.pushDeliveryDuration.series({});
  // A commit's two series, found once per store name (there is one store), not per commit.
  const stores = new Map<string, { duration: HistogramSeries; writes: HistogramSeries }>();
  const storeSeries = (store: string) => {
    let series = stores.get(store);
    if (series === undefined) {
      series = { duration: metrics.storeCommitDuration.series({ store }), writes: metrics.storeCommitWrites.series({ store }) };
      stores.set(store, series);
    }
    return series;
  };
  const handlers: Array<[string, (message: unknown) => void]> = [
    [CHANNELS.taskCreated, () => tallies.tasksCreated++],
    [CHANNELS.taskSettled, (m) => tallies.tasksSettled[(m as TaskSettled).state]!++],
    [CHANNELS.runStart, () => tallies.runsStarted++],
    [
      CHANNELS.runEnd,
      (m) => {
        const run = m as RunObservation;
        tallies.runsEnded++;
        (run.failed ? runError : runOk).observe((run.durationMs ?? 0) / 1000);
      },
    ],
    [
      CHANNELS.storeCommit,
      (m) => {
        const commit = m as StoreCommit;
        const store = storeSeries(commit.store);
        store.duration.observe(commit.durationMs / 1000);
        store.writes.observe(commit.writes);
        if (commit.failed) metrics.storeCommitsFailed.inc({ store: commit.store });
      },
    ],
    [
      CHANNELS.pushDelivery,
      (m) => {
        const delivery = m as PushDelivery;
        tallies.pushDeliveries.set(delivery.outcome, (tallies.pushDeliveries.get(delivery.outcome) ?? 0) + 1);
        pushDuration.observe(delivery.durationMs / 1000);
      },
    ],
    [
      CHANNELS.streamEvent,
      (m) => {
        tallies.streamEventsWritten++;
        if ((m as StreamEvent).merged) tallies.streamEventsMerged++;
      },
    ],
    [CHANNELS.streamEnded, (m) => metrics.streamsEnded.inc({ reason: (m as StreamEnded).reason })],
  ];
  for (const [name, handler] of handlers) subscribe(name, handler);
  return () => {
    for (const [name, handler] of handlers) unsubscribe(name, handler);
  };
}
