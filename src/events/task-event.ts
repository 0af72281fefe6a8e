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

/**
 * Who gets a task's events: a function, or an object whose `onTaskEvent` method is called. Why
 * the object form: the hub calls its listeners once per event, and V8 optimizes that call for the
 * function it saw. A function made per stream (a closure) is a new function for every stream, so
 * the optimized delivery path was thrown away at each stream's first event and compiled again
 * (tens of ms of compiler CPU per stream); a method of a class is one function for every stream.
 * The hot paths (task-feed.ts) use the object form.
 */
export type TaskEventListener = ((event: TaskEvent) => void) | TaskEventReceiver;

export interface TaskEventReceiver {
  onTaskEvent(event: TaskEvent): void;
}
