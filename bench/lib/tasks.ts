import { create } from "@bufbuild/protobuf";
import { TimestampSchema, type Timestamp } from "@bufbuild/protobuf/wkt";
import { MessageSchema, PartSchema, Role, TaskSchema, TaskState, TaskStatusSchema, type Task } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { TaskChange } from "../../src/lifecycle/ports/task-repository.js";

/** Tasks and changes for the store benchmarks, which write to a repository directly. Times in µs. */
export function timestampFromMicros(micros: number): Timestamp {
  const seconds = Math.floor(micros / 1_000_000);
  return create(TimestampSchema, { seconds: BigInt(seconds), nanos: (micros - seconds * 1_000_000) * 1000 });
}

let serial = 0;
const nextId = (prefix: string) => `${prefix}-${(++serial).toString().padStart(6, "0")}`;

export function newTask(options: { readonly micros: number; readonly text: string }): Task {
  const id = nextId("task");
  const contextId = nextId("ctx");
  const parts = [create(PartSchema, { content: { case: "text", value: options.text } })];
  return create(TaskSchema, {
    id,
    contextId,
    status: create(TaskStatusSchema, { state: TaskState.SUBMITTED, timestamp: timestampFromMicros(options.micros) }),
    history: [create(MessageSchema, { messageId: nextId("msg"), role: Role.USER, taskId: id, contextId, parts })],
  });
}

export function statusChange(state: TaskState, micros: number): TaskChange {
  return { kind: "status", status: create(TaskStatusSchema, { state, timestamp: timestampFromMicros(micros) }) };
}
