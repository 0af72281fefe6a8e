/**
 * cloneTask / cloneTaskStatus (src/codec/task-clone.ts) against protobuf-es's reflective
 * clone(Schema, …). Run: node --import tsx bench/task-clone.ts [clones-per-round]
 *
 * The task is what a simple blocking exchange leaves behind: a user message, the agent's reply
 * as the status message and also the last history entry, one short text artifact, UUID ids,
 * timestamps; the status is that task's COMPLETED status with its message (what the memory
 * store copies per status change). Rounds alternate between the two ways and the best round
 * of each counts, since the machine's cores are shared; read the ratio, not the absolute figures.
 */
import { randomUUID } from "node:crypto";
import { clone, create, equals, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import {
  ArtifactSchema,
  MessageSchema,
  PartSchema,
  Role,
  TaskSchema,
  TaskState,
  TaskStatusSchema,
  type Message,
  type Task,
} from "../gen/es/lf/a2a/v1/a2a_pb.js";
import { cloneTask, cloneTaskStatus } from "../src/codec/task-clone.js";

const perRound = Number(process.argv[2] ?? 50_000);
const rounds = 7;

function typicalTask(): Task {
  const id = randomUUID();
  const contextId = randomUUID();
  const text = (value: string, role: Role): Message =>
    create(MessageSchema, { messageId: randomUUID(), role, taskId: id, contextId, parts: [create(PartSchema, { content: { case: "text", value } })] });
  const user = text("What is 2 + 2?", Role.USER);
  const reply = text("The answer is 4.", Role.AGENT);
  return create(TaskSchema, {
    id,
    contextId,
    status: create(TaskStatusSchema, { state: TaskState.COMPLETED, message: reply, timestamp: timestampFromMs(Date.UTC(2025, 0, 1, 12)) }),
    artifacts: [create(ArtifactSchema, { artifactId: randomUUID(), name: "answer", parts: [create(PartSchema, { content: { case: "text", value: "4" } })] })],
    history: [user, reply],
  });
}

/** µs per clone in one round; the copies are kept in a ring so they are not optimized away. */
function time<T>(copy: (value: T) => T, values: T[], sink: T[]): number {
  const start = process.hrtime.bigint();
  for (let i = 0; i < perRound; i++) sink[i & 1023] = copy(values[i % values.length]!);
  return Number(process.hrtime.bigint() - start) / 1000 / perRound;
}

function compare<Desc extends DescMessage>(
  label: string,
  schema: Desc,
  values: MessageShape<Desc>[],
  cloneStatic: (value: MessageShape<Desc>) => MessageShape<Desc>,
): void {
  for (const value of values) {
    if (!equals(schema, cloneStatic(value), clone(schema, value))) throw new Error(`${label}: static clone differs from clone()`);
  }
  const reflective = (value: MessageShape<Desc>) => clone(schema, value);
  const sink: MessageShape<Desc>[] = [];
  for (let i = 0; i < 2; i++) time(reflective, values, sink), time(cloneStatic, values, sink); // warm-up
  let slow = Infinity;
  let fast = Infinity;
  for (let i = 0; i < rounds; i++) {
    slow = Math.min(slow, time(reflective, values, sink));
    fast = Math.min(fast, time(cloneStatic, values, sink));
  }
  console.log(`${label}: clone() ${slow.toFixed(2)} µs, static ${fast.toFixed(2)} µs per clone, ${(slow / fast).toFixed(1)}x faster`);
}

const tasks = Array.from({ length: 64 }, typicalTask);
console.log(`${rounds} rounds of ${perRound} clones, best round`);
compare("typical completed task  ", TaskSchema, tasks, cloneTask);
compare(
  "TaskStatus with message ",
  TaskStatusSchema,
  tasks.map((t) => t.status!),
  cloneTaskStatus,
);
