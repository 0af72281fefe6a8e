import { TaskState, type Task } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { TaskNotFoundError } from "../../lifecycle/errors.js";
import { applyChange } from "../../lifecycle/task-change.js";
import {
  DuplicateTaskError,
  InvalidChangeError,
  VersionConflictError,
  type ListCursor,
  type ReadOptions,
  type StoredTask,
  type TaskChange,
  type TaskPage,
  type TaskQuery,
  type TaskRepository,
  type TaskScope,
} from "../../lifecycle/task-repository.js";
import { INITIAL_STATE, TERMINAL_STATES, isSettled } from "../../lifecycle/task-state.js";
import { ContextDirectory } from "./context-directory.js";
import { cloneArtifact, cloneMessage, cloneTask, cloneTaskStatus } from "../../codec/task-clone.js";
import { ByteSlabs } from "./byte-slabs.js";
import { packTask, unpackTask } from "./packed-task.js";
import { StatusIndex } from "./status-index.js";
import { statusMicros } from "../../lifecycle/clock.js";
import type { TaskRecord } from "./task-record.js";

/** Everything stored under one (tenant, principal): no lookup ever crosses scopes. */
interface ScopeTasks {
  readonly scope: TaskScope;
  readonly tasks: Map<string, TaskRecord>;
  readonly all: StatusIndex<TaskRecord>;
  readonly contexts: ContextDirectory;
  /** Per-state indexes by TaskState number. */
  readonly states: Array<StatusIndex<TaskRecord> | undefined>;
}

/** At most this many just-packed tasks are kept live until the next event-loop turn. */
const JUST_PACKED_MAX = 64;

/** Tasks in ListTasks order from one index. */
type Walk = (after?: ListCursor, atLeast?: number) => Iterable<TaskRecord>;

/**
 * TaskRepository in process memory. Every write goes through `applyChange` and is
 * applied whole or not at all; nothing awaits between the version check and the
 * commit, so compare-and-set needs no lock. ListTasks walks per-scope indexes (see
 * StatusIndex, ContextDirectory) instead of sorting.
 */
export class MemoryTaskRepository implements TaskRepository {
  /** By tenant, then principal. Why two levels: a joined string key cost a JSON.stringify per call. */
  private readonly scopes = new Map<string, Map<string, ScopeTasks>>();
  /**
   * Tasks packed during this turn of the event loop, kept as the live objects they were packed
   * from. Why: a blocking caller
   * reads its task right after it settles; handing it the object (once: no one else has it)
   * saves decoding the bytes just made. Cleared at the next turn, so memory stays packed.
   */
  private readonly justPacked = new Map<TaskRecord, Task>();
  /** The packed bodies of settled tasks, off the V8 heap. */
  private readonly slabs = new ByteSlabs();

  /** Off-heap bytes reserved for settled tasks: what the memory tests watch. */
  get packedFootprint(): { slabs: number; bytes: number } {
    return this.slabs.footprint;
  }

  async create(scope: TaskScope, task: Task): Promise<StoredTask> {
    if (task.id === "") throw new InvalidChangeError(task.id, "a new task needs an id");
    if (task.status?.state !== INITIAL_STATE) throw new InvalidChangeError(task.id, "a new task must be in TASK_STATE_SUBMITTED");
    const home = this.scopeTasks(scope, true);
    if (home.tasks.has(task.id)) throw new DuplicateTaskError(task.id);

    const stored = cloneTask(task);
    stored.contextId = home.contexts.shared(task.contextId);
    const record: TaskRecord = {
      id: task.id,
      contextId: stored.contextId,
      state: INITIAL_STATE,
      micros: statusMicros(task),
      version: 1,
      body: stored,
      removed: false,
    };
    home.tasks.set(record.id, record);
    home.all.add(record);
    home.contexts.add(record);
    stateIndex(home, record.state).add(record);
    return { task: cloneTask(stored), version: 1 };
  }

  async get(scope: TaskScope, taskId: string, options: ReadOptions = {}): Promise<StoredTask | undefined> {
    const record = this.scopeTasks(scope)?.tasks.get(taskId);
    if (record === undefined) return undefined;
    if (typeof record.body === "number") {
      const task = this.takeJustPacked(record) ?? unpackTask(this.slabs, record.body);
      return { task: trimmed(task, options.historyLength, true), version: record.version };
    }
    return { task: this.readTask(record, options.historyLength, true), version: record.version };
  }

  async update(scope: TaskScope, taskId: string, expectedVersion: number, change: TaskChange): Promise<number> {
    const home = this.scopeTasks(scope);
    const record = home?.tasks.get(taskId);
    if (home === undefined || record === undefined) throw new TaskNotFoundError(taskId);
    if (record.version !== expectedVersion) throw new VersionConflictError(taskId, expectedVersion, record.version);

    // A packed body decodes to a fresh object; a live one is changed in place, which is
    // safe because applyChange checks everything before it touches the task.
    const wasPacked = typeof record.body === "number" ? record.body : undefined;
    const task = wasPacked !== undefined ? (this.takeJustPacked(record) ?? unpackTask(this.slabs, wasPacked)) : (record.body as Task);
    applyChange(task, ownChange(change));
    task.contextId = record.contextId;
    if (wasPacked !== undefined) this.slabs.release(wasPacked);

    const oldState = record.state;
    const oldMicros = record.micros;
    if (isSettled(task.status!.state)) {
      const packed = packTask(this.slabs, task);
      record.body = packed;
      this.keepJustPacked(record, task);
    } else {
      record.body = task;
    }
    record.version++;
    record.state = task.status!.state;
    record.micros = statusMicros(task);
    if (record.micros !== oldMicros) {
      home.all.drop();
      home.all.add(record);
    }
    if (record.micros !== oldMicros || record.state !== oldState) {
      stateIndex(home, oldState).drop();
      stateIndex(home, record.state).add(record);
      home.contexts.moved(record, oldState, oldMicros);
    }
    return record.version;
  }

  async list(scope: TaskScope, query: TaskQuery): Promise<TaskPage> {
    const home = this.scopeTasks(scope);
    if (home === undefined) return { tasks: [], totalSize: 0 };
    const { contextId, state, statusMicrosAtLeast: atLeast } = query;

    // Walk the narrowest index that covers the filters; test the other filter per task.
    const byState = state === undefined ? undefined : home.states[state];
    const inContext = contextId === undefined ? undefined : home.contexts.count(contextId);
    let walk: Walk = (after, min) => home.all.walk(after, min);
    let size = home.all.live;
    if (byState !== undefined || state !== undefined) {
      walk = (after, min) => byState?.walk(after, min) ?? [];
      size = byState?.live ?? 0;
    }
    if (contextId !== undefined && (state === undefined || inContext! < size)) {
      walk = (after, min) => home.contexts.walk(contextId, after, min);
    }
    const wanted = (r: TaskRecord) => (state === undefined || r.state === state) && (contextId === undefined || r.contextId === contextId);

    let totalSize = 0;
    if (atLeast !== undefined) {
      for (const r of walk(undefined, atLeast)) if (wanted(r)) totalSize++;
    } else if (contextId !== undefined) {
      totalSize = home.contexts.count(contextId, state);
    } else {
      totalSize = size;
    }

    const page: TaskRecord[] = [];
    let more = false;
    for (const r of walk(query.after, atLeast)) {
      if (!wanted(r)) continue;
      if (page.length === query.pageSize) {
        more = true;
        break;
      }
      page.push(r);
    }
    const last = page[page.length - 1];
    return {
      tasks: page.map((r) => this.readTask(r, query.historyLength, query.includeArtifacts)),
      next: more && last !== undefined ? { statusMicros: last.micros, taskId: last.id } : undefined,
      totalSize,
    };
  }

  async listActive(): Promise<Array<{ scope: TaskScope; task: StoredTask }>> {
    const active: Array<{ scope: TaskScope; task: StoredTask }> = [];
    for (const home of this.allScopes()) {
      for (const state of [TaskState.SUBMITTED, TaskState.WORKING]) {
        for (const r of home.states[state]?.walk() ?? []) {
          active.push({ scope: home.scope, task: { task: this.readTask(r, undefined, true), version: r.version } });
        }
      }
    }
    return active;
  }

  async purgeTerminalBefore(statusMicros: number): Promise<number> {
    let purged = 0;
    for (const home of [...this.allScopes()]) {
      for (const state of TERMINAL_STATES) {
        const index = home.states[state];
        if (index === undefined) continue;
        for (const record of [...index.oldest(statusMicros)]) {
          record.removed = true;
          if (typeof record.body === "number") this.slabs.release(record.body);
          home.tasks.delete(record.id);
          home.all.drop();
          index.drop();
          home.contexts.remove(record);
          purged++;
        }
      }
      if (home.tasks.size === 0) this.dropScope(home.scope);
    }
    return purged;
  }

  async close(): Promise<void> {
    this.scopes.clear();
    this.justPacked.clear();
    this.slabs.clear();
  }

  /** A copy of the stored task for a caller, trimmed as asked. */
  private readTask(record: TaskRecord, historyLength: number | undefined, includeArtifacts: boolean): Task {
    const task = typeof record.body === "number" ? unpackTask(this.slabs, record.body) : cloneTask(record.body);
    return trimmed(task, historyLength, includeArtifacts);
  }

  private keepJustPacked(record: TaskRecord, task: Task): void {
    // Bounded too: a caller that settles many tasks without yielding to the event loop keeps few alive.
    if (this.justPacked.size >= JUST_PACKED_MAX) return;
    if (this.justPacked.size === 0) setImmediate(() => this.justPacked.clear()).unref();
    this.justPacked.set(record, task);
  }

  /** The live object a record was just packed from, handed over once (the caller then owns it). */
  private takeJustPacked(record: TaskRecord): Task | undefined {
    const task = this.justPacked.get(record);
    if (task === undefined) return undefined;
    this.justPacked.delete(record);
    // Storage pushed the status message into history as the same object; a decoded copy has two.
    if (task.status?.message !== undefined && task.status.message === task.history[task.history.length - 1]) {
      task.status.message = cloneMessage(task.status.message);
    }
    return task;
  }

  private scopeTasks(scope: TaskScope, create: true): ScopeTasks;
  private scopeTasks(scope: TaskScope, create?: boolean): ScopeTasks | undefined;
  private scopeTasks(scope: TaskScope, create = false): ScopeTasks | undefined {
    let principals = this.scopes.get(scope.tenant);
    let home = principals?.get(scope.principal);
    if (home === undefined && create) {
      home = {
        scope: { tenant: scope.tenant, principal: scope.principal },
        tasks: new Map(),
        all: new StatusIndex(),
        contexts: new ContextDirectory(),
        states: [],
      };
      if (principals === undefined) this.scopes.set(scope.tenant, (principals = new Map()));
      principals.set(scope.principal, home);
    }
    return home;
  }

  private *allScopes(): Generator<ScopeTasks> {
    for (const principals of this.scopes.values()) yield* principals.values();
  }

  private dropScope(scope: TaskScope): void {
    const principals = this.scopes.get(scope.tenant);
    principals?.delete(scope.principal);
    if (principals?.size === 0) this.scopes.delete(scope.tenant);
  }
}

function stateIndex(home: ScopeTasks, state: TaskState): StatusIndex<TaskRecord> {
  return (home.states[state] ??= new StatusIndex(state));
}


function trimmed(task: Task, historyLength: number | undefined, includeArtifacts: boolean): Task {
  if (historyLength !== undefined) task.history = historyLength === 0 ? [] : task.history.slice(-historyLength);
  if (!includeArtifacts) task.artifacts = [];
  return task;
}

/** The change with its payload copied, so storage never aliases the caller's objects. */
function ownChange(change: TaskChange): TaskChange {
  switch (change.kind) {
    case "status":
      return { kind: "status", status: cloneTaskStatus(change.status) };
    case "artifact":
      return { ...change, artifact: cloneArtifact(change.artifact) };
    case "history":
      return { kind: "history", message: cloneMessage(change.message) };
  }
}
