import type { JsonObject } from "@bufbuild/protobuf";
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import {
  Role,
  type Artifact,
  type Message,
  type Part,
  type SendMessageResponse,
  type StreamResponse,
  type Task,
  type TaskArtifactUpdateEvent,
  type TaskState,
  type TaskStatus,
  type TaskStatusUpdateEvent,
} from "../../../gen/es/lf/a2a/v1/a2a_pb.js";

/**
 * The messages the core makes on every call, built as object literals. They are exactly what
 * protobuf-es's create() makes for these proto3 types (every scalar and list at its value,
 * message fields undefined when unset), without create()'s walk over the schema, which cost
 * about a tenth of a blocking SendMessage. The generated types keep the literals complete: a
 * field added to the proto that is missing here fails to compile. Input from agents, whose
 * shape is not ours to trust, still goes through create().
 */

export function timestampLiteral(seconds: bigint, nanos: number): Timestamp {
  return { $typeName: "google.protobuf.Timestamp", seconds, nanos };
}

export function taskStatusLiteral(state: TaskState, message: Message | undefined, timestamp: Timestamp): TaskStatus {
  return { $typeName: "lf.a2a.v1.TaskStatus", state, message, timestamp };
}

export function textPartLiteral(text: string): Part {
  return { $typeName: "lf.a2a.v1.Part", content: { case: "text", value: text }, metadata: undefined, filename: "", mediaType: "" };
}

export function agentMessageLiteral(messageId: string, contextId: string, taskId: string, parts: Part[]): Message {
  return { $typeName: "lf.a2a.v1.Message", messageId, contextId, taskId, role: Role.AGENT, parts, metadata: undefined, extensions: [], referenceTaskIds: [] };
}

export function artifactLiteral(fields: {
  artifactId: string;
  name: string;
  description: string;
  parts: Part[];
  metadata: JsonObject | undefined;
  extensions: string[];
}): Artifact {
  // Fields named one by one, not spread: a spread copies through a slower path and may leave the object a shape of its own.
  const { artifactId, name, description, parts, metadata, extensions } = fields;
  return { $typeName: "lf.a2a.v1.Artifact", artifactId, name, description, parts, metadata, extensions };
}

export function newTaskLiteral(id: string, contextId: string, status: TaskStatus, history: Message[]): Task {
  return { $typeName: "lf.a2a.v1.Task", id, contextId, status, artifacts: emptyObjectList(), history, metadata: undefined };
}

/**
 * An empty list with the map of a list of objects. Why: `[]` starts as a list of small integers,
 * a map of its own; a task's first artifact then reached code optimized for tasks that already
 * had artifacts with a map it had not seen, and V8 threw that code away and compiled it again,
 * the whole inlined write path of a stream (~10-60 ms of compiler CPU at the start of a stream).
 */
export function emptyObjectList<T>(): T[] {
  const list: T[] = [undefined as T];
  list.length = 0;
  return list;
}

export function sendMessageResponseLiteral(payload: SendMessageResponse["payload"]): SendMessageResponse {
  return { $typeName: "lf.a2a.v1.SendMessageResponse", payload };
}

export function streamResponseLiteral(payload: StreamResponse["payload"]): StreamResponse {
  return { $typeName: "lf.a2a.v1.StreamResponse", payload };
}

export function statusUpdateLiteral(taskId: string, contextId: string, status: TaskStatus): TaskStatusUpdateEvent {
  return { $typeName: "lf.a2a.v1.TaskStatusUpdateEvent", taskId, contextId, status, metadata: undefined };
}

export function artifactUpdateLiteral(taskId: string, contextId: string, artifact: Artifact, append: boolean, lastChunk: boolean): TaskArtifactUpdateEvent {
  return { $typeName: "lf.a2a.v1.TaskArtifactUpdateEvent", taskId, contextId, artifact, append, lastChunk, metadata: undefined };
}
