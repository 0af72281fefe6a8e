/**
 * encodeTask (src/codec/task-encoder.ts) against protobuf-es's toBinary(TaskSchema, …) on a
 * typical completed task. Run: node --import tsx bench/task-encoder.ts [encodes-per-round]
 *
 * The task is what a simple blocking exchange leaves behind: a user message, the agent's reply
 * as the status message and also the last history entry, one short text artifact, UUID ids,
 * timestamps. Timed with protobuf-es's standard text encoding and with the one the server
 * installs at start. Rounds alternate between the two encoders and the best round of each
 * counts, since the machine's cores are shared; read the ratio, not the absolute figures.
 */
import { randomUUID } from "node:crypto";
import { create, toBinary } from "@bufbuild/protobuf";
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
import { installProtobufTextEncoding } from "../src/protocol/protobuf-text-encoding.js";
import { encodeTask } from "../src/codec/task-encoder.js";

const perRound = Number(process.argv[2] ?? 20_000);
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

/** Best µs per encode over the rounds. */
function time(encode: (task: Task) => Uint8Array, tasks: Task[]): number {
  const start = process.hrtime.bigint();
  let bytes = 0;
  for (let i = 0; i < perRound; i++) bytes += encode(tasks[i % tasks.length]!).byteLength;
  const micros = Number(process.hrtime.bigint() - start) / 1000 / perRound;
  if (bytes === 0) throw new Error("nothing encoded");
  return micros;
}

function compare(label: string, tasks: Task[]): void {
  for (const task of tasks) {
    if (!Buffer.from(encodeTask(task)).equals(toBinary(TaskSchema, task))) throw new Error("encodeTask differs from toBinary");
  }
  const viaToBinary = (task: Task) => toBinary(TaskSchema, task);
  for (let i = 0; i < 2; i++) time(viaToBinary, tasks), time(encodeTask, tasks); // warm-up
  let reflective = Infinity;
  let encoder = Infinity;
  for (let i = 0; i < rounds; i++) {
    reflective = Math.min(reflective, time(viaToBinary, tasks));
    encoder = Math.min(encoder, time(encodeTask, tasks));
  }
  console.log(`${label}: toBinary ${reflective.toFixed(2)} µs, encodeTask ${encoder.toFixed(2)} µs per encode, ${(reflective / encoder).toFixed(1)}x faster`);
}

const tasks = Array.from({ length: 64 }, typicalTask);
console.log(`typical completed task: ${encodeTask(tasks[0]!).byteLength} bytes; ${rounds} rounds of ${perRound} encodes, best round`);
compare("standard text encoding", tasks);
installProtobufTextEncoding();
compare("server text encoding  ", tasks);
