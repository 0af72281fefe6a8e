import type { Answer } from "./answer.js";
import type { TaskEventLog } from "./event-log.js";
import type { TaskChange } from "./task-change.js";
import type { TaskScope } from "./task-scope.js";
import type { Task, TaskState } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";

export type { TaskScope } from "./task-scope.js";
export type { TaskChange } from "./task-change.js";

/** A task as stored, with the version that guards the next write (compare-and-set). */
export interface StoredTask {
  readonly task: Task;
  readonly version: number;
}

/** Keyset position in the ListTasks order: status timestamp newest first, then task id descending. */
export interface ListCursor {
  /** Status timestamp in microseconds since the epoch. */
  readonly statusMicros: number;
  readonly taskId: string;
}

export interface TaskQuery {
  readonly contextId?: string;
  /** Current state; undefined = any. */
  readonly state?: TaskState;
  /** Keep tasks whose status timestamp is >= this (microseconds, inclusive). */
  readonly statusMicrosAtLeast?: number;
  /** 1..100, already validated. */
  readonly pageSize: number;
  /** Start strictly after this position. */
  readonly after?: ListCursor;
  /** undefined = all history; 0 = none; N = the N most recent messages. */
  readonly historyLength?: number;
  readonly includeArtifacts: boolean;
}

export interface TaskPage {
  readonly tasks: Task[];
  /** Position of the last task returned when more tasks follow; undefined on the last page. */
  readonly next?: ListCursor;
  /** Number of tasks matching the filters, before pagination. */
  readonly totalSize: number;
}

export interface ReadOptions {
  /** undefined = all history; 0 = none; N = the N most recent messages. */
  readonly historyLength?: number;
}

/**
 * Storage for tasks, their history and artifacts, where every write is a guarded
 * transition. Implementations: src/storage/memory, src/storage/sqlite, src/storage/postgres.
 *
 * One interface for every store: a method answers its value at once when the store can (memory,
 * SQLite: no promise per call, which a blocking SendMessage would pay five times), or a promise of
 * it (PostgreSQL). A refusal is always a rejected promise, never a throw. Callers that care take
 * either with `whenAnswered` (./answer.ts); the others simply `await`. Every store must pass
 * test/storage/task-repository.contract.ts.
 *
 * Failure modes of writes (rejected, nothing applied):
 * - TaskNotFoundError: no such task in this scope;
 * - VersionConflictError: `expectedVersion` is not the stored version (another writer won);
 * - IllegalTransitionError: the state machine forbids it, or the task is terminal;
 * - InvalidChangeError: the change itself is malformed.
 */
export interface TaskRepository {
  /** Present when the store keeps events for resuming streams (A-33; src/lifecycle/event-log.ts). */
  readonly eventLog?: TaskEventLog;
  /**
   * Present on a store whose answered writes become durable later (group commit). Calls
   * `callback` once every write answered so far is committed (`error` undefined) or was rolled
   * back (`error` says why), in the order the callbacks were given. Until then nothing of those
   * writes may be shown to a client. Absent: a write is final once answered.
   */
  readonly afterCommit?: (callback: CommitCallback) => void;
  /**
   * Stores a new task (state SUBMITTED, fresh id) at version 1. DuplicateTaskError if the id exists.
   * The store keeps a copy of `task` and answers another, so the caller may go on changing its
   * object; unless `handOver`: the caller gives `task` and everything in it to the store and never
   * changes them again, and the store keeps and answers `task` itself (no copy).
   */
  create(scope: TaskScope, task: Task, handOver?: boolean): Answer<StoredTask>;
  /** Reads committed state only: a store with writes waiting for their commit commits them first. */
  get(scope: TaskScope, taskId: string, options?: ReadOptions): Answer<StoredTask | undefined>;
  /** Applies one change if the stored version is `expectedVersion`; answers the new version. */
  update(scope: TaskScope, taskId: string, expectedVersion: number, change: TaskChange): Answer<number>;
  list(scope: TaskScope, query: TaskQuery): Answer<TaskPage>;
  /** Tasks in SUBMITTED or WORKING, in every scope: what a restart must settle. */
  listActive(): Answer<Array<{ scope: TaskScope; task: StoredTask }>>;
  /** Removes terminal tasks whose status timestamp is older than the given time; returns how many. */
  purgeTerminalBefore(statusMicros: number): Promise<number>;
  close(): Promise<void>;
}

/** Told whether the writes it waited for were committed (undefined) or lost (the error). */
export type CommitCallback = (error: unknown) => void;

export class VersionConflictError extends Error {
  constructor(
    readonly taskId: string,
    readonly expected: number,
    readonly actual: number,
  ) {
    super(`task ${taskId} is at version ${actual}, not ${expected}`);
    this.name = "VersionConflictError";
  }
}

export class IllegalTransitionError extends Error {
  constructor(
    readonly taskId: string,
    readonly from: TaskState,
    readonly to: TaskState | undefined,
    detail: string,
  ) {
    super(`task ${taskId}: ${detail}`);
    this.name = "IllegalTransitionError";
  }
}

export class InvalidChangeError extends Error {
  constructor(
    readonly taskId: string,
    detail: string,
  ) {
    super(`task ${taskId}: ${detail}`);
    this.name = "InvalidChangeError";
  }
}

export class DuplicateTaskError extends Error {
  constructor(readonly taskId: string) {
    super(`task ${taskId} already exists`);
    this.name = "DuplicateTaskError";
  }
}
