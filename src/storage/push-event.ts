import type { Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { encodeArtifactUpdatePayload, encodeStatusUpdatePayload, encodeTaskPayload } from "../codec/task-encoder.js";
import type { TaskChange } from "../lifecycle/index.js";
import { webhookBody } from "../push/body-encoding.js";

/**
 * The StreamResponse a webhook gets for one write, in protobuf binary, as a store keeps it in
 * its outbox: a status or artifact update. A history write (a client's follow-up) has
 * no event of its own, as on streams: undefined. Encoded by the static encoders (the bytes
 * toBinary gives, tested in test/codec), from plain event objects: one per write of a task with
 * configs, where protobuf-es's create and reflective toBinary cost more than the rest of it.
 */
export function pushEventOf(taskId: string, contextId: string, change: TaskChange): Uint8Array | undefined {
  switch (change.kind) {
    case "status":
      return encodeStatusUpdatePayload({ $typeName: "lf.a2a.v1.TaskStatusUpdateEvent", taskId, contextId, status: change.status, metadata: undefined });
    case "artifact":
      return encodeArtifactUpdatePayload({
        $typeName: "lf.a2a.v1.TaskArtifactUpdateEvent",
        taskId,
        contextId,
        artifact: change.artifact,
        append: change.append,
        lastChunk: change.lastChunk,
        metadata: undefined,
      });
    case "history":
      return undefined;
  }
}

/** The snapshot a config made inline gets first: the task as it is (A-10, as a stream's first event). */
export function pushSnapshotOf(task: Task): Uint8Array {
  return encodeTaskPayload(task);
}

/**
 * What an outbox entry carries for one write: the event in protobuf binary (the durable record)
 * and the webhook body made from those bytes (its ProtoJSON, A-9, webhookBody), so that delivery
 * from the handed-over entries sends it as it is. `body` is undefined when toJsonString refuses
 * the event (a NaN in metadata, a timestamp out of range): delivery then makes it from `event`,
 * and fails as before.
 * Never throws: it runs inside the task write.
 */
export interface PushPayload {
  readonly event: Uint8Array;
  readonly body: string | undefined;
}

export function pushPayloadOf(taskId: string, contextId: string, change: TaskChange): PushPayload | undefined {
  switch (change.kind) {
    case "status": {
      const value: TaskStatusUpdateEvent = { $typeName: "lf.a2a.v1.TaskStatusUpdateEvent", taskId, contextId, status: change.status, metadata: undefined };
      return withBody(encodeStatusUpdatePayload(value));
    }
    case "artifact": {
      const value: TaskArtifactUpdateEvent = {
        $typeName: "lf.a2a.v1.TaskArtifactUpdateEvent",
        taskId,
        contextId,
        artifact: change.artifact,
        append: change.append,
        lastChunk: change.lastChunk,
        metadata: undefined,
      };
      return withBody(encodeArtifactUpdatePayload(value));
    }
    case "history":
      return undefined;
  }
}

/** The snapshot's payload (see pushSnapshotOf and pushPayloadOf). */
export function pushSnapshotPayloadOf(task: Task): PushPayload {
  return withBody(encodeTaskPayload(task));
}

/** The event and its webhook body (undefined where toJsonString refuses the event: delivery fails on it as before). */
function withBody(event: Uint8Array): PushPayload {
  try {
    return { event, body: webhookBody(event) };
  } catch {
    return { event, body: undefined };
  }
}
