import { fromBinary } from "@bufbuild/protobuf";
import {
  MessageSchema,
  TaskArtifactUpdateEventSchema,
  TaskSchema,
  TaskStatusUpdateEventSchema,
  type Task,
  type TaskArtifactUpdateEvent,
  type TaskStatusUpdateEvent,
} from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { encodeArtifactUpdatePayload, encodeMessage, encodeStatusUpdatePayload, encodeTask } from "../../codec/task-encoder.js";
import type { TaskEvent } from "../../events/task-event.js";
import type { TaskChange } from "../../lifecycle/index.js";

/**
 * How a write's event is kept in `a2a_task_events`: a kind number and a protobuf body of a type
 * the protocol already has (a Task for "created", the stream's update events for status and
 * artifacts, a Message for history), so a replica that reads it rebuilds the same TaskEvent the
 * writing replica published.
 */
export const EVENT_KIND = { created: 1, status: 2, artifact: 3, history: 4 } as const;

export interface EventRow {
  readonly kind: number;
  readonly body: Uint8Array;
}

export function createdEventRow(task: Task): EventRow {
  return { kind: EVENT_KIND.created, body: encodeTask(task) };
}

/**
 * Encoded with the project's own encoder (src/codec/task-encoder.ts, tested against toBinary),
 * which writes the event inside a StreamResponse: the row keeps the event itself, the bytes
 * behind that one field's tag and length (no copy: a view of them).
 */
export function changeEventRow(change: TaskChange, taskId: string, contextId: string): EventRow {
  switch (change.kind) {
    case "status": {
      const event = { $typeName: "lf.a2a.v1.TaskStatusUpdateEvent", taskId, contextId, status: change.status } as TaskStatusUpdateEvent;
      return { kind: EVENT_KIND.status, body: onlyFieldBody(encodeStatusUpdatePayload(event)) };
    }
    case "artifact": {
      const { artifact, append, lastChunk } = change;
      const event = { $typeName: "lf.a2a.v1.TaskArtifactUpdateEvent", taskId, contextId, artifact, append, lastChunk } as TaskArtifactUpdateEvent;
      return { kind: EVENT_KIND.artifact, body: onlyFieldBody(encodeArtifactUpdatePayload(event)) };
    }
    case "history":
      return { kind: EVENT_KIND.history, body: encodeMessage(change.message) };
  }
}

/** The body of a message holding one length-delimited field numbered below 16 (a one-byte tag): what follows the tag and the length varint. */
function onlyFieldBody(message: Uint8Array): Uint8Array {
  let at = 1;
  while ((message[at]! & 0x80) !== 0) at++;
  return message.subarray(at + 1);
}

/** The TaskEvent a stored row stands for; undefined for a kind this code does not know (a newer replica's). */
export function eventOfRow(taskId: string, version: number, kind: number, body: Uint8Array): TaskEvent | undefined {
  switch (kind) {
    case EVENT_KIND.created: {
      const task = fromBinary(TaskSchema, body);
      return { kind: "created", version, taskId, contextId: task.contextId, task };
    }
    case EVENT_KIND.status: {
      const update = fromBinary(TaskStatusUpdateEventSchema, body);
      return { kind: "status", version, taskId, contextId: update.contextId, status: update.status! };
    }
    case EVENT_KIND.artifact: {
      const update = fromBinary(TaskArtifactUpdateEventSchema, body);
      return { kind: "artifact", version, taskId, contextId: update.contextId, artifact: update.artifact!, append: update.append, lastChunk: update.lastChunk };
    }
    case EVENT_KIND.history: {
      const message = fromBinary(MessageSchema, body);
      return { kind: "history", version, taskId, contextId: message.contextId, message };
    }
    default:
      return undefined;
  }
}
