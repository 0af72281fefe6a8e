/**
 * The push benchmark at the store only: what one delivery's task write costs on SQLite
 * against the memory store, without gRPC, agents or HTTP. The same write pattern as
 * bench/agents/push-agent.mjs: 100 tasks, each created with an inline config (its snapshot in
 * the outbox), then status and artifact updates in turn and a final COMPLETED, every task
 * writing once per round (one round = one burst of 100 writes, as the paced phase's agents do
 * every 500 ms). Each outbox entry handed over is "delivered" a turn later (removed), as the
 * push service does. Rounds alternate between the stores; CPU (user + system) per write.
 *
 *   npm run bench -- push:store [--rounds=N] [--gap-ms=N] [--group=N]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { type Message, MessageSchema, Role, TaskPushNotificationConfigSchema, TaskSchema, TaskState, TaskStatusSchema } from "../gen/es/lf/a2a/v1/a2a_pb.js";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import type { TaskChange, TaskRepository } from "../src/lifecycle/ports/task-repository.js";
import type { PushConfigStore } from "../src/push/ports/push-config-store.js";
import type { PushOutbox } from "../src/push/ports/push-outbox.js";
import { MemoryTaskRepository } from "../src/storage/memory/memory-task-repository.js";
import { openSqliteTaskRepository } from "../src/storage/sqlite/sqlite-task-repository.js";

const TASKS = 100;
const UPDATES = 10;
const scope = { tenant: "", principal: "bench" };

type Store = TaskRepository & { push: PushConfigStore & PushOutbox };

function message(text: string, serial: number): Message {
  return create(MessageSchema, { messageId: `m-${serial}`, role: Role.AGENT, parts: [{ content: { case: "text", value: text } }] });
}

let serial = 0;
function changeOf(i: number, last: boolean, taskId: string, contextId: string): TaskChange {
  const text = `e${i}@${(performance.timeOrigin + performance.now()).toFixed(3)}`;
  if (last || i % 2 === 0) {
    const status = create(TaskStatusSchema, {
      state: last ? TaskState.COMPLETED : TaskState.WORKING,
      timestamp: timestampFromMs(Date.now()),
      message: { ...message(text, ++serial), taskId, contextId },
    });
    return { kind: "status", status, fresh: true };
  }
  return {
    kind: "artifact",
    artifact: {
      $typeName: "lf.a2a.v1.Artifact",
      artifactId: `a${i}`,
      name: "",
      description: "",
      parts: message(text, 0).parts,
      metadata: undefined,
      extensions: [],
    },
    append: false,
    lastChunk: false,
    fresh: true,
  };
}

const turn = () => new Promise((r) => setImmediate(r));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One run on a fresh store: µs of CPU per update write (creates excluded), and how many entries were handed over. */
async function runOnce(kind: "sqlite" | "memory", gapMs: number, group: number): Promise<{ perWrite: number; entries: number }> {
  const dir = mkdtempSync(join(tmpdir(), "a2a-push-store-"));
  const eventLog = { retentionMs: 600_000 };
  const store = (kind === "sqlite"
    ? openSqliteTaskRepository({ file: join(dir, "tasks.sqlite"), eventLog, commitWindowMs: 1 })
    : new MemoryTaskRepository({ eventLog })) as unknown as Store;
  let entries = 0;
  store.push.onAdded((_added, added) => {
    for (const entry of added ?? []) {
      entries++;
      setImmediate(() => void store.push.remove(entry.seq)); // "delivered"
    }
  });
  const ids: Array<{ id: string; contextId: string; version: number }> = [];
  for (let t = 0; t < TASKS; t++) {
    const id = `t-${String(t).padStart(4, "0")}-${process.hrtime.bigint()}`;
    const contextId = `c-${t}`;
    const task = create(TaskSchema, {
      id,
      contextId,
      status: { state: TaskState.SUBMITTED, timestamp: timestampFromMs(Date.now()) },
      history: [{ ...message("push 10 500", ++serial), role: Role.USER, taskId: id, contextId }],
    });
    store.create(scope, task);
    const config = create(TaskPushNotificationConfigSchema, { taskId: id, id: `cfg-${t}`, url: "http://127.0.0.1:9/hook", token: "bench-token" });
    await store.push.put(scope, config, { maxPerTask: 10, snapshot: true });
    ids.push({ id, contextId, version: 1 });
  }
  await sleep(50);
  const before = process.cpuUsage();
  for (let i = 0; i <= UPDATES; i++) {
    for (let from = 0; from < ids.length; from += group) {
      // `group` tasks write in the same turn: the paced phase's agents wake in small groups, a few per commit.
      for (const t of ids.slice(from, from + group)) t.version = store.update(scope, t.id, t.version, changeOf(i, i === UPDATES, t.id, t.contextId)) as number; // both stores answer within the call
      await turn();
      if (group < ids.length) await sleep(2); // past the commit window: the next group commits on its own
    }
    await sleep(gapMs);
  }
  await sleep(20);
  const used = process.cpuUsage(before);
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  return { perWrite: (used.user + used.system) / (TASKS * (UPDATES + 1)), entries };
}

export async function runPushStore(args: readonly string[]): Promise<string> {
  const rounds = Number(args.find((a) => a.startsWith("--rounds="))?.slice(9) ?? 10);
  const gapMs = Number(args.find((a) => a.startsWith("--gap-ms="))?.slice(9) ?? 20);
  const group = Number(args.find((a) => a.startsWith("--group="))?.slice(8) ?? TASKS);
  const results: Record<"sqlite" | "memory", number[]> = { sqlite: [], memory: [] };
  await runOnce("sqlite", gapMs, group); // warm-up of both code paths
  await runOnce("memory", gapMs, group);
  for (let r = 0; r < rounds; r++) {
    for (const kind of r % 2 === 0 ? (["sqlite", "memory"] as const) : (["memory", "sqlite"] as const))
      results[kind].push((await runOnce(kind, gapMs, group)).perWrite);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const line = (k: "sqlite" | "memory") => `${k}: median ${median(results[k]).toFixed(1)} µs CPU per write (${results[k].map((x) => x.toFixed(0)).join(" ")})`;
  console.log(JSON.stringify((globalThis as { __pushsq?: unknown }).__pushsq));
  return [
    `push-store: ${TASKS} tasks with a config, ${UPDATES + 1} writes each, ${group} writes a turn, a round of ${TASKS} writes per ${gapMs} ms, ${rounds} interleaved rounds`,
    line("sqlite"),
    line("memory"),
    `SQLite extra per write: ${(median(results.sqlite) - median(results.memory)).toFixed(1)} µs`,
  ].join("\n");
}
