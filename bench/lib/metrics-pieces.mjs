// Preloaded (--import) into a metrics-off server by `bench -- metrics-cost --pieces=...`: one piece of
// what turning the metrics on switches on, alone, so that its cost per call can be told from the
// rest. BENCH_METRICS_PIECES names them, comma-separated:
//   eld       prom-client's event-loop-lag monitor at its default 10 ms resolution (monitorEventLoopDelay),
//             what the metrics ran before they set 50 ms (src/observability/metrics-catalogue.ts);
//   gc        prom-client's GC observer: a PerformanceObserver of 'gc' entries;
//   gcprofiler v8.GCProfiler (no JS callback per GC: records kept natively), restarted every 15 s,
//             its records read then: a candidate to replace the observer, measured first;
//   channels  a no-op subscriber on every diagnostics channel the metrics listen to (the
//             producers then build and publish their messages, and runs go through runStores);
//   defaults  prom-client's collectDefaultMetrics into a registry of its own (eld and gc among them).
import { subscribe } from "node:diagnostics_channel";
import { monitorEventLoopDelay, PerformanceObserver } from "node:perf_hooks";
import { createRequire } from "node:module";
import { GCProfiler } from "node:v8";

const pieces = (process.env.BENCH_METRICS_PIECES ?? "").split(",").filter((p) => p !== "");
const keep = [];
for (const piece of pieces) {
  if (piece === "eld") {
    const histogram = monitorEventLoopDelay({ resolution: 10 });
    histogram.enable();
    keep.push(histogram);
  } else if (piece === "gc") {
    const observer = new PerformanceObserver((list) => {
      globalThis.benchLastGcMs = list.getEntries()[0]?.duration;
    });
    observer.observe({ entryTypes: ["gc"] });
    keep.push(observer);
  } else if (piece === "gcprofiler") {
    let profiler = new GCProfiler();
    profiler.start();
    const timer = setInterval(() => {
      const next = new GCProfiler();
      next.start();
      globalThis.benchGcRecords = profiler.stop()?.statistics.length;
      profiler = next;
    }, 15_000).unref();
    keep.push(timer);
  } else if (piece === "channels") {
    const names = ["task:created", "task:settled", "run:start", "run:end", "store:commit", "push:delivery", "stream:event", "stream:ended"];
    for (const name of names) subscribe(`a2a:${name}`, () => {});
  } else if (piece === "defaults") {
    const { Registry, collectDefaultMetrics } = createRequire(import.meta.url)("prom-client");
    const registry = new Registry();
    collectDefaultMetrics({ register: registry });
    keep.push(registry);
  } else {
    throw new Error(`BENCH_METRICS_PIECES: unknown piece ${piece} (eld, gc, gcprofiler, channels, defaults)`);
  }
}
globalThis.benchMetricsPieces = keep;
