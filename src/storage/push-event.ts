import type { Task } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { encodeArtifactUpdatePayload, encodeStatusUpdatePayload, encodeTaskPayload } from "../codec/task-encoder.js";
import type { TaskChange } from "../lifecycle/task-repository.js";

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
