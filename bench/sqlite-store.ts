/**
 * SQLite task store at scale: fills a database with completed tasks (all in ONE scope, the
 * worst case for ListTasks), then measures it from a fresh process so open time and RSS are
 * those of a server starting on that file.
 *
 *   node --import tsx bench/sqlite-store.ts [--tasks 1000000] [--dir /tmp/x] [--keep]
 *
 * Reported per size: fill rate, file size, open time (with and without quick_check),
 * RSS after open and after the list runs, µs per ListTasks page of 50 (first page and deep
 * in the keyset, with and without a context filter), µs per GetTask and per update.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { create } from "@bufbuild/protobuf";
import { ArtifactSchema, MessageSchema, PartSchema, Role, TaskSchema, TaskState, TaskStatusSchema, type Task } from "../gen/es/lf/a2a/v1/a2a_pb.js";
import type { ListCursor, TaskChange, TaskQuery, TaskScope } from "../src/lifecycle/task-repository.js";
import { openSqliteTaskRepository } from "../src/storage/sqlite/sqlite-task-repository.js";
import { timestampFromMicros } from "../test/support/tasks.js";

const SCOPE: TaskScope = { tenant: "bench", principal: "alice" };
const TASKS_PER_CONTEXT = 10;
const T0 = 1_750_000_000_000_000;

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? undefined : process.argv[i + 1];
}

function text(t: string) {
  return create(PartSchema, { content: { case: "text", value: t } });
}

/** A task's life as a typical run writes it: the question, WORKING, one artifact, COMPLETED with the answer. */
function taskLife(i: number): { task: Task; changes: TaskChange[] } {
  const id = `task-${i.toString().padStart(8, "0")}`;
  const contextId = `ctx-${Math.floor(i / TASKS_PER_CONTEXT)}`;
  const at = (step: number) => timestampFromMicros(T0 + i * 10 + step);
  const task = create(TaskSchema, {
    id,
    contextId,
    status: create(TaskStatusSchema, { state: TaskState.SUBMITTED, timestamp: at(0) }),
    history: [create(MessageSchema, { messageId: `u-${i}`, role: Role.USER, taskId: id, contextId, parts: [text(`question number ${i}`)] })],
  });
  const changes: TaskChange[] = [
    { kind: "status", status: create(TaskStatusSchema, { state: TaskState.WORKING, timestamp: at(1) }) },
    {
      kind: "artifact",
      artifact: create(ArtifactSchema, { artifactId: "answer", parts: [text(`the answer to question ${i} is 42`)] }),
      append: false,
      lastChunk: true,
    },
    {
      kind: "status",
      status: create(TaskStatusSchema, {
        state: TaskState.COMPLETED,
        timestamp: at(2),
        message: create(MessageSchema, { messageId: `a-${i}`, role: Role.AGENT, taskId: id, contextId, parts: [text("done")] }),
      }),
    },
  ];
  return { task, changes };
}

/**
 * Fills through the repository's real write path (create, then three guarded updates per
 * task), 2,500 tasks per outer transaction so the fill is not bound by commits.
 */
async function fill(file: string, from: number, to: number): Promise<number> {
  const repo = openSqliteTaskRepository({ file });
  const started = performance.now();
  for (let start = from; start < to; start += 2_500) {
    const end = Math.min(to, start + 2_500);
    // Written within one turn: the store applies each write at once and commits them in batches.
    const results: unknown[] = [];
    for (let i = start; i < end; i++) {
      const { task, changes } = taskLife(i);
      results.push(repo.create(SCOPE, task));
      changes.forEach((change, n) => results.push(repo.update(SCOPE, task.id, n + 1, change)));
    }
    await Promise.all(results);
  }
  const seconds = (performance.now() - started) / 1000;
  await repo.close();
  return (to - from) / seconds;
}

async function timeUsAsync(runs: number, fn: (i: number) => Promise<unknown>): Promise<number> {
  const t = performance.now();
  for (let i = 0; i < runs; i++) await fn(i);
  return ((performance.now() - t) * 1000) / runs;
}

/** Runs in a fresh process: what a server sees when it starts on `file`. */
async function measure(file: string, total: number): Promise<void> {
  const rssBase = process.memoryUsage().rss;
  let t = performance.now();
  const quick = openSqliteTaskRepository({ file, integrityCheck: "quick" });
  const openQuickMs = performance.now() - t;
  await quick.close();
  t = performance.now();
  const repo = openSqliteTaskRepository({ file }); // default: "auto"
  const openMs = performance.now() - t;
  const rssOpen = process.memoryUsage().rss;

  const base: TaskQuery = { pageSize: 50, includeArtifacts: false };
  const deep: ListCursor = {
    statusMicros: T0 + Math.floor(total / 2) * 10,
    taskId: `task-${Math.floor(total / 2)
      .toString()
      .padStart(8, "0")}`,
  };
  const ctx = `ctx-${Math.floor(total / 2 / TASKS_PER_CONTEXT)}`;
  const runs = 300;
  const list = async (q: TaskQuery) => {
    await repo.list(SCOPE, q); // warm the statement
    return timeUsAsync(runs, async () => repo.list(SCOPE, q));
  };
  const listFirst = await list(base);
  const listDeep = await list({ ...base, after: deep });
  const listFirstNoHistory = await list({ ...base, historyLength: 0 });
  const listContext = await list({ ...base, contextId: ctx });
  const listState = await list({ ...base, state: TaskState.COMPLETED, after: deep });
  const listSince = await list({ ...base, statusMicrosAtLeast: T0 + (total - 1000) * 10 });
  const get = await timeUsAsync(runs, async (i) => repo.get(SCOPE, `task-${((i * 7919) % total).toString().padStart(8, "0")}`));

  // New tasks' whole lives, one write at a time (each its own commit): create, then updates.
  const writes = 500;
  const lives = Array.from({ length: writes }, (_, i) => taskLife(total + i));
  const acked = async (answer: unknown) => {
    await answer;
    await new Promise<void>((resolve, reject) => repo.afterCommit((error) => (error === undefined ? resolve() : reject(error))));
  };
  const createUs = await timeUsAsync(writes, (i) => acked(repo.create(SCOPE, lives[i]!.task)));
  let updateSum = 0;
  for (let step = 0; step < 3; step++) {
    updateSum += await timeUsAsync(writes, (i) => acked(repo.update(SCOPE, lives[i]!.task.id, step + 1, lives[i]!.changes[step]!)));
  }
  const updateUs = updateSum / 3;
  const rssAfter = process.memoryUsage().rss;
  await repo.close();
  const mb = (n: number) => Math.round(n / 1024 / 1024);
  console.log(
    JSON.stringify({
      tasks: total,
      fileMB: mb(statSync(file).size),
      openMs: +openMs.toFixed(1),
      openWithQuickCheckMs: +openQuickMs.toFixed(1),
      rssBeforeOpenMB: mb(rssBase),
      rssAfterOpenMB: mb(rssOpen),
      rssAfterWorkMB: mb(rssAfter),
      listPageUs: {
        first: +listFirst.toFixed(0),
        firstHistory0: +listFirstNoHistory.toFixed(0),
        deepKeyset: +listDeep.toFixed(0),
        context: +listContext.toFixed(0),
        stateDeep: +listState.toFixed(0),
        sinceLast1000: +listSince.toFixed(0),
      },
      getUs: +get.toFixed(0),
      createUs: +createUs.toFixed(0),
      updateUs: +updateUs.toFixed(0),
    }),
  );
}

async function main(): Promise<void> {
  const measureFile = arg("measure");
  if (measureFile !== undefined) return measure(measureFile, Number(arg("tasks")));

  const sizes = [10_000, Number(arg("tasks") ?? 1_000_000)];
  const dir = arg("dir") ?? mkdtempSync(join(tmpdir(), "a2a-sqlite-bench-"));
  const file = join(dir, "tasks.db");
  try {
    let filled = 0;
    for (const size of sizes) {
      const rate = await fill(file, filled, size);
      filled = size;
      console.log(`filled to ${size} tasks at ${Math.round(rate)} tasks/s (create + 3 updates each, batched commits)`);
      // A fresh process per measurement: open time and RSS as a starting server sees them.
      const out = execFileSync(process.execPath, ["--import", "tsx", process.argv[1]!, "--measure", file, "--tasks", String(size)], {
        encoding: "utf8",
      });
      console.log(out.trim());
      // The measurement wrote 500 tasks past `size`; the next fill continues after them.
      filled = size + 500;
    }
  } finally {
    if (!process.argv.includes("--keep")) rmSync(dir, { recursive: true, force: true });
  }
}

await main();
