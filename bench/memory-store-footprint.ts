/**
 * Memory per stored completed task in MemoryTaskRepository, and the cost of a ListTasks
 * page as the store grows. Run: node --expose-gc --import tsx bench/memory-store-footprint.ts
 *
 * Each task is what a simple exchange leaves behind: one short user message, one short
 * agent status message, one small text artifact, UUID ids, its own context.
 */
import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { ArtifactSchema, MessageSchema, PartSchema, Role, TaskSchema, TaskState, TaskStatusSchema, type Message } from "../gen/es/lf/a2a/v1/a2a_pb.js";
import type { TaskRepository, TaskScope } from "../src/lifecycle/task-repository.js";
import { MemoryTaskRepository } from "../src/storage/memory/memory-task-repository.js";

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error("run with node --expose-gc");
const scope: TaskScope = { tenant: "", principal: "anonymous" };
let clockMs = Date.UTC(2025, 0, 1);

function text(value: string, role: Role, taskId: string, contextId: string): Message {
  const part = create(PartSchema, { content: { case: "text", value } });
  return create(MessageSchema, { messageId: randomUUID(), role, taskId, contextId, parts: [part] });
}

async function storeCompletedTask(repo: TaskRepository): Promise<void> {
  const id = randomUUID();
  const contextId = randomUUID();
  const status = (state: TaskState, message?: Message) => create(TaskStatusSchema, { state, message, timestamp: timestampFromMs(++clockMs) });
  await repo.create(
    scope,
    create(TaskSchema, { id, contextId, status: status(TaskState.SUBMITTED), history: [text("What is 2 + 2?", Role.USER, id, contextId)] }),
  );
  let v = await repo.update(scope, id, 1, { kind: "status", status: status(TaskState.WORKING) });
  const artifact = create(ArtifactSchema, { artifactId: randomUUID(), name: "answer", parts: [create(PartSchema, { content: { case: "text", value: "4" } })] });
  v = await repo.update(scope, id, v, { kind: "artifact", artifact, append: false, lastChunk: true });
  await repo.update(scope, id, v, { kind: "status", status: status(TaskState.COMPLETED, text("The answer is 4.", Role.AGENT, id, contextId)) });
}

function settle(): NodeJS.MemoryUsage {
  for (let i = 0; i < 4; i++) gc!();
  return process.memoryUsage();
}

async function footprint(count: number): Promise<MemoryTaskRepository> {
  const repo = new MemoryTaskRepository();
  const before = settle();
  for (let i = 0; i < count; i++) await storeCompletedTask(repo);
  const after = settle();
  // external includes arrayBuffers (the slabs, and the typed arrays of the store's columns and indexes).
  const perTask = (k: keyof NodeJS.MemoryUsage) => ((after[k] - before[k]) / count).toFixed(0);
  console.log(
    `${count.toLocaleString("en")} completed tasks: heap used ${perTask("heapUsed")} B/task, external ${perTask("external")} B/task, RSS ${perTask("rss")} B/task`,
  );
  return repo;
}

async function pageCost(repo: TaskRepository, label: string): Promise<void> {
  const rounds = 2000;
  const queries = {
    "first page": { pageSize: 50, includeArtifacts: false },
    "page 20": { pageSize: 50, includeArtifacts: false, after: undefined as undefined | { statusMicros: number; taskId: string } },
    "state=COMPLETED": { pageSize: 50, includeArtifacts: false, state: TaskState.COMPLETED },
  };
  let cursor = undefined as undefined | { statusMicros: number; taskId: string };
  for (let i = 0; i < 20; i++) cursor = (await repo.list(scope, { ...queries["first page"], after: cursor })).next;
  queries["page 20"].after = cursor;
  const parts: string[] = [];
  for (const [name, q] of Object.entries(queries)) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < rounds; i++) await repo.list(scope, q);
    parts.push(`${name} ${(Number(process.hrtime.bigint() - start) / rounds / 1000).toFixed(0)} µs`);
  }
  console.log(`  ListTasks page of 50 at ${label}: ${parts.join(", ")}`);
}

for (const count of [1_000, 50_000, 200_000]) {
  const repo = await footprint(count);
  await pageCost(repo, `${count.toLocaleString("en")} tasks`);
  await repo.close();
}
