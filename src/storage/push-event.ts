import { create, toBinary } from "@bufbuild/protobuf";
import { StreamResponseSchema, type Task } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { TaskChange } from "../lifecycle/task-repository.js";

/**
 * The StreamResponse a webhook gets for one write, in protobuf binary, as a store keeps it in
 * its outbox: a status or artifact update. A history write (a client's follow-up) has
 * no event of its own, as on streams: undefined.
 */
export function pushEventOf(taskId: string, contextId: string, change: TaskChange): Uint8Array | undefined {
  switch (change.kind) {
    case "status":
      return toBinary(
        StreamResponseSchema,
        create(StreamResponseSchema, { payload: { case: "statusUpdate", value: { taskId, contextId, status: change.status } } }),
      );
    case "artifact":
      return toBinary(
        StreamResponseSchema,
        create(StreamResponseSchema, {
          payload: { case: "artifactUpdate", value: { taskId, contextId, artifact: change.artifact, append: change.append, lastChunk: change.lastChunk } },
        }),
      );
    case "history":
      return undefined;
  }
}

/** The snapshot a config made inline gets first: the task as it is (A-10, as a stream's first event). */
export function pushSnapshotOf(task: Task): Uint8Array {
  return toBinary(StreamResponseSchema, create(StreamResponseSchema, { payload: { case: "task", value: task } }));
}
