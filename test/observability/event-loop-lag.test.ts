import { setTimeout as delay } from "node:timers/promises";
import { createMetrics, EVENT_LOOP_SAMPLE_MS } from "../../src/observability/metrics-catalogue.js";
import { metricTypes, parsePrometheusText, sampleValue } from "../support/prometheus-text.js";

/** prom-client's event-loop lag gauges (collectDefaultMetrics' own monitorEventLoopDelay sampler). */
const EVENT_LOOP_LAG_METRICS = ["", "_min", "_max", "_mean", "_stddev", "_p50", "_p90", "_p99"].map((part) => `nodejs_eventloop_lag${part}_seconds`);

function blockFor(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

describe("event-loop lag, from prom-client's own collector", () => {
  test("OBS-METRICS: the service's registry has prom-client's event-loop lag gauges, once each, beside its other default metrics", async () => {
    const metrics = createMetrics({ activeCalls: () => new Map(), openStreams: () => 0, pushStats: () => undefined });
    const text = await metrics.registry.metrics();
    const types = metricTypes(text);
    for (const name of EVENT_LOOP_LAG_METRICS) {
      expect(types.get(name)).toBe("gauge");
      expect(text.split("\n").filter((line) => line.startsWith(`# TYPE ${name} `))).toHaveLength(1);
    }
    expect(types.get("process_cpu_seconds_total")).toBe("counter");
    expect(types.get("nodejs_gc_duration_seconds")).toBe("histogram");
  });

  test("OBS-METRICS: a loop blocked for 150 ms is seen in the percentiles and the maximum, sampled every EVENT_LOOP_SAMPLE_MS; the next scrape starts afresh", async () => {
    const metrics = createMetrics({ activeCalls: () => new Map(), openStreams: () => 0, pushStats: () => undefined });
    await metrics.registry.metrics(); // a scrape resets the sampler's histogram
    await delay(EVENT_LOOP_SAMPLE_MS * 2); // its first tick only marks the time
    blockFor(150);
    await delay(EVENT_LOOP_SAMPLE_MS * 2);
    let samples = parsePrometheusText(await metrics.registry.metrics());
    expect(sampleValue(samples, "nodejs_eventloop_lag_max_seconds")).toBeGreaterThanOrEqual(0.1);
    expect(sampleValue(samples, "nodejs_eventloop_lag_p99_seconds")).toBeGreaterThanOrEqual(0.1);
    expect(sampleValue(samples, "nodejs_eventloop_lag_min_seconds")).toBeGreaterThan(0);
    expect(sampleValue(samples, "nodejs_eventloop_lag_seconds")).toBeGreaterThanOrEqual(0);
    expect(sampleValue(samples, "nodejs_eventloop_lag_seconds")).toBeLessThan(1);
    await delay(EVENT_LOOP_SAMPLE_MS * 4); // a free loop since the last scrape
    samples = parsePrometheusText(await metrics.registry.metrics());
    expect(sampleValue(samples, "nodejs_eventloop_lag_max_seconds")).toBeLessThan(0.1);
  });
});
