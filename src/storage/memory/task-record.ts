import type { Task, TaskState } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { PackedTask } from "./packed-task.js";

/**
 * One stored task. Settled tasks (terminal or interrupted) rarely change, so their body
 * is kept packed; `contextId` is the scope's one shared copy of that string.
 */
export interface TaskRecord {
  readonly id: string;
  readonly contextId: string;
  state: TaskState;
  /** Status timestamp in microseconds. */
  micros: number;
  version: number;
  body: Task | PackedTask;
  removed: boolean;
}

/** True when `record` comes strictly after `cursor` in ListTasks order (newest first, then id descending). */
export function isAfter(record: TaskRecord, cursor: { statusMicros: number; taskId: string }): boolean {
  return record.micros < cursor.statusMicros || (record.micros === cursor.statusMicros && record.id < cursor.taskId);
}

/** ListTasks order as a sort comparator. */
export function newestFirst(a: TaskRecord, b: TaskRecord): number {
  if (a.micros !== b.micros) return b.micros - a.micros;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}
