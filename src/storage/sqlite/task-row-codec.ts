import { fromBinary } from "@bufbuild/protobuf";
import { MessageSchema, TaskSchema, type Artifact, type Message, type Task } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { encodeMessage as encodeMessageBytes, encodeTask } from "../../codec/task-encoder.js";

/**
 * How a task is split over its row and its history rows. The row blob is the task without
 * history and artifacts; artifacts are a second blob (a Task carrying only `artifacts`, so
 * no extra message type is needed); each history message is its own blob.
 */
export function encodeTaskCore(task: Task): Uint8Array {
  return encodeTask(taskLiteral({ id: task.id, contextId: task.contextId, status: task.status, metadata: task.metadata }));
}

export function encodeArtifacts(artifacts: readonly Artifact[]): Uint8Array | null {
  return artifacts.length === 0 ? null : encodeTask(taskLiteral({ artifacts: [...artifacts] }));
}

export function encodeMessage(message: Message): Uint8Array {
  return encodeMessageBytes(message);
}

/**
 * A Task holding only the given fields, for the static encoder (the same bytes as toBinary of
 * create(TaskSchema, fields), without create()'s reflective copy).
 */
function taskLiteral(fields: Partial<Pick<Task, "id" | "contextId" | "status" | "metadata" | "artifacts">>): Task {
  return { $typeName: "lf.a2a.v1.Task", id: "", contextId: "", status: undefined, artifacts: [], history: [], metadata: undefined, ...fields };
}

export function decodeTaskCore(blob: Uint8Array): Task {
  return fromBinary(TaskSchema, blob);
}

export function decodeArtifacts(blob: Uint8Array | null): Artifact[] {
  return blob === null ? [] : fromBinary(TaskSchema, blob).artifacts;
}

export function decodeMessage(blob: Uint8Array): Message {
  return fromBinary(MessageSchema, blob);
}
