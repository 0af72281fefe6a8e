import type { Artifact, Message, Task, TaskStatus } from "../../gen/es/lf/a2a/v1/a2a_pb.js";

/**
 * What the lifecycle core publishes for every write the repository accepted.
 * `version` is the task's version after the write: a per-task sequence number with no
 * gaps, starting at 1 for "created". Listeners see events of a task in version order.
 */
export type TaskEvent =
  | { readonly kind: "created"; readonly version: number; readonly taskId: string; readonly contextId: string; readonly task: Task }
  | { readonly kind: "status"; readonly version: number; readonly taskId: string; readonly contextId: string; readonly status: TaskStatus }
  | {
      readonly kind: "artifact";
      readonly version: number;
      readonly taskId: string;
      readonly contextId: string;
      readonly artifact: Artifact;
      readonly append: boolean;
      readonly lastChunk: boolean;
    }
  | { readonly kind: "history"; readonly version: number; readonly taskId: string; readonly contextId: string; readonly message: Message };

export type TaskEventListener = (event: TaskEvent) => void;
