import type { Artifact, Message, TaskStatus } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";

/**
 * One guarded write. The repository applies it atomically or refuses it whole.
 * - status: a transition of the state machine (WORKING -> WORKING allowed for progress);
 *   `status.timestamp` is set by the caller and kept as given; a `status.message` is
 *   also appended to the task's history.
 * - artifact: append=false adds the artifact or replaces the one with the same id;
 *   append=true adds its parts to the artifact with the same id, or starts it.
 *   Refused on a terminal task, or when the artifact has no id or no parts.
 * - history: appends a message (the client's follow-up) without changing state.
 *   Refused on a terminal task.
 */
export type TaskChange =
  | { readonly kind: "status"; readonly status: TaskStatus; readonly fresh?: boolean }
  | { readonly kind: "artifact"; readonly artifact: Artifact; readonly append: boolean; readonly lastChunk: boolean; readonly fresh?: boolean }
  | { readonly kind: "history"; readonly message: Message; readonly fresh?: boolean };
// `fresh`: every object in the change was made for this write and none is changed afterwards
// (nor shared with the agent), so a store may keep them as they are instead of copying them.
