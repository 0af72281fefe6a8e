import { cloneArtifact, cloneMessage, cloneTaskStatus } from "../codec/task-clone.js";
import type { TaskChange } from "../lifecycle/index.js";

/**
 * A copy of `change` that a store may keep: the caller may reuse or change its objects once
 * the write returned, and what is stored must not change with them. A `fresh` change is
 * kept as it is.
 */
export function ownChange(change: TaskChange): TaskChange {
  if (change.fresh === true) return change; // nobody else holds or changes these objects
  switch (change.kind) {
    case "status":
      return { kind: "status", status: cloneTaskStatus(change.status) };
    case "artifact":
      return { ...change, artifact: cloneArtifact(change.artifact) };
    case "history":
      return { kind: "history", message: cloneMessage(change.message) };
  }
}
