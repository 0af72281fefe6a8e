import type { Artifact, Task } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { artifactLiteral } from "../model/message-literals.js";
import { canTransition, isTerminal, stateName } from "../model/task-state.js";
import { IllegalTransitionError, InvalidChangeError, type TaskChange } from "../ports/task-repository.js";

/**
 * The one guard every repository applies before a write: checks `change` against the
 * task's current state and applies it to `task` in place. Throws, and leaves `task`
 * untouched, when the change breaks the rules. Storage-agnostic so that every
 * implementation enforces exactly the same machine.
 */
export function applyChange(task: Task, change: TaskChange): void {
  const from = task.status?.state;
  if (from === undefined) throw new InvalidChangeError(task.id, "stored task has no status");
  switch (change.kind) {
    case "status": {
      const to = change.status.state;
      if (!canTransition(from, to)) {
        const why = isTerminal(from)
          ? `${stateName(from)} is terminal; the task never changes again`
          : `${stateName(from)} -> ${stateName(to)} is not a legal transition`;
        throw new IllegalTransitionError(task.id, from, to, why);
      }
      task.status = change.status;
      if (change.status.message) task.history.push(change.status.message);
      return;
    }
    case "artifact": {
      refuseIfTerminal(task, "an artifact update");
      checkArtifact(task.id, change.artifact);
      mergeArtifact(task, change.artifact, change.append);
      return;
    }
    case "history": {
      refuseIfTerminal(task, "a message");
      task.history.push(change.message);
      return;
    }
  }
}

function refuseIfTerminal(task: Task, what: string): void {
  const state = task.status!.state;
  if (isTerminal(state)) {
    throw new IllegalTransitionError(task.id, state, undefined, `${stateName(state)} is terminal; ${what} is refused`);
  }
}

function checkArtifact(taskId: string, artifact: Artifact): void {
  if (artifact.artifactId === "") throw new InvalidChangeError(taskId, "artifact has no artifact_id");
  const parts = artifact.parts;
  if (parts.length === 0) throw new InvalidChangeError(taskId, `artifact ${artifact.artifactId} has no parts`);
  for (let i = 0; i < parts.length; i++) {
    if (parts[i]!.content.case === undefined) throw new InvalidChangeError(taskId, `artifact ${artifact.artifactId} part ${i} has no content`);
  }
}

/**
 * append=false replaces an artifact of the same id; append=true extends it, or starts it.
 * The task keeps its own artifact object with its own parts list (the change's artifact is shared
 * with its event), so an append pushes onto that list in place: appending a chunk costs the
 * chunk, not a copy of every part before it (a 100,000-chunk answer was quadratic).
 */
export function mergeArtifact(task: Task, artifact: Artifact, append: boolean): void {
  const index = indexOfArtifact(task.artifacts, artifact.artifactId);
  if (index < 0) {
    // A one-item literal for the first: an empty array's first push reserves 17 slots.
    if (task.artifacts.length === 0) task.artifacts = [ownArtifact(artifact)];
    else task.artifacts.push(ownArtifact(artifact));
  } else if (!append) {
    task.artifacts[index] = ownArtifact(artifact);
  } else {
    const existing = task.artifacts[index]!;
    const parts = artifact.parts;
    for (let i = 0; i < parts.length; i++) existing.parts.push(parts[i]!);
    if (artifact.metadata !== undefined) existing.metadata = artifact.metadata;
    if (artifact.extensions.length > 0) existing.extensions = [...new Set([...existing.extensions, ...artifact.extensions])];
  }
}

/** The task's own copy of an artifact: the same fields, its own parts list (parts themselves are never changed). */
function ownArtifact(artifact: Artifact): Artifact {
  const parts = artifact.parts.slice();
  if (artifact.$unknown !== undefined) return { ...artifact, parts };
  // Fields named one by one, not spread: a spread copy got a map of its own, which changed from
  // stream to stream, and each change threw away the stream path's optimized code (recompiled:
  // tens of ms of compiler CPU for a stream of a few thousand chunks).
  const { artifactId, name, description, metadata, extensions } = artifact;
  return artifactLiteral({ artifactId, name, description, parts, metadata, extensions });
}

function indexOfArtifact(artifacts: readonly Artifact[], artifactId: string): number {
  for (let i = 0; i < artifacts.length; i++) if (artifacts[i]!.artifactId === artifactId) return i;
  return -1;
}
