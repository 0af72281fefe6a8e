import { fromBinary } from "@bufbuild/protobuf";
import { TaskSchema, type Task } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { encodeTask } from "../../codec/task-encoder.js";
import type { LoggedEvent } from "../../lifecycle/event-log.js";

const STATUS = 1;
const ARTIFACT = 2;
const HISTORY = 3;
const APPEND = 1;
const LAST_CHUNK = 2;

/** A row of `task_events` (kind, flags, body) for one event; see migration 3. */
export function encodeEvent(event: LoggedEvent): [kind: number, flags: number, body: Uint8Array | null] {
  switch (event.kind) {
    case "status":
      return [STATUS, 0, encodeTask(taskLiteral({ status: event.status }))];
    case "artifact":
      return [ARTIFACT, (event.append ? APPEND : 0) | (event.lastChunk ? LAST_CHUNK : 0), encodeTask(taskLiteral({ artifacts: [event.artifact] }))];
    case "history":
      return [HISTORY, 0, null]; // the message is in `history`; the row keeps the versions gapless
  }
}

export function decodeEvent(row: { version: number; kind: number; flags: number; body: Uint8Array | null }, taskId: string, contextId: string): LoggedEvent {
  const { version } = row;
  if (row.kind === STATUS) return { kind: "status", version, taskId, contextId, status: fromBinary(TaskSchema, row.body!).status! };
  if (row.kind === ARTIFACT) {
    const artifact = fromBinary(TaskSchema, row.body!).artifacts[0]!;
    return { kind: "artifact", version, taskId, contextId, artifact, append: (row.flags & APPEND) !== 0, lastChunk: (row.flags & LAST_CHUNK) !== 0 };
  }
  // A history event has no stream event; its message is not needed to resume.
  return { kind: "history", version, taskId, contextId, message: undefined! };
}

function taskLiteral(fields: Partial<Pick<Task, "status" | "artifacts">>): Task {
  return { $typeName: "lf.a2a.v1.Task", id: "", contextId: "", status: undefined, artifacts: [], history: [], metadata: undefined, ...fields };
}
