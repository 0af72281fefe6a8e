import type { Task } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import {
  type Answer,
  statusMicros,
  TaskNotFoundError,
  eventAtVersion,
  type EventLogOptions,
  type EventLogRead,
  type TaskEventLog,
  applyChange,
  DuplicateTaskError,
  InvalidChangeError,
  VersionConflictError,
  type ReadOptions,
  type StoredTask,
  type TaskChange,
  type TaskPage,
  type TaskQuery,
  type TaskRepository,
  type TaskScope,
  ACTIVE_STATES,
  INITIAL_STATE,
  isTerminal,
} from "../../lifecycle/index.js";
import { cloneTask } from "../../codec/task-clone.js";
import { ownChange } from "../owned-change.js";
import { EventRing } from "./event-ring.js";
import { MemoryPushStore } from "./memory-push-store.js";

/**
 * The tasks of one scope: each the object itself (its whole history and artifacts), and its
 * version. Why two maps and not an object per task: V8 tracks the class of what an object's
 * fields hold, and a task of another shape in a new entry threw away the optimized code of every
 * write path that had read an entry (test/streaming/stream-call-targets.test.ts).
 */
interface ScopeTasks {
  readonly scope: TaskScope;
  readonly tasks: Map<string, Task>;
  readonly versions: Map<string, number>;
}

/**
 * TaskRepository in process memory, for tests and ephemeral use: a Map of tasks per scope, each
 * the task object itself. Every method answers within the call (no promise); a refusal is a
 * rejected promise, as from every store. Every write goes through `applyChange`, which checks
 * everything before it touches the task, so a write is applied whole or not at all, and nothing
 * runs between the version check and the write (compare-and-set needs no lock). Reads hand out
 * copies: what a caller does with them never reaches the store. Nothing is bounded but the event
 * log: the operator's retention (A2A_TASK_RETENTION) keeps the rest in check.
 */
export class MemoryTaskRepository implements TaskRepository {
  /** Events kept for resuming streams, when asked for. */
  readonly eventLog: TaskEventLog | undefined;
  /** Push configs and the outbox of pending deliveries, beside the tasks they belong to. */
  readonly push: MemoryPushStore;
  private readonly ring: EventRing | undefined;
  /** Tasks by scope key (see scopeKey), then by id: an id is unique within its scope only. */
  private readonly scopes = new Map<string, ScopeTasks>();

  constructor(options: { readonly eventLog?: EventLogOptions } = {}) {
    this.ring = options.eventLog === undefined ? undefined : new EventRing(options.eventLog);
    this.eventLog =
      this.ring === undefined
        ? undefined
        : { retentionMs: this.ring.retentionMs, readAfter: async (scope, taskId, after) => this.readEventsAfter(scope, taskId, after) };
    this.push = new MemoryPushStore({ snapshot: (scope, taskId) => this.scopes.get(scopeKey(scope))?.tasks.get(taskId) });
  }

  create(scope: TaskScope, task: Task, handOver = false): Answer<StoredTask> {
    if (task.id === "") return Promise.reject(new InvalidChangeError(task.id, "a new task needs an id"));
    if (task.status?.state !== INITIAL_STATE) return Promise.reject(new InvalidChangeError(task.id, "a new task must be in TASK_STATE_SUBMITTED"));
    let home = this.scopes.get(scopeKey(scope));
    if (home === undefined) {
      home = { scope: { tenant: scope.tenant, principal: scope.principal }, tasks: new Map(), versions: new Map() };
      this.scopes.set(scopeKey(scope), home);
    }
    if (home.tasks.has(task.id)) return Promise.reject(new DuplicateTaskError(task.id));
    // Unless handed over, the caller keeps its object and may change it: the store keeps a copy.
    home.tasks.set(task.id, handOver ? task : cloneTask(task));
    home.versions.set(task.id, 1);
    return { task: handOver ? task : cloneTask(task), version: 1 };
  }

  get(scope: TaskScope, taskId: string, options: ReadOptions = {}): Answer<StoredTask | undefined> {
    const home = this.scopes.get(scopeKey(scope));
    const task = home?.tasks.get(taskId);
    if (task === undefined) return undefined;
    return { task: copyOf(task, options.historyLength, true), version: home!.versions.get(taskId)! };
  }

  update(scope: TaskScope, taskId: string, expectedVersion: number, change: TaskChange): Answer<number> {
    const home = this.scopes.get(scopeKey(scope));
    const task = home?.tasks.get(taskId);
    if (task === undefined) return Promise.reject(new TaskNotFoundError(taskId));
    const stored = home!.versions.get(taskId)!;
    if (stored !== expectedVersion) return Promise.reject(new VersionConflictError(taskId, expectedVersion, stored));
    const owned = ownChange(change); // the caller may change its objects once this returned
    try {
      applyChange(task, owned); // throws, and changes nothing, if refused
    } catch (error) {
      return Promise.reject(error);
    }
    const version = stored + 1;
    home!.versions.set(taskId, version);
    if (this.push.active) this.push.recordWrite(taskId, task.contextId, owned); // the outbox, in the same write
    this.ring?.record(eventAtVersion(taskId, task.contextId, version, owned));
    return version;
  }

  list(scope: TaskScope, query: TaskQuery): Answer<TaskPage> {
    const matching: Array<{ task: Task; micros: number }> = [];
    for (const task of this.scopes.get(scopeKey(scope))?.tasks.values() ?? []) {
      if (query.contextId !== undefined && task.contextId !== query.contextId) continue;
      if (query.state !== undefined && task.status!.state !== query.state) continue;
      const micros = statusMicros(task);
      if (query.statusMicrosAtLeast !== undefined && micros < query.statusMicrosAtLeast) continue;
      matching.push({ task, micros });
    }
    // ListTasks order: status timestamp newest first, then task id descending.
    matching.sort((a, b) => b.micros - a.micros || (a.task.id < b.task.id ? 1 : a.task.id > b.task.id ? -1 : 0));
    const after = query.after;
    const start =
      after === undefined ? 0 : matching.findIndex((m) => m.micros < after.statusMicros || (m.micros === after.statusMicros && m.task.id < after.taskId));
    const page = start < 0 ? [] : matching.slice(start, start + query.pageSize);
    const tasks = page.map((m) => copyOf(m.task, query.historyLength, query.includeArtifacts));
    const last = page[page.length - 1];
    const more = start >= 0 && start + query.pageSize < matching.length;
    return more && last
      ? { tasks, next: { statusMicros: last.micros, taskId: last.task.id }, totalSize: matching.length }
      : { tasks, totalSize: matching.length };
  }

  listActive(): Answer<Array<{ scope: TaskScope; task: StoredTask }>> {
    const active: Array<{ scope: TaskScope; task: StoredTask }> = [];
    for (const home of this.scopes.values()) {
      for (const [id, task] of home.tasks) {
        if (ACTIVE_STATES.has(task.status!.state)) active.push({ scope: home.scope, task: { task: cloneTask(task), version: home.versions.get(id)! } });
      }
    }
    return active;
  }

  async purgeTerminalBefore(statusMicrosBefore: number): Promise<number> {
    let removed = 0;
    for (const [key, home] of this.scopes) {
      for (const [id, task] of home.tasks) {
        if (!isTerminal(task.status!.state) || statusMicros(task) >= statusMicrosBefore) continue;
        home.tasks.delete(id);
        home.versions.delete(id);
        this.push.taskRemoved(id); // its configs and pending deliveries go with it
        this.ring?.forget(id);
        removed++;
      }
      if (home.tasks.size === 0) this.scopes.delete(key);
    }
    return removed;
  }

  async close(): Promise<void> {
    this.scopes.clear();
    this.push.clear();
    this.ring?.clear();
  }

  private readEventsAfter(scope: TaskScope, taskId: string, afterVersion: number): EventLogRead {
    const home = this.scopes.get(scopeKey(scope));
    const task = home?.tasks.get(taskId);
    if (task === undefined) return { kind: "not-found" };
    const events = this.ring!.after(taskId, afterVersion, home!.versions.get(taskId)!);
    return events === undefined ? { kind: "expired" } : { kind: "events", events, state: task.status!.state };
  }
}

/** Tenant and principal as one key; the separator cannot occur in either (both are header values). */
function scopeKey(scope: TaskScope): string {
  return `${scope.tenant}\u0000${scope.principal}`;
}

/**
 * A copy of `task` for a reader: `historyLength` undefined = all history, 0 = none, N = the N most
 * recent messages; without artifacts unless asked for. Only what the reader gets is copied.
 */
function copyOf(task: Task, historyLength: number | undefined, withArtifacts: boolean): Task {
  const { history, artifacts } = task;
  const kept = historyLength === undefined ? history : historyLength <= 0 ? [] : history.slice(-historyLength);
  const copy = cloneTask({ ...task, history: kept, artifacts: withArtifacts ? artifacts : [] });
  return copy;
}
