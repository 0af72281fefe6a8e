import { monitorEventLoopDelay, type IntervalHistogram } from "node:perf_hooks";
import { Gauge, type Registry } from "prom-client";

/**
 * The event-loop lag metrics, `nodejs_eventloop_lag_seconds` and `nodejs_eventloop_lag_{min,max,
 * mean,stddev,p50,p90,p99}_seconds`: the names, help texts and meanings of prom-client's default
 * ones, sampled only while the service works.
 *
 * Why not prom-client's: its sampler (`perf_hooks.monitorEventLoopDelay`, a libuv timer) ticks
 * every `resolution` ms for the life of the process, and each tick wakes a process that waits for
 * work: ~57 µs of CPU a wake on a 2-core virtual machine (shared), 1.1 ms of CPU a second at 50 ms,
 * nine tenths of what an idle server with metrics on spent (`npm run bench -- metrics-cost`, idle
 * CPU per second). A loop nobody is waiting on has no lag to report, so here the same sampler runs
 * only while there is work: it starts when a call arrives or an agent run or push delivery starts
 * (`touch()`, a field write once it runs), and stops once `quietMs` has passed with nothing new and
 * nothing in progress. A busy loop is awake anyway: its ticks cost next to nothing.
 *
 * What that changes (the README says so): a lag is seen from one tick (`resolutionMs`) after the
 * first activity of a busy spell; a loop blocked while the service is idle (no call, run or
 * delivery for `quietMs`) goes unseen; an idle loop reads 0 instead of one tick.
 */
export const EVENT_LOOP_SAMPLE_MS = 50;
/** How long sampling goes on after the last activity, ms. */
export const EVENT_LOOP_QUIET_MS = 2_000;

const PREFIX = "nodejs_eventloop_lag";
/** prom-client's names for what `EventLoopLag` exports, to take out of its default metrics first. */
export const EVENT_LOOP_LAG_METRICS = ["", "_min", "_max", "_mean", "_stddev", "_p50", "_p90", "_p99"].map((part) => `${PREFIX}${part}_seconds`);

export interface EventLoopLagOptions {
  readonly registry: Registry;
  /** Sampler resolution, ms (EVENT_LOOP_SAMPLE_MS). */
  readonly resolutionMs?: number;
  /** Sampling stops after this long without activity, ms (EVENT_LOOP_QUIET_MS). */
  readonly quietMs?: number;
  /** Work in progress that keeps sampling on with nothing new arriving: calls in progress, runs active. */
  readonly busy?: () => boolean;
}

export class EventLoopLag {
  readonly #histogram: IntervalHistogram;
  readonly #quietMs: number;
  readonly #busy: () => boolean;
  #sampling = false;
  /** Activity since the quiet timer last looked. */
  #touched = false;
  #quietTimer: NodeJS.Timeout | undefined;

  constructor(options: EventLoopLagOptions) {
    this.#histogram = monitorEventLoopDelay({ resolution: options.resolutionMs ?? EVENT_LOOP_SAMPLE_MS });
    this.#quietMs = options.quietMs ?? EVENT_LOOP_QUIET_MS;
    this.#busy = options.busy ?? (() => false);
    this.#register(options.registry);
  }

  /** The service is working: sample the loop (from now until `quietMs` after the last touch). */
  touch(): void {
    if (this.#sampling) this.#touched = true;
    else this.#start();
  }

  /** True while the sampler runs. */
  get sampling(): boolean {
    return this.#sampling;
  }

  /** Stops sampling for good (the gauges stay readable). */
  close(): void {
    this.#stop();
  }

  #start(): void {
    this.#sampling = true;
    this.#touched = false;
    this.#histogram.enable();
    this.#quietTimer = setInterval(() => this.#checkQuiet(), this.#quietMs).unref();
  }

  #checkQuiet(): void {
    if (this.#touched || this.#busy()) this.#touched = false;
    else this.#stop();
  }

  #stop(): void {
    if (!this.#sampling) return;
    this.#sampling = false;
    this.#histogram.disable();
    clearInterval(this.#quietTimer);
    this.#quietTimer = undefined;
  }

  #register(registry: Registry): void {
    const histogram = this.#histogram;
    const registers = [registry];
    const stat = (part: string, help: string, aggregator: "min" | "max" | "average") =>
      new Gauge({ name: `${PREFIX}_${part}_seconds`, help, registers, aggregator });
    // Registered after the main gauge, whose collect sets them: the registry reads its metrics in order.
    const stats: Array<[Gauge, () => number]> = [];
    new Gauge({
      name: `${PREFIX}_seconds`,
      help: "Lag of event loop in seconds.",
      registers,
      aggregator: "average",
      async collect() {
        // Since the last scrape; nothing sampled (an idle service) reads 0.
        const sampled = histogram.count > 0;
        for (const [gauge, read] of stats) gauge.set(sampled ? read() / 1e9 : 0);
        histogram.reset();
        // The loop's lag now: how long an immediate waits behind what is queued.
        const start = performance.now();
        await new Promise((resolve) => setImmediate(resolve));
        this.set((performance.now() - start) / 1000);
      },
    });
    stats.push(
      [stat("min", "The minimum recorded event loop delay.", "min"), () => histogram.min],
      [stat("max", "The maximum recorded event loop delay.", "max"), () => histogram.max],
      [stat("mean", "The mean of the recorded event loop delays.", "average"), () => histogram.mean],
      [stat("stddev", "The standard deviation of the recorded event loop delays.", "average"), () => histogram.stddev],
      [stat("p50", "The 50th percentile of the recorded event loop delays.", "average"), () => histogram.percentile(50)],
      [stat("p90", "The 90th percentile of the recorded event loop delays.", "average"), () => histogram.percentile(90)],
      [stat("p99", "The 99th percentile of the recorded event loop delays.", "average"), () => histogram.percentile(99)],
    );
  }
}
