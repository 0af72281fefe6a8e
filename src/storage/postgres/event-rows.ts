import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { MessageSchema, TaskArtifactUpdateEventSchema, TaskSchema, TaskStatusUpdateEventSchema, type Task } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { encodeMessage, encodeTask } from "../../codec/task-encoder.js";
import type { TaskEvent } from "../../events/task-event.js";
import type { TaskChange } from "../../lifecycle/task-repository.js";

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

export function changeEventRow(change: TaskChange, taskId: string, contextId: string): EventRow {
  switch (change.kind) {
    case "status":
      return {
        kind: EVENT_KIND.status,
        body: toBinary(TaskStatusUpdateEventSchema, create(TaskStatusUpdateEventSchema, { taskId, contextId, status: change.status })),
      };
    case "artifact":
      return {
        kind: EVENT_KIND.artifact,
        body: toBinary(
          TaskArtifactUpdateEventSchema,
          create(TaskArtifactUpdateEventSchema, { taskId, contextId, artifact: change.artifact, append: change.append, lastChunk: change.lastChunk }),
        ),
      };
    case "history":
      return { kind: EVENT_KIND.history, body: encodeMessage(change.message) };
  }
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
