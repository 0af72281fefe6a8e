/**
 * Benchmark entry point: `npm run bench -- <name> [options]`. Each benchmark is a module
 * exporting a function that runs it and returns its markdown report (see bench/README.md).
 */
const BENCHMARKS: Record<string, { describe: string; run(args: readonly string[]): Promise<string> }> = {
  issue3: {
    describe:
      "task lifecycle core: SendMessage vs bare grpc-js and @a2a-js/sdk, memory per task, ListTasks [--quick] [--profile] [--baseline=DIR: A/B against another build]",
    run: async (args) => {
      const issue3 = await import("./issue3.js");
      return issue3.runIssue3({ quick: args.includes("--quick"), profile: args.includes("--profile"), baseline: issue3.argValue(args, "baseline") });
    },
  },
  issue4: {
    describe:
      "streaming: 500 SubscribeToTask streams × 1,000 chunks (raw HTTP/2 and grpc-js subscribers) vs @a2a-js/sdk, paced latency, stalled subscribers vs the budgets; one stream of 5,000 / 100,000 chunks vs bare grpc-js and the SDK [--quick] [--profile] [--smoke] [--single: the single stream alone, ~2.5 minutes with --quick]",
    run: async (args) =>
      (await import("./issue4.js")).runIssue4({
        quick: args.includes("--quick"),
        smoke: args.includes("--smoke"),
        profile: args.includes("--profile"),
        single: args.includes("--single"),
      }),
  },
  issue5: {
    describe:
      "SQLite vs memory store: SendMessage (interleaved rounds, event log on / off), RSS and ListTasks at 10k / 1M tasks, start-up time [--quick] [--profile] [--throughput-only]",
    run: async (args) =>
      (await import("./issue5.js")).runIssue5({
        quick: args.includes("--quick"),
        profile: args.includes("--profile"),
        throughputOnly: args.includes("--throughput-only"),
      }),
  },
  push: {
    describe: "push delivery: 100 tasks with webhooks on one loopback receiver vs @a2a-js/sdk's push sender; an outage of the receiver [--quick] [--profile]",
    run: async (args) => (await import("./push.js")).runPush({ quick: args.includes("--quick"), profile: args.includes("--profile") }),
  },
  "push-paced": {
    describe: "push delivery, paced phases only (200/s, 20/s), ours vs @a2a-js/sdk, interleaved rounds [--rounds=N] [--memory] [--profile]",
    run: async (args) => (await import("./push-paced.js")).runPushPaced(args),
  },
  "push-store": {
    describe:
      "push at the store only: the task writes of the push benchmark (100 tasks with a config) on SQLite vs memory, CPU per write [--rounds=N] [--gap-ms=N]",
    run: async (args) => (await import("./push-store.js")).runPushStore(args),
  },
  observability: {
    describe:
      "what metrics and tracing cost: blocking SendMessage on memory and SQLite, metrics off / on / tracing on, interleaved rounds [--quick] [--profile] [--store=memory|sqlite|both] [--kinds=metrics,tracing,sampled] [--rounds=N] [--calls=N]",
    run: async (args) => {
      const { observabilityOptions, runObservability } = await import("./observability.js");
      return runObservability(observabilityOptions(args));
    },
  },
  "metrics-cost": {
    describe:
      "what the Prometheus metrics cost per blocking SendMessage: metrics off / on, 5,000 calls a round, interleaved, memory and SQLite [--store=memory|sqlite|both] [--rounds=N] [--calls=N] [--processes=N] [--fresh-every=K (default 2; 0: never)] [--no-aa] [--pieces=eld,gc,channels,defaults,gcprofiler,unscraped,closed] [--baseline=DIR] [--reverse] [--profile]",
    run: async (args) => {
      const { metricsCostOptions, runMetricsCost } = await import("./metrics-cost.js");
      return runMetricsCost(metricsCostOptions(args));
    },
  },
  "call-promises": {
    describe:
      "how many promises one blocking SendMessage makes in the server, tracing off and on (each costs async-hook work while tracing runs) [--store=memory|sqlite] [--calls=N]",
    run: async (args) => (await import("./call-promises.js")).runCallPromises(args),
  },
  "otel-spans": {
    describe: "what the OpenTelemetry SDK costs per traced call, in-process: two spans made and ended, and their OTLP protobuf serialisation",
    run: async () => (await import("./otel-span-cost.js")).runOtelSpanCost(),
  },
  "tracing-calls": {
    describe:
      "a traced call's in-process cost (Tracing's hooks and our OTLP processor), this build ÷ another, in processes taken in turns [--baseline=DIR] [--pairs=N] [--calls=N] [--blocks=N]",
    run: async (args) => (await import("./tracing-calls.js")).runTracingCalls(args),
  },
  issue15: {
    describe:
      "one SendStreamingMessage of 5,000 / 100,000 chunks: ours vs a bare grpc-js streaming server [--quick] [--profile] [--sqlite] [--baseline=DIR: another build's dist/ beside ours] [--per-turn] [--rounds=N]",
    run: async (args) =>
      (await import("./issue15.js")).runIssue15({
        quick: args.includes("--quick"),
        profile: args.includes("--profile"),
        sqlite: args.includes("--sqlite"),
        baseline: args.find((a) => a.startsWith("--baseline="))?.slice("--baseline=".length),
        perTurn: args.includes("--per-turn"),
        rounds: Number(args.find((a) => a.startsWith("--rounds="))?.slice("--rounds=".length)) || undefined,
      }),
  },
  "stream-jit": {
    describe:
      "issue 15 item 2: V8 compile time and deopts per stream of 5,000 chunks, paces alternating as in `issue4 --single` (servers traced with --trace-opt --trace-deopt) [--baseline=DIR] [--sequence=b,t,b,b,b,t,t,t] [--n=5000]",
    run: async (args) => (await import("./stream-jit.js")).runStreamJit(args),
  },
  "issue15-sqlite": {
    describe:
      "issue 15 item 5: one stream of 5,000 / 100,000 chunks, our server on SQLite vs the memory store, burst and per-turn, met/missed (~3 min) [--profile] [--burst] [--baseline=DIR] [--rounds=N]",
    run: async (args) =>
      (await import("./issue15-sqlite.js")).runIssue15Sqlite({
        profile: args.includes("--profile"),
        burstOnly: args.includes("--burst"),
        baseline: args.find((a) => a.startsWith("--baseline="))?.slice("--baseline=".length),
        rounds: Number(args.find((a) => a.startsWith("--rounds="))?.slice("--rounds=".length)) || undefined,
      }),
  },
  "sqlite-burst-store": {
    describe:
      "issue 15 item 5, the store alone: a 100,000-chunk burst into the memory and SQLite stores in process, CPU per chunk and bytes written [--rounds=10] [--baseline=DIR]",
    run: async (args) => (await import("./sqlite-burst-store.js")).runSqliteBurstStore(args),
  },
  hostile: {
    describe: "hostile-input suite, long run: seeded cases over all 11 RPCs, auth off and on [--cases=100000] [--seed=18]",
    run: async (args) => (await import("./hostile.js")).runHostileBench(args),
  },
  auth: {
    describe: "blocking SendMessage with JWT auth on vs off (interleaved rounds): server CPU per call; limits' memory with 1,000 principals [--quick]",
    run: async (args) => (await import("./auth.js")).runAuthBench({ quick: args.includes("--quick") }),
  },
  postgres: {
    describe:
      "PostgreSQL store: SendMessage vs SQLite (one replica and three), cross-replica publish → receive latency, failover time [--quick] [--latency [--rounds=N] [--baseline=DIR]] [--throughput [--baseline=DIR] [--rounds=N] [--profile]: the target alone] [--throughput --three --baseline=DIR: PostgreSQL one and three replicas A/B]",
    run: async (args) => {
      const value = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
      const rounds = value("rounds");
      return (await import("./postgres.js")).runPostgresBench({
        quick: args.includes("--quick"),
        latency: args.includes("--latency"),
        throughput: args.includes("--throughput"),
        three: args.includes("--three"),
        profile: args.includes("--profile"),
        rounds: rounds === undefined ? undefined : Number(rounds),
        baseline: value("baseline"),
      });
    },
  },
  "postgres-push": {
    describe: "push on PostgreSQL at the store: a write with a webhook config vs without; outbox drain with one replica's push service vs two [--quick]",
    run: async (args) => (await import("./postgres-push.js")).runPostgresPushBench({ quick: args.includes("--quick") }),
  },
  "stream-release": {
    describe: "what releasing closed HTTP/2 streams' listeners (as our server does) saves a plain grpc-js server",
    run: async () => (await import("./stream-release.js")).runStreamRelease(),
  },
};

const [name, ...args] = process.argv.slice(2);
const bench = name === undefined ? undefined : BENCHMARKS[name];
if (bench === undefined) {
  const list = Object.entries(BENCHMARKS)
    .map(([n, b]) => `  ${n.padEnd(8)} ${b.describe}`)
    .join("\n");
  process.stderr.write(`${name === undefined ? "" : `unknown benchmark ${JSON.stringify(name)}\n`}Usage: npm run bench -- <name> [options]\n${list}\n`);
  process.exit(2);
}
bench.run(args).then(
  (report) => process.stdout.write(`${report}\n`),
  (err: unknown) => {
    process.stderr.write(`${(err as Error)?.stack ?? err}\n`);
    process.exit(1);
  },
);
