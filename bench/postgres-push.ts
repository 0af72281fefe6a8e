/**
 * Push on PostgreSQL, at the store: what a webhook config adds to a task write, and how fast the
 * outbox drains with one replica's push service and with two sharing the lanes.
 *
 *   npm run bench -- postgres-push [--quick]
 *
 * In one process, on the throwaway PostgreSQL 17 the tests use (fsync on, synchronous_commit
 * off, as `npm run bench -- postgres`). The sender is a stand-in that answers 200 at once, so the
 * drain measures the store's claim, read and remove statements, not HTTP. Rounds interleave the
 * variants; every ratio is taken within a round, and the table gives the median.
 */
import { loadavg } from "node:os";
import { create } from "@bufbuild/protobuf";
import { TaskPushNotificationConfigSchema, TaskState } from "../gen/es/lf/a2a/v1/a2a_pb.js";
import { silentLogger } from "../src/lifecycle/ports/logger.js";
import { PushService } from "../src/push/push-service.js";
import { openPostgresStore, type PostgresStore } from "../src/storage/postgres/index.js";
import { createBenchDatabase, startBenchPostgres } from "./lib/postgres.js";
import { newTask, statusChange } from "./lib/tasks.js";
import { median } from "./lib/stats.js";
import { formatNumber, formatRatio, markdownTable } from "./lib/table.js";

const FULL = { rounds: 5, tasks: 200, writes: 5 };
const QUICK: typeof FULL = { rounds: 3, tasks: 80, writes: 5 };
const scope = { tenant: "bench", principal: "alice" };
let micros = 1_800_000_000_000_000;

/** Makes `tasks` tasks (each with `configs` webhook configs) and writes `writes` statuses to each, 8 tasks at a time; ms per status write. */
async function writeTasks(store: PostgresStore, tasks: number, writes: number, configs: number): Promise<number> {
  const ids: string[] = [];
  for (let i = 0; i < tasks; i++) {
    const t = (await store.repository.create(scope, newTask({ micros: ++micros, text: "bench" }))).task;
    for (let c = 0; c < configs; c++) {
      const config = create(TaskPushNotificationConfigSchema, { taskId: t.id, id: `c${c}`, url: "https://hooks.example/bench" });
      await store.repository.push.put(scope, config, { maxPerTask: 10 });
    }
    ids.push(t.id);
  }
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < ids.length) {
        const id = ids[next++]!;
        for (let v = 1; v <= writes; v++) await store.repository.update(scope, id, v, statusChange(TaskState.WORKING, ++micros));
      }
    }),
  );
  return (performance.now() - started) / (tasks * writes);
}

/** Drains the outbox with a push service on each of `stores`; deliveries per second, and how many went out twice. */
async function drain(stores: readonly PostgresStore[]): Promise<{ perSecond: number; duplicates: number }> {
  const seen = new Set<string>();
  let duplicates = 0;
  const services = stores.map(
    (s) =>
      new PushService({
        outbox: s.repository.push,
        configs: s.repository.push,
        logger: silentLogger,
        concurrency: 32,
        retry: { maxAttempts: 3, backoffMs: 10, maxBackoffMs: 10, maxAgeMs: 60_000 },
        sender: {
          async send(request) {
            const id = request.headers["webhook-id"]!;
            if (seen.has(id)) duplicates++;
            seen.add(id);
            return { kind: "answered", status: 200, retryAfter: undefined };
          },
        },
      }),
  );
  const pending = await stores[0]!.repository.push.count();
  const started = performance.now();
  await Promise.all(services.map((service) => service.start()));
  while ((await stores[0]!.repository.push.count()) > 0) await new Promise((resolve) => setTimeout(resolve, 5));
  const ms = performance.now() - started;
  for (const service of services) service.stop();
  return { perSecond: (pending / ms) * 1000, duplicates };
}

export async function runPostgresPushBench(options: { readonly quick: boolean }): Promise<string> {
  const cfg = options.quick ? QUICK : FULL;
  const pg = await startBenchPostgres({ durable: true });
  process.env.A2A_BENCH_POSTGRES_URL = pg.url;
  const load = [loadavg()[0]!];
  const rounds: Array<{ plain: number; withConfig: number; one: number; two: number; duplicates: number }> = [];
  try {
    for (let round = 0; round < cfg.rounds; round++) {
      const db = await createBenchDatabase("bench_push");
      const a = await openPostgresStore({ url: db.url, poolSize: 10 });
      const b = await openPostgresStore({ url: db.url, poolSize: 10 });
      try {
        // Alternate which variant goes first, so neither always gets the warmer cache.
        const first = round % 2 === 0;
        const plain1 = first ? await writeTasks(a, cfg.tasks, cfg.writes, 0) : 0;
        const withConfig = await writeTasks(a, cfg.tasks, cfg.writes, 1);
        const plain = first ? plain1 : await writeTasks(a, cfg.tasks, cfg.writes, 0);
        const drains: Record<"one" | "two", { perSecond: number; duplicates: number }> = {
          one: { perSecond: 0, duplicates: 0 },
          two: { perSecond: 0, duplicates: 0 },
        };
        for (const which of first ? (["one", "two"] as const) : (["two", "one"] as const)) {
          if (which !== (first ? "one" : "two")) await writeTasks(a, cfg.tasks, cfg.writes, 1); // the first drain takes the outbox the writes above left
          drains[which] = await drain(which === "one" ? [a] : [a, b]);
        }
        const { one, two } = drains;
        rounds.push({ plain, withConfig, one: one.perSecond, two: two.perSecond, duplicates: one.duplicates + two.duplicates });
      } finally {
        await a.close();
        await b.close();
        await db.drop();
      }
      load.push(loadavg()[0]!);
    }
  } finally {
    await pg.stop();
  }
  const rows = rounds.map((r, i) => [
    String(i + 1),
    formatNumber(r.plain, 2),
    formatNumber(r.withConfig, 2),
    formatRatio(r.withConfig / r.plain),
    formatNumber(r.one),
    formatNumber(r.two),
    formatRatio(r.two / r.one),
    String(r.duplicates),
  ]);
  rows.push([
    "median",
    formatNumber(median(rounds.map((r) => r.plain)), 2),
    formatNumber(median(rounds.map((r) => r.withConfig)), 2),
    formatRatio(median(rounds.map((r) => r.withConfig / r.plain))),
    formatNumber(median(rounds.map((r) => r.one))),
    formatNumber(median(rounds.map((r) => r.two))),
    formatRatio(median(rounds.map((r) => r.two / r.one))),
    String(rounds.reduce((n, r) => n + r.duplicates, 0)),
  ]);
  return [
    `## Push on PostgreSQL (${cfg.rounds} rounds, ${cfg.tasks} tasks × ${cfg.writes} status writes, 8 writers; load average ${load.map((l) => l.toFixed(1)).join(" → ")})`,
    "",
    markdownTable(
      ["round", "ms/write, no config", "ms/write, 1 config", "1 config ÷ none", "deliveries/s, 1 replica", "deliveries/s, 2 replicas", "2 ÷ 1", "sent twice"],
      rows,
    ),
  ].join("\n");
}
