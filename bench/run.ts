/**
 * The one benchmark runner: `npm run bench -- <name> [<name> ...] [options]` (see bench/README.md).
 * Each benchmark is a module whose function runs it and returns a Markdown report; the runner
 * prints the report and writes it to bench/results/<date and time>-<name>.md.
 *
 * `--server-dir=DIR` runs a second build of our server, from the checkout DIR (built: its dist/),
 * in the same rounds as this checkout's, so "before and after" is one run.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

interface Benchmark {
  readonly measures: string;
  /** Whether it takes --server-dir (its own --baseline=DIR). */
  readonly serverDir?: true;
  run(args: readonly string[]): Promise<string>;
}

const flag = (args: readonly string[], name: string) => args.includes(`--${name}`);
const value = (args: readonly string[], name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const count = (args: readonly string[], name: string) => (value(args, name) === undefined ? undefined : Number(value(args, name)));

const BENCHMARKS: Record<string, Benchmark> = {
  unary: {
    measures:
      "blocking SendMessage (trivial agent, memory store): server CPU per call, calls/s, latency vs a bare grpc-js server and @a2a-js/sdk; memory per stored task; ListTasks as tasks grow [--quick] [--profile]",
    serverDir: true,
    run: async (args) =>
      (await import("./unary.js")).runUnary({ quick: flag(args, "quick"), profile: flag(args, "profile"), baseline: value(args, "baseline") }),
  },
  streaming: {
    measures:
      "one SendStreamingMessage of 5,000 / 100,000 chunks, burst and one chunk per turn: server CPU per event vs a bare grpc-js streaming server [--quick] [--profile] [--sqlite] [--per-turn] [--rounds=N]",
    serverDir: true,
    run: async (args) =>
      (await import("./streaming.js")).runStreaming({
        quick: flag(args, "quick"),
        profile: flag(args, "profile"),
        sqlite: flag(args, "sqlite"),
        baseline: value(args, "baseline"),
        perTurn: flag(args, "per-turn"),
        rounds: count(args, "rounds"),
      }),
  },
  http: {
    measures:
      "JSON-RPC beside the @a2a-js/sdk express server: blocking SendMessage CPU per call, one SSE stream of 5,000 chunks CPU per chunk, 500 SSE subscribers x 1,000 chunks (every chunk, in order), v0.3 message/send CPU per call against v1.0's [--quick] [--only=unary,stream,fanout,v03]",
    run: async (args) => (await import("./http.js")).runHttp({ quick: flag(args, "quick"), only: value(args, "only")?.split(",") }),
  },
  "fan-out": {
    measures:
      "500 SubscribeToTask streams x 1,000 chunks (raw HTTP/2 and grpc-js subscribers, lossless check) vs @a2a-js/sdk, paced latency, stalled subscribers; --single: one long stream vs bare grpc-js and the SDK [--quick] [--smoke] [--profile] [--single]",
    run: async (args) =>
      (await import("./fan-out.js")).runFanOut({
        quick: flag(args, "quick"),
        smoke: flag(args, "smoke"),
        profile: flag(args, "profile"),
        single: flag(args, "single"),
      }),
  },
  push: {
    measures:
      "webhook delivery: 100 tasks on one loopback receiver vs @a2a-js/sdk's push sender, CPU per delivery, latency, a receiver outage [--quick] [--profile]",
    run: async (args) => (await import("./push.js")).runPush({ quick: flag(args, "quick"), profile: flag(args, "profile") }),
  },
  "push:store": {
    measures: "the push benchmark's task writes at the store only, SQLite vs memory, CPU per write [--rounds=N] [--gap-ms=N]",
    run: async (args) => (await import("./push-store.js")).runPushStore(args),
  },
  "push:postgres": {
    measures: "push on PostgreSQL at the store: a write with a webhook config vs without; outbox drain by one replica vs two [--quick]",
    run: async (args) => (await import("./postgres-push.js")).runPostgresPushBench({ quick: flag(args, "quick") }),
  },
  stores: {
    measures:
      "SQLite vs memory store behind the server: blocking SendMessage CPU per call (event log on / off), RSS and ListTasks at 10k / 1M tasks, start-up time [--quick] [--profile] [--throughput-only]",
    serverDir: true,
    run: async (args) =>
      (await import("./stores.js")).runStores({
        quick: flag(args, "quick"),
        profile: flag(args, "profile"),
        throughputOnly: flag(args, "throughput-only"),
        baseline: value(args, "baseline"),
      }),
  },
  "stores:postgres": {
    measures:
      "PostgreSQL store: SendMessage vs SQLite (one replica and three), cross-replica latency, failover time [--quick] [--latency] [--throughput [--three]] [--rounds=N] [--profile]",
    serverDir: true,
    run: async (args) =>
      (await import("./postgres.js")).runPostgresBench({
        quick: flag(args, "quick"),
        latency: flag(args, "latency"),
        throughput: flag(args, "throughput"),
        three: flag(args, "three"),
        profile: flag(args, "profile"),
        rounds: count(args, "rounds"),
        baseline: value(args, "baseline"),
      }),
  },
  auth: {
    measures: "blocking SendMessage with JWT auth on vs off: server CPU per call; the limits' memory with 1,000 principals [--quick]",
    run: async (args) => (await import("./auth.js")).runAuthBench({ quick: flag(args, "quick") }),
  },
  observability: {
    measures:
      "what metrics and tracing cost: blocking SendMessage with metrics off / on / tracing on, memory and SQLite, interleaved rounds [--quick] [--profile] [--store=memory|sqlite|both] [--kinds=metrics,tracing,sampled] [--rounds=N] [--calls=N]",
    serverDir: true,
    run: async (args) => {
      const { observabilityOptions, runObservability } = await import("./observability.js");
      return runObservability(observabilityOptions(args));
    },
  },
  "observability:spans": {
    measures: "the OpenTelemetry SDK's cost per traced call, in process: the call's spans made, ended and serialised",
    run: async () => (await import("./otel-span-cost.js")).runOtelSpanCost(),
  },
  hostile: {
    measures:
      "the hostile-input suite's long run: seeded cases over all 11 RPCs, auth off and on, beside plain calls [--cases=100000] [--seed=18] [--idle-s=30]",
    run: async (args) => (await import("./hostile.js")).runHostileBench(args),
  },
};

const RESULTS = fileURLToPath(new URL("./results/", import.meta.url));

function usage(problem: string): never {
  const list = Object.entries(BENCHMARKS)
    .map(([name, b]) => `  ${name.padEnd(20)} ${b.measures}${b.serverDir ? " [--server-dir=DIR]" : ""}`)
    .join("\n");
  process.stderr.write(`${problem}Usage: npm run bench -- <name> [<name> ...] [options]\n${list}\n`);
  process.exit(2);
}

async function main(argv: readonly string[]): Promise<void> {
  const names = argv.filter((a) => !a.startsWith("--"));
  const options = argv.filter((a) => a.startsWith("--"));
  if (names.length === 0) usage("");
  const unknown = names.find((n) => BENCHMARKS[n] === undefined);
  if (unknown !== undefined) usage(`unknown benchmark ${JSON.stringify(unknown)}\n`);
  const serverDir = value(options, "server-dir");
  const refusing = names.find((n) => serverDir !== undefined && !BENCHMARKS[n]!.serverDir);
  if (refusing !== undefined) usage(`${refusing} does not take --server-dir\n`);
  const args = serverDir === undefined ? options : [...options.filter((a) => !a.startsWith("--server-dir=")), `--baseline=${serverDir}`];
  mkdirSync(RESULTS, { recursive: true });
  for (const name of names) {
    const startedAt = new Date();
    const report = await BENCHMARKS[name]!.run(args);
    const file = `${RESULTS}${startedAt.toISOString().slice(0, 16).replace(":", "-")}-${name.replace(":", "-")}.md`;
    writeFileSync(file, `<!-- npm run bench -- ${name} ${options.join(" ")}; started ${startedAt.toISOString()} -->\n\n${report}\n`);
    process.stdout.write(`${report}\n\n(written to bench/results/${file.slice(RESULTS.length)})\n`);
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`${(err as Error)?.stack ?? err}\n`);
  process.exit(1);
});
