/**
 * CPU cost of the memory store on the blocking SendMessage path, per call:
 * create -> update(WORKING) -> update(COMPLETED, which packs) -> get (takes the just-packed task).
 * Timed with the store already holding N settled tasks (one context each, UUID ids).
 * Run: node --import tsx bench/memory-store-ops.ts   (SIZES=10000,200000 ROUNDS=7 OPS=4000)
 */
import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { MessageSchema, PartSchema, Role, TaskSchema, TaskState, TaskStatusSchema, type Message } from "../gen/es/lf/a2a/v1/a2a_pb.js";
import type { TaskScope } from "../src/lifecycle/task-repository.js";
import { MemoryTaskRepository } from "../src/storage/memory/memory-task-repository.js";

const scope: TaskScope = { tenant: "", principal: "anonymous" };
const sizes = (process.env.SIZES ?? "10000,200000").split(",").map(Number);
const rounds = Number(process.env.ROUNDS ?? 7);
const opsPerRound = Number(process.env.OPS ?? 4000);
let clockMs = Date.UTC(2025, 0, 1);

function text(value: string, role: Role, taskId: string, contextId: string): Message {
  const part = create(PartSchema, { content: { case: "text", value } });
  return create(MessageSchema, { messageId: randomUUID(), role, taskId, contextId, parts: [part] });
}

/** Ids and messages made up front, so the timed loop measures the store only. */
function inputs(count: number) {
  return Array.from({ length: count }, () => {
    const id = randomUUID();
    const contextId = randomUUID();
    return { id, contextId, user: text("What is 2 + 2?", Role.USER, id, contextId), agent: text("4", Role.AGENT, id, contextId) };
  });
}

async function call(repo: MemoryTaskRepository, input: ReturnType<typeof inputs>[number]): Promise<void> {
  const { id, contextId } = input;
  const status = (state: TaskState, message?: Message) => create(TaskStatusSchema, { state, message, timestamp: timestampFromMs(++clockMs) });
  await repo.create(scope, create(TaskSchema, { id, contextId, status: status(TaskState.SUBMITTED), history: [input.user] }));
  const v = await repo.update(scope, id, 1, { kind: "status", status: status(TaskState.WORKING) });
  await repo.update(scope, id, v, { kind: "status", status: status(TaskState.COMPLETED, input.agent) });
  const read = await repo.get(scope, id);
  if (read?.task.status?.state !== TaskState.COMPLETED) throw new Error("bad read");
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

for (const size of sizes) {
  const repo = new MemoryTaskRepository();
  for (const input of inputs(size)) await call(repo, input);
  // Wall time, and CPU time of the process (all threads: GC helpers included), which other
  // work on a shared machine disturbs less.
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const batch = inputs(opsPerRound);
    const start = process.hrtime.bigint();
    const startCpu = process.cpuUsage();
    for (const input of batch) await call(repo, input);
    const used = process.cpuUsage(startCpu);
    wall.push(Number(process.hrtime.bigint() - start) / opsPerRound / 1000);
    cpu.push((used.user + used.system) / opsPerRound);
  }
  const label = `${size.toLocaleString("en")} stored: create+working+completed+get`;
  console.log(`${label} median ${median(wall).toFixed(2)} µs/call wall, ${median(cpu).toFixed(2)} µs/call CPU`);
  await repo.close();
}
