import { setTimeout as delay } from "node:timers/promises";
import { Registry } from "prom-client";
import { until } from "../foundation/helpers.js";
import { EVENT_LOOP_LAG_METRICS, EventLoopLag } from "../../src/observability/event-loop-lag.js";
import { createMetrics } from "../../src/observability/metrics-catalogue.js";
import { metricTypes, parsePrometheusText, sampleValue } from "../support/prometheus-text.js";

/** The lag sampler alone, on a registry of its own, with short periods so that a test waits little. */
function sampler(busy = () => false): { lag: EventLoopLag; read: () => Promise<ReturnType<typeof parsePrometheusText>> } {
  const registry = new Registry();
  const lag = new EventLoopLag({ registry, resolutionMs: 10, quietMs: 100, busy });
  return { lag, read: async () => parsePrometheusText(await registry.metrics()) };
}

function blockFor(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

describe("event-loop lag, sampled while the service works", () => {
  let lag: EventLoopLag | undefined;
  afterEach(() => lag?.close());

  test("OBS-METRICS: nothing samples the loop (no timer wakes the process) until work arrives, and then a blocked loop is seen", async () => {
    const s = sampler();
    lag = s.lag;
    expect(s.lag.sampling).toBe(false);
    blockFor(120); // idle: unseen, by design
    let samples = await s.read();
    expect(sampleValue(samples, "nodejs_eventloop_lag_max_seconds")).toBe(0);
    expect(sampleValue(samples, "nodejs_eventloop_lag_p99_seconds")).toBe(0);

    s.lag.touch(); // a call arrived
    expect(s.lag.sampling).toBe(true);
    await delay(30); // the sampler's first tick only marks the time
    blockFor(150);
    await delay(30);
    samples = await s.read();
    expect(sampleValue(samples, "nodejs_eventloop_lag_max_seconds")).toBeGreaterThanOrEqual(0.1);
    expect(sampleValue(samples, "nodejs_eventloop_lag_p99_seconds")).toBeGreaterThanOrEqual(0.1);
    expect(sampleValue(samples, "nodejs_eventloop_lag_min_seconds")).toBeGreaterThan(0);
    // The lag now, behind what is queued: a small positive reading on a free loop.
    expect(sampleValue(samples, "nodejs_eventloop_lag_seconds")).toBeGreaterThanOrEqual(0);
    expect(sampleValue(samples, "nodejs_eventloop_lag_seconds")).toBeLessThan(1);
  });

  test("OBS-METRICS: sampling stops once nothing new arrives for the quiet period, and goes on while work is in progress", async () => {
    let busy = true;
    const s = sampler(() => busy);
    lag = s.lag;
    s.lag.touch();
    await delay(450); // four quiet periods with nothing new, but a run in progress
    expect(s.lag.sampling).toBe(true);
    busy = false;
    await until(() => !s.lag.sampling, "sampling to stop once idle");
    await s.read(); // what was sampled until then
    await delay(50);
    const samples = await s.read();
    expect(sampleValue(samples, "nodejs_eventloop_lag_p99_seconds")).toBe(0); // nothing sampled since: an idle loop reads 0
    s.lag.touch(); // work again: sampling again
    expect(s.lag.sampling).toBe(true);
  });

  test("OBS-METRICS: the service's registry has prom-client's event-loop lag gauges, once each, as ours", async () => {
    const metrics = createMetrics({ activeCalls: () => new Map(), openStreams: () => 0, pushStats: () => undefined });
    lag = metrics.eventLoopLag;
    const text = await metrics.registry.metrics();
    const types = metricTypes(text);
    for (const name of EVENT_LOOP_LAG_METRICS) {
      expect(types.get(name)).toBe("gauge");
      expect(text.split("\n").filter((line) => line.startsWith(`# TYPE ${name} `))).toHaveLength(1);
    }
    expect(metrics.eventLoopLag.sampling).toBe(false);
    expect(types.get("process_cpu_seconds_total")).toBe("counter");
    expect(types.get("nodejs_gc_duration_seconds")).toBe("histogram");
  });
});
