import type { Timestamp } from "@bufbuild/protobuf/wkt";
import type { Task } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";

/** A Timestamp as microseconds since the epoch, the unit of ListTasks cursors and filters. */
export function timestampMicros(timestamp: Timestamp | undefined): number {
  if (timestamp === undefined) return 0;
  return Number(timestamp.seconds) * 1_000_000 + Math.floor(timestamp.nanos / 1000);
}

/** The task's status timestamp in microseconds; a task without one sorts as the epoch. */
export function statusMicros(task: Task): number {
  return timestampMicros(task.status?.timestamp);
}
