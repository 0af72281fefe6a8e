import { A2AError } from "../model/errors.js";
import type { TaskEvent } from "../../events/task-event.js";
import type { TaskChange } from "./task-change.js";
import type { TaskScope } from "./task-scope.js";

/** An event kept for resuming streams: every accepted change after "created", under its version. */
export type LoggedEvent = Exclude<TaskEvent, { kind: "created" }>;

/**
 * What `readAfter` found:
 * - events: every change after the cursor's version, in version order with no gap, up to the
 *   task's current version (`state` is the task's state at that version); empty when the
 *   cursor is the current version;
 * - expired: the log no longer holds the change right after the cursor (retention, or the
 *   memory cap), or the cursor is ahead of the task; the client falls back to a plain subscribe;
 * - not-found: no such task in this scope.
 */
export type EventLogRead =
  | { readonly kind: "events"; readonly events: readonly LoggedEvent[]; readonly state: number }
  | { readonly kind: "expired" }
  | { readonly kind: "not-found" };

/**
 * Where a store keeps the events of its tasks for resuming streams (ruling A-33). The store
 * records each accepted change under its version in the same commit as the change itself, so
 * what the log holds and what clients were shown never disagree, also after a restart.
 * Implementations: src/storage/memory (a bounded ring), src/storage/sqlite (a table).
 * Async first: a networked store (PostgreSQL) answers later.
 */
export interface TaskEventLog {
  /** How long events are kept, ms. */
  readonly retentionMs: number;
  readAfter(scope: TaskScope, taskId: string, afterVersion: number): Promise<EventLogRead>;
}

/** What a store is told about its event log: how long to keep events (and, in memory, how many). */
export interface EventLogOptions {
  readonly retentionMs: number;
  /** Memory store: events kept across all tasks; the oldest go first. */
  readonly maxEvents?: number;
  /** Memory store: about the bytes the kept events may weigh together; the oldest go first. */
  readonly maxBytes?: number;
}

/** A logged event is the published event of the same change: one shape for the hub and the log. */
export function eventAtVersion(taskId: string, contextId: string, version: number, change: TaskChange): LoggedEvent {
  switch (change.kind) {
    case "status":
      return { kind: "status", version, taskId, contextId, status: change.status };
    case "artifact":
      return { kind: "artifact", version, taskId, contextId, artifact: change.artifact, append: change.append, lastChunk: change.lastChunk };
    case "history":
      return { kind: "history", version, taskId, contextId, message: change.message };
  }
}

/** A resume cursor older than the events kept: the client subscribes plainly instead. */
export class ResumeCursorExpiredError extends A2AError {
  readonly reason = "STREAM_CURSOR_EXPIRED";
  readonly kind = "failed_precondition";
  constructor(taskId: string) {
    super(
      `the resume cursor of task ${JSON.stringify(taskId)} is older than the events this server keeps; ` +
        "call SubscribeToTask without the cursor to get a fresh snapshot and the events after it",
      { task_id: taskId },
    );
  }
}
