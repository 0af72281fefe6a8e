import type { Message, Task } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { LoggedEvent, TaskChange } from "../../lifecycle/index.js";
import type { StagedPush } from "./sqlite-push-store.js";
import { decodeTaskCore } from "./task-row-codec.js";
import type { TaskRow } from "./task-statements.js";

/**
 * A task written in the open batch: its state after the writes applied so far, written to its
 * row once, at commit. Its history holds nothing; the messages appended in this batch wait in
 * `newHistory`.
 */
export interface StagedTask {
  readonly scopeId: number;
  /** The row's key; undefined for a task created in this batch until its row is inserted at commit. */
  pk: number | undefined;
  readonly task: Task;
  /**
   * The artifacts blob as the row holds it (the tail rows come after it), decoded into
   * `task.artifacts` only when an artifact change needs them; kept up to date when a commit
   * writes the blob, as the next rewrite is made from its bytes (artifacts-blob.ts).
   */
  storedArtifacts: Uint8Array | null;
  artifactsDecoded: boolean;
  /** Whether the artifacts blob is in the task's row (as inserted) rather than in `task_artifacts`. */
  artifactsInline: boolean;
  /** Bytes of the artifacts blob as last written, and of the artifact changes kept in `artifact_tail` since. */
  artifactBytes: number;
  tailBytes: number;
  /** This batch's artifact changes to a task that has a row: what its tail row would hold. */
  newArtifactChanges: Array<Extract<TaskChange, { kind: "artifact" }>> | undefined;
  version: number;
  readonly storedHistoryLength: number;
  readonly newHistory: Message[];
  statusChanged: boolean;
  artifactsChanged: boolean;
  /** Set when the task has push configs: the outbox rows its writes owe them. */
  push: StagedPush | undefined;
  /** The changes of this batch as events, for the event log (only while it is on). */
  newEvents: LoggedEvent[] | undefined;
}

/** A task created in this batch: no row yet; `history` is its messages, all new. */
export function newStagedTask(scopeId: number, own: Task, history: Message[]): StagedTask {
  return {
    scopeId,
    pk: undefined,
    task: own,
    storedArtifacts: null,
    artifactsDecoded: true,
    artifactsInline: false, // set at insert
    artifactBytes: 0,
    tailBytes: 0,
    newArtifactChanges: undefined,
    version: 1,
    storedHistoryLength: 0,
    newHistory: history,
    statusChanged: true,
    artifactsChanged: true,
    push: undefined,
    newEvents: undefined,
  };
}

/** A task not staged yet, as its row holds it (its history stays in its rows: the guard only appends). */
export function stagedFromRow(row: TaskRow, push: StagedPush | undefined): StagedTask {
  return {
    scopeId: row.scope_id,
    pk: row.pk,
    task: decodeTaskCore(row.task), // without history: the guard only appends to it
    storedArtifacts: row.artifacts,
    artifactsDecoded: false,
    artifactsInline: row.inline === 1,
    artifactBytes: row.artifacts?.length ?? 0,
    tailBytes: row.tail_bytes,
    newArtifactChanges: undefined,
    version: row.version,
    storedHistoryLength: row.history_len,
    newHistory: [],
    statusChanged: false,
    artifactsChanged: false,
    push,
    newEvents: undefined,
  };
}

/** A task kept from the batch that last committed it, as a new staged entry (its row's state: that commit wrote it). */
export function stagedFromKept(k: StagedTask, push: StagedPush | undefined): StagedTask {
  return {
    scopeId: k.scopeId,
    pk: k.pk,
    task: k.task,
    storedArtifacts: k.storedArtifacts,
    artifactsDecoded: k.artifactsDecoded,
    artifactsInline: k.artifactsInline,
    artifactBytes: k.artifactBytes,
    tailBytes: k.tailBytes,
    newArtifactChanges: undefined,
    version: k.version,
    storedHistoryLength: k.storedHistoryLength + k.newHistory.length,
    newHistory: [],
    statusChanged: false,
    artifactsChanged: false,
    push,
    newEvents: undefined,
  };
}
