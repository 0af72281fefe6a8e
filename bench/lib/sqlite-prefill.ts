/**
 * Fills a SQLite task store file with completed tasks, fast enough for a million. The first
 * 1,000 go through the repository's own write path (create, then WORKING, one artifact,
 * COMPLETED: three guarded updates), 2,500 per transaction; the rest are rows like the first
 * one's, written directly with the repository's row codec (each with its own id, context,
 * status time and messages), 10,000 per transaction; the schema's triggers keep the
 * ListTasks counters. Run in its own process, before a server starts on the file (one
 * process per data file):
 *
 *   node --import tsx bench/lib/sqlite-prefill.ts --file <tasks.sqlite> --from 0 --to 1000000
 *
 * Tasks belong to the scope an unauthenticated gRPC caller gets (tenant "", principal
 * "anonymous"), ten per context, with status times in the past (one every 10 µs ending
 * now), so that tasks a benchmark creates afterwards are the newest. Prints { tasks, seconds }.
 */
import { performance } from "node:perf_hooks";
import { create } from "@bufbuild/protobuf";
import { TimestampSchema } from "@bufbuild/protobuf/wkt";
import type { Database } from "better-sqlite3";
import { ArtifactSchema, MessageSchema, PartSchema, Role, TaskSchema, TaskState, TaskStatusSchema, type Task } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { TaskChange, TaskScope } from "../../src/lifecycle/ports/task-repository.js";
import { openSqliteTaskRepository } from "../../src/storage/sqlite/sqlite-task-repository.js";
import { decodeMessage, decodeTaskCore, encodeMessage, encodeTaskCore } from "../../src/storage/sqlite/task-row-codec.js";

const SCOPE: TaskScope = { tenant: "", principal: "anonymous" };
const BATCH = 2_500;
const THROUGH_REPOSITORY = 1_000;
const DIRECT_BATCH = 10_000;

function arg(name: string): string {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0 || process.argv[i + 1] === undefined) throw new Error(`--${name} is required`);
  return process.argv[i + 1]!;
}

const text = (t: string) => create(PartSchema, { content: { case: "text", value: t } });

/** A Timestamp from integer µs since the epoch. */
const timestampFromMicros = (us: number) => create(TimestampSchema, { seconds: BigInt(Math.floor(us / 1e6)), nanos: (us % 1e6) * 1000 });

function taskLife(i: number, t0Us: number): { task: Task; changes: TaskChange[] } {
  const id = `prefill-${i.toString().padStart(8, "0")}`;
  const contextId = `prefill-ctx-${Math.floor(i / 10)}`;
  const at = (step: number) => timestampFromMicros(t0Us + i * 10 + step);
  const task = create(TaskSchema, {
    id,
    contextId,
    status: create(TaskStatusSchema, { state: TaskState.SUBMITTED, timestamp: at(0) }),
    history: [create(MessageSchema, { messageId: `u-${i}`, role: Role.USER, taskId: id, contextId, parts: [text(`question number ${i}`)] })],
  });
  const changes: TaskChange[] = [
    { kind: "status", status: create(TaskStatusSchema, { state: TaskState.WORKING, timestamp: at(1) }) },
    { kind: "artifact", artifact: create(ArtifactSchema, { artifactId: "answer", name: "answer", parts: [text("4")] }), append: false, lastChunk: true },
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

interface Row {
  pk: number;
  scope_id: number;
  state: number;
  version: number;
  history_len: number;
  task: Uint8Array;
  artifacts: Uint8Array | null;
}

/** Rows shaped like task 0's (as the repository wrote it), for tasks from..to-1. */
function fillDirect(db: Database, from: number, to: number, t0Us: number): void {
  const template = db.prepare("SELECT pk, scope_id, state, version, history_len, task, artifacts FROM tasks WHERE id = ?").get(taskLife(0, t0Us).task.id) as
    | Row
    | undefined;
  if (!template) throw new Error("prefill: the first task must be written through the repository first (--from 0)");
  const history = (
    db.prepare("SELECT seq, message FROM history WHERE task_pk = ? ORDER BY seq").all(template.pk) as { seq: number; message: Uint8Array }[]
  ).map((h) => ({ seq: h.seq, message: decodeMessage(h.message) }));
  const core = decodeTaskCore(template.task);
  const insertTask = db.prepare(
    "INSERT INTO tasks (id, scope_id, context_id, state, status_micros, version, history_len, task, artifacts) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
  );
  const insertHistory = db.prepare("INSERT INTO history (task_pk, seq, message) VALUES (?, ?, ?)");
  for (let start = from; start < to; start += DIRECT_BATCH) {
    const end = Math.min(to, start + DIRECT_BATCH);
    db.transaction(() => {
      for (let i = start; i < end; i++) {
        const { task } = taskLife(i, t0Us);
        const micros = t0Us + i * 10 + 2;
        core.id = task.id;
        core.contextId = task.contextId;
        core.status!.timestamp = timestampFromMicros(micros);
        if (core.status!.message) Object.assign(core.status!.message, { taskId: task.id, contextId: task.contextId, messageId: `a-${i}` });
        const { lastInsertRowid } = insertTask.run(
          task.id,
          template.scope_id,
          task.contextId,
          template.state,
          micros,
          template.version,
          template.history_len,
          encodeTaskCore(core),
          template.artifacts,
        );
        for (const h of history) {
          Object.assign(h.message, { taskId: task.id, contextId: task.contextId, messageId: `${h.message.messageId.split("-")[0]}-${i}` });
          insertHistory.run(lastInsertRowid, h.seq, encodeMessage(h.message));
        }
      }
    })();
  }
}

async function main(): Promise<void> {
  const file = arg("file");
  const from = Number(arg("from"));
  const to = Number(arg("to"));
  // Status times: one task every 10 µs, the last one a second ago.
  const t0Us = (Date.now() - 1_000) * 1000 - to * 10;
  const repo = openSqliteTaskRepository({ file });
  const db = (repo as unknown as { db: Database }).db; // bench only: the direct fill below
  const started = performance.now();
  const viaRepository = Math.min(to, Math.max(from, THROUGH_REPOSITORY));
  for (let start = from; start < viaRepository; start += BATCH) {
    const end = Math.min(viaRepository, start + BATCH);
    const results: unknown[] = [];
    // Written within one turn: the store applies each write at once and commits them in batches.
    for (let i = start; i < end; i++) {
      const { task, changes } = taskLife(i, t0Us);
      results.push(repo.create(SCOPE, task));
      changes.forEach((change, n) => results.push(repo.update(SCOPE, task.id, n + 1, change)));
    }
    await Promise.all(results);
  }
  if (viaRepository < to) fillDirect(db, viaRepository, to, t0Us);
  const seconds = (performance.now() - started) / 1000;
  await repo.close();
  process.stdout.write(`${JSON.stringify({ tasks: to - from, seconds })}\n`);
}

await main();
