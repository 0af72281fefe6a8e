import { clone } from "@bufbuild/protobuf";
import {
  ArtifactSchema,
  MessageSchema,
  TaskSchema,
  TaskState,
  TaskStatusSchema,
  type Task,
} from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { TaskNotFoundError } from "../../lifecycle/errors.js";
import { applyChange } from "../../lifecycle/task-change.js";
import {
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
} from "../../lifecycle/task-repository.js";
import { INITIAL_STATE, TERMINAL_STATES, isSettled } from "../../lifecycle/task-state.js";
import { packTask, unpackTask, type PackedTask } from "./packed-task.js";
import { StatusIndex } from "./status-index.js";
import { statusMicros } from "./status-micros.js";

/** One stored task. Settled tasks (terminal or interrupted) rarely change, so they are kept packed. */
interface TaskRecord {
  readonly id: string;
  readonly context: ContextTasks;
  state: TaskState;
  micros: number;
  version: number;
  body: Task | PackedTask;
  removed: boolean;
}

/** The tasks of one context id in one scope; its `id` is the one shared copy of that string. */
interface ContextTasks {
  readonly id: string;
  readonly index: StatusIndex<TaskRecord>;
  /** Tasks per state, so a (context, state) ListTasks knows its total without counting. */
  readonly perState: number[];
}

/** Everything stored under one (tenant, principal): no lookup ever crosses scopes. */
interface ScopeTasks {
  readonly scope: TaskScope;
  readonly tasks: Map<string, TaskRecord>;
  readonly all: StatusIndex<TaskRecord>;
  readonly contexts: Map<string, ContextTasks>;
  /** Per-state indexes by TaskState number. */
  readonly states: Array<StatusIndex<TaskRecord> | undefined>;
}

const STATE_SLOTS = Math.max(...Object.values(TaskState).filter((v): v is number => typeof v === "number")) + 1;

/**
 * TaskRepository in process memory. Every write goes through `applyChange` and is
 * applied whole or not at all; writes are synchronous between the version check and
 * the commit, so compare-and-set needs no lock. ListTasks walks per-scope indexes
 * (see StatusIndex) instead of sorting.
 */
export class MemoryTaskRepository implements TaskRepository {
  private readonly scopes = new Map<string, ScopeTasks>();

  async create(scope: TaskScope, task: Task): Promise<StoredTask> {
    if (task.id === "") throw new InvalidChangeError(task.id, "a new task needs an id");
    if (task.status?.state !== INITIAL_STATE) throw new InvalidChangeError(task.id, "a new task must be in TASK_STATE_SUBMITTED");
    const home = this.scopeTasks(scope, true);
    if (home.tasks.has(task.id)) throw new DuplicateTaskError(task.id);

    let context = home.contexts.get(task.contextId);
    if (context === undefined) {
      context = { id: task.contextId, index: new StatusIndex(), perState: new Array<number>(STATE_SLOTS).fill(0) };
      home.contexts.set(context.id, context);
    }
    const stored = clone(TaskSchema, task);
    stored.contextId = context.id;
    const record: TaskRecord = {
      id: task.id,
      context,
      state: INITIAL_STATE,
      micros: statusMicros(task),
      version: 1,
      body: stored,
      removed: false,
    };
    home.tasks.set(record.id, record);
    home.all.add(record);
    context.index.add(record);
    context.perState[record.state]!++;
    this.stateIndex(home, record.state).add(record);
    return { task: clone(TaskSchema, stored), version: 1 };
  }

  async get(scope: TaskScope, taskId: string, options: ReadOptions = {}): Promise<StoredTask | undefined> {
    const record = this.scopeTasks(scope)?.tasks.get(taskId);
    if (record === undefined) return undefined;
    return { task: readTask(record, options.historyLength, true), version: record.version };
  }

  async update(scope: TaskScope, taskId: string, expectedVersion: number, change: TaskChange): Promise<number> {
    const home = this.scopeTasks(scope);
    const record = home?.tasks.get(taskId);
    if (home === undefined || record === undefined) throw new TaskNotFoundError(taskId);
    if (record.version !== expectedVersion) throw new VersionConflictError(taskId, expectedVersion, record.version);

    // A packed body decodes to a fresh object; a live one is changed in place, which is
    // safe because applyChange checks everything before it touches the task.
    const task = typeof record.body === "string" ? unpackTask(record.body) : record.body;
    applyChange(task, ownChange(change));
    task.contextId = record.context.id;

    const state = task.status!.state;
    const micros = statusMicros(task);
    const oldState = record.state;
    const oldMicros = record.micros;
    record.body = isSettled(state) ? packTask(task) : task;
    record.version++;
    record.state = state;
    record.micros = micros;
    if (micros !== oldMicros) {
      home.all.drop();
      home.all.add(record);
      record.context.index.drop();
      record.context.index.add(record);
    }
    if (micros !== oldMicros || state !== oldState) {
      this.stateIndex(home, oldState).drop();
      this.stateIndex(home, state).add(record);
      record.context.perState[oldState]!--;
      record.context.perState[state]!++;
    }
    return record.version;
  }

  async list(scope: TaskScope, query: TaskQuery): Promise<TaskPage> {
    const home = this.scopeTasks(scope);
    if (home === undefined) return { tasks: [], totalSize: 0 };
    const context = query.contextId === undefined ? undefined : home.contexts.get(query.contextId);
    const byState = query.state === undefined ? undefined : home.states[query.state];
    if ((query.contextId !== undefined && context === undefined) || (query.state !== undefined && byState === undefined)) {
      return { tasks: [], totalSize: 0 };
    }

    // Walk the narrowest index that covers the filters; test the other filter per task.
    let index = byState ?? context?.index ?? home.all;
    if (context !== undefined && byState !== undefined && context.index.live < byState.live) index = context.index;
    const wanted = (r: TaskRecord) => (query.state === undefined || r.state === query.state) && (context === undefined || r.context === context);
    const atLeast = query.statusMicrosAtLeast;

    let totalSize: number;
    if (atLeast !== undefined) {
      totalSize = 0;
      for (const r of index.walk(undefined, atLeast)) if (wanted(r)) totalSize++;
    } else if (context !== undefined && query.state !== undefined) {
      totalSize = context.perState[query.state]!;
    } else {
      totalSize = index.live;
    }

    const page: TaskRecord[] = [];
    let more = false;
    for (const r of index.walk(query.after, atLeast)) {
      if (!wanted(r)) continue;
      if (page.length === query.pageSize) {
        more = true;
        break;
      }
      page.push(r);
    }
    const last = page[page.length - 1];
    return {
      tasks: page.map((r) => readTask(r, query.historyLength, query.includeArtifacts)),
      next: more && last !== undefined ? { statusMicros: last.micros, taskId: last.id } : undefined,
      totalSize,
    };
  }

  async listActive(): Promise<Array<{ scope: TaskScope; task: StoredTask }>> {
    const active: Array<{ scope: TaskScope; task: StoredTask }> = [];
    for (const home of this.scopes.values()) {
      for (const state of [TaskState.SUBMITTED, TaskState.WORKING]) {
        for (const r of home.states[state]?.walk() ?? []) {
          active.push({ scope: home.scope, task: { task: readTask(r, undefined, true), version: r.version } });
        }
      }
    }
    return active;
  }

  async purgeTerminalBefore(statusMicros: number): Promise<number> {
    let purged = 0;
    for (const [key, home] of this.scopes) {
      for (const state of TERMINAL_STATES) {
        const index = home.states[state];
        if (index === undefined) continue;
        for (const r of [...index.oldest(statusMicros)]) {
          this.remove(home, r);
          purged++;
        }
      }
      if (home.tasks.size === 0) this.scopes.delete(key);
    }
    return purged;
  }

  async close(): Promise<void> {
    this.scopes.clear();
  }

  private remove(home: ScopeTasks, record: TaskRecord): void {
    record.removed = true;
    home.tasks.delete(record.id);
    home.all.drop();
    this.stateIndex(home, record.state).drop();
    const context = record.context;
    context.index.drop();
    context.perState[record.state]!--;
    if (context.index.live === 0) home.contexts.delete(context.id);
  }

  private scopeTasks(scope: TaskScope, create: true): ScopeTasks;
  private scopeTasks(scope: TaskScope, create?: boolean): ScopeTasks | undefined;
  private scopeTasks(scope: TaskScope, create = false): ScopeTasks | undefined {
    const key = JSON.stringify([scope.tenant, scope.principal]);
    let home = this.scopes.get(key);
    if (home === undefined && create) {
      home = {
        scope: { tenant: scope.tenant, principal: scope.principal },
        tasks: new Map(),
        all: new StatusIndex(),
        contexts: new Map(),
        states: [],
      };
      this.scopes.set(key, home);
    }
    return home;
  }

  private stateIndex(home: ScopeTasks, state: TaskState): StatusIndex<TaskRecord> {
    return (home.states[state] ??= new StatusIndex(state));
  }
}

/** A copy of the stored task for a caller, trimmed as asked. */
function readTask(record: TaskRecord, historyLength: number | undefined, includeArtifacts: boolean): Task {
  const task = typeof record.body === "string" ? unpackTask(record.body) : clone(TaskSchema, record.body);
  if (historyLength !== undefined) task.history = historyLength === 0 ? [] : task.history.slice(-historyLength);
  if (!includeArtifacts) task.artifacts = [];
  return task;
}

/** The change with its payload copied, so storage never aliases the caller's objects. */
function ownChange(change: TaskChange): TaskChange {
  switch (change.kind) {
    case "status":
      return { kind: "status", status: clone(TaskStatusSchema, change.status) };
    case "artifact":
      return { ...change, artifact: clone(ArtifactSchema, change.artifact) };
    case "history":
      return { kind: "history", message: clone(MessageSchema, change.message) };
  }
}
