import type { TaskEventLog } from "./event-log.js";
import type { Artifact, Message, Task, TaskState, TaskStatus } from "../../gen/es/lf/a2a/v1/a2a_pb.js";

/**
 * Who a task belongs to: tenant and authenticated principal together (ruling A-22).
 * A task stored under one scope does not exist under any other.
 */
export interface TaskScope {
  readonly tenant: string;
  readonly principal: string;
}

/** A task as stored, with the version that guards the next write (compare-and-set). */
export interface StoredTask {
  readonly task: Task;
  readonly version: number;
}

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
 * transition. Implementations: src/storage/memory, src/storage/sqlite, src/storage/postgres (async only).
 *
 * The contract is the async methods below: every store implements them, and the lifecycle works
 * on a store that offers nothing else (a networked one, PostgreSQL). Every store must pass
 * test/storage/task-repository.contract.ts, which also runs on the stores seen through their
 * async methods only (test/storage/async-only-repository.test.ts). `immediate` is an
 * optimisation a store may offer on top.
 *
 * Failure modes of writes (thrown, nothing applied):
 * - TaskNotFoundError: no such task in this scope;
 * - VersionConflictError: `expectedVersion` is not the stored version (another writer won);
 * - IllegalTransitionError: the state machine forbids it, or the task is terminal;
 * - InvalidChangeError: the change itself is malformed.
 */
export interface TaskRepository {
  /**
   * Optional: set by a repository that can also apply a write within the call (its guards run and
   * its result is known at once), even if the write becomes durable only later (see `afterCommit`).
   * Same results as the async methods; the lifecycle takes this shortcut when it is there. Why: a blocking SendMessage makes five repository calls and the
   * writes behind them cost three promises each when async; and an agent that need not wait
   * for a commit between its updates finishes a task within one event-loop turn, so the task's
   * writes share one commit instead of taking one each.
   */
  readonly immediate?: ImmediateTaskRepository;
  /** Present when the store keeps events for resuming streams (A-33; src/lifecycle/event-log.ts). */
  readonly eventLog?: TaskEventLog;
  /** Stores a new task (state SUBMITTED, fresh id) at version 1. DuplicateTaskError if the id exists. */
  create(scope: TaskScope, task: Task): Promise<StoredTask>;
  get(scope: TaskScope, taskId: string, options?: ReadOptions): Promise<StoredTask | undefined>;
  /** Applies one change if the stored version is `expectedVersion`; returns the new version. */
  update(scope: TaskScope, taskId: string, expectedVersion: number, change: TaskChange): Promise<number>;
  list(scope: TaskScope, query: TaskQuery): Promise<TaskPage>;
  /** Tasks in SUBMITTED or WORKING, in every scope: what a restart must settle. */
  listActive(): Promise<Array<{ scope: TaskScope; task: StoredTask }>>;
  /** Removes terminal tasks whose status timestamp is older than the given time; returns how many. */
  purgeTerminalBefore(statusMicros: number): Promise<number>;
  close(): Promise<void>;
}

/**
 * The synchronous face of a repository: same guards, same errors (thrown instead of rejected),
 * same results as `create`, `get` and `update`, except that `createNow` returns only the
 * version: it stores a copy and keeps no reference to `task` (unless handed over), so the caller
 * may go on using its own object (a copy less per task).
 */
export interface ImmediateTaskRepository {
  /**
   * `handOver`: the caller gives `task` and everything in it to the store and never touches
   * them again, so the store may keep them instead of a copy.
   */
  createNow(scope: TaskScope, task: Task, handOver?: boolean): number;
  /** Reads committed state only: a store with writes waiting for their commit commits them first. */
  getNow(scope: TaskScope, taskId: string, options?: ReadOptions): StoredTask | undefined;
  updateNow(scope: TaskScope, taskId: string, expectedVersion: number, change: TaskChange): number;
  /**
   * Present on a store whose applied writes become durable later (group commit). Calls
   * `callback` once every write applied so far is committed (`error` undefined) or was rolled
   * back (`error` says why), in the order the callbacks were given. Until then nothing of those
   * writes may be shown to a client. Absent: a write is final once applied.
   */
  readonly afterCommit?: (callback: CommitCallback) => void;
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
