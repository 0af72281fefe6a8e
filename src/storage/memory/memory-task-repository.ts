import { type EventLogOptions, type EventLogRead, type TaskEventLog } from "../../lifecycle/event-log.js";
import { EventRing } from "./event-ring.js";
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
  type ImmediateTaskRepository,
  type TaskRepository,
  type TaskScope,
} from "../../lifecycle/task-repository.js";
import { INITIAL_STATE, TERMINAL_STATES, isSettled } from "../../lifecycle/task-state.js";
import { cloneMessage, cloneTask } from "../../codec/task-clone.js";
import { ownChange } from "../owned-change.js";
import { statusMicros } from "../../lifecycle/clock.js";
import { ByteSlabs } from "./byte-slabs.js";
import { hashKey } from "./key-table.js";
import { packTask, unpackTask } from "./packed-task.js";
import { MemoryPushStore } from "./memory-push-store.js";
import { ScopeTasks } from "./scope-tasks.js";
import { LIVE_BODY, TaskColumns } from "./task-columns.js";

/** The task packed last, kept as the object it was packed from (see `lastPacked`). */
interface JustPacked {
  readonly id: string;
  readonly home: ScopeTasks;
  readonly slot: number;
  readonly version: number;
  readonly task: Task;
}

/** Slots in ListTasks order from one index. */
type Walk = (after?: ListCursor, atLeast?: number) => Iterable<number>;

/**
 * TaskRepository in process memory. Every write goes through `applyChange` and is
 * applied whole or not at all; nothing awaits between the version check and the
 * commit, so compare-and-set needs no lock.
 *
 * Memory: a settled task leaves nothing on the V8 heap. Its fields are a slot in
 * TaskColumns (typed arrays), its id and context id bytes and its packed body live in
 * off-heap slabs, and the id and context lookups and ListTasks indexes are typed arrays
 * too (KeyTable, ContextDirectory, StatusIndex). Only the few live (SUBMITTED, WORKING)
 * tasks keep their bodies as JS objects.
 */
export class MemoryTaskRepository implements TaskRepository, ImmediateTaskRepository {
  /** Every operation completes within the call: the lifecycle may use the synchronous forms. */
  readonly immediate: ImmediateTaskRepository = this;
  /** Events kept for resuming streams, when asked for. */
  readonly eventLog: TaskEventLog | undefined;
  private readonly ring: EventRing | undefined;

  constructor(options: { readonly eventLog?: EventLogOptions } = {}) {
    this.ring = options.eventLog === undefined ? undefined : new EventRing(options.eventLog);
    this.eventLog =
      this.ring === undefined
        ? undefined
        : { retentionMs: this.ring.retentionMs, readAfter: (scope, taskId, after) => this.readEventsAfter(scope, taskId, after) };
  }

  /** Push configs and the outbox of pending deliveries, beside the tasks they belong to. */
  readonly push = new MemoryPushStore({ snapshot: (scope, taskId) => this.getNow(scope, taskId)?.task });

  /** By tenant, then principal. Why two levels: a joined string key cost a JSON.stringify per call. */
  private readonly scopes = new Map<string, Map<string, ScopeTasks>>();
  /** The packed bodies of settled tasks. */
  private readonly slabs = new ByteSlabs();
  /** Task and context ids, apart from the bodies: they live as long as their task, bodies may be repacked. */
  private readonly keys = new ByteSlabs();
  private readonly tasks = new TaskColumns(this.keys);
  /** The scope of the latest lookup (see scopeTasks). */
  private lastHome: ScopeTasks | undefined;
  /**
   * The task packed last, kept as the live object it was packed from, with the version it was
   * packed at. Why: a blocking caller reads its task right after it settles; handing it the
   * object (once: no one else has it) saves decoding the bytes just made, and finding it by the
   * id string saves hashing the id into the key table. One task, not a map of them: the read
   * follows the settling write, and a map whose size swings with every call reallocates its
   * table as it empties (garbage on every call); a miss only costs the decode.
   */
  private lastPacked: JustPacked | undefined;
  /** The slot written last and its scope (see slotOfWritten). */
  private lastWritten = -1;
  private lastWrittenHome: ScopeTasks | undefined;

  /** Tasks not settled yet, which keep JS objects on the heap (their bodies, an id entry): what the memory tests watch. */
  get tasksInProgress(): number {
    return this.tasks.liveCount;
  }

  /** Off-heap bytes reserved for settled tasks' bodies: what the memory tests watch. */
  get packedFootprint(): { slabs: number; bytes: number } {
    return this.slabs.footprint;
  }

  async create(scope: TaskScope, task: Task): Promise<StoredTask> {
    return { task: cloneTask(task), version: this.createNow(scope, task) };
  }

  async get(scope: TaskScope, taskId: string, options: ReadOptions = {}): Promise<StoredTask | undefined> {
    return this.getNow(scope, taskId, options);
  }

  async update(scope: TaskScope, taskId: string, expectedVersion: number, change: TaskChange): Promise<number> {
    return this.updateNow(scope, taskId, expectedVersion, change);
  }

  createNow(scope: TaskScope, task: Task, handOver = false): number {
    if (task.id === "") throw new InvalidChangeError(task.id, "a new task needs an id");
    if (task.status?.state !== INITIAL_STATE) throw new InvalidChangeError(task.id, "a new task must be in TASK_STATE_SUBMITTED");
    const home = this.scopeTasks(scope, true);
    const hash = hashKey(task.id);
    if (home.ids.get(task.id, hash) >= 0) throw new DuplicateTaskError(task.id);

    const stored = handOver ? task : cloneTask(task);
    const tasks = this.tasks;
    const slot = tasks.allocate(task.id);
    tasks.state[slot] = INITIAL_STATE;
    tasks.micros[slot] = statusMicros(task);
    tasks.version[slot] = 1;
    home.ids.add(hash, slot);
    tasks.setLive(slot, stored);
    home.contexts.add(slot, task.contextId);
    home.all.add(slot);
    home.stateIndex(INITIAL_STATE).add(slot);
    return 1;
  }

  getNow(scope: TaskScope, taskId: string, options: ReadOptions = {}): StoredTask | undefined {
    const home = this.scopeTasks(scope);
    if (home === undefined) return undefined;
    const kept = this.takeJustPacked(home, taskId);
    if (kept !== undefined) return { task: trimmed(kept.task, options.historyLength, true), version: kept.version };
    const slot = home.slotOf(taskId);
    if (slot < 0) return undefined;
    return { task: trimmed(this.copyOf(home, slot), options.historyLength, true), version: this.tasks.version[slot]! };
  }

  updateNow(scope: TaskScope, taskId: string, expectedVersion: number, change: TaskChange): number {
    const home = this.scopeTasks(scope);
    const slot = home === undefined ? -1 : this.slotOfWritten(home, taskId);
    if (slot < 0) throw new TaskNotFoundError(taskId);
    const tasks = this.tasks;
    const version = tasks.version[slot]!;
    if (version !== expectedVersion) throw new VersionConflictError(taskId, expectedVersion, version);

    // A packed body decodes to a fresh object; a live one is changed in place, which is
    // safe because applyChange checks everything before it touches the task.
    const packed = tasks.body[slot]!;
    const task = tasks.liveBody(slot) ?? this.takeJustPacked(home!, taskId)?.task ?? this.unpack(home!, slot);
    const owned = ownChange(change);
    this.ring?.beforeChange(taskId, task, owned);
    applyChange(task, owned);
    if (packed !== LIVE_BODY) this.slabs.release(packed);
    if (this.push.active) this.push.recordWrite(taskId, task.contextId, change); // the outbox, in the same write
    this.ring?.recordChange(taskId, task.contextId, version + 1, owned, task);

    const oldState = tasks.state[slot]! as TaskState;
    const oldMicros = tasks.micros[slot]!;
    const state = task.status!.state;
    // Only a status change moves the status timestamp (the ListTasks key).
    const micros = change.kind === "status" ? statusMicros(task) : oldMicros;
    tasks.version[slot] = version + 1;
    tasks.state[slot] = state;
    tasks.micros[slot] = micros;
    if (isSettled(state)) {
      tasks.body[slot] = packTask(this.slabs, task);
      tasks.dropLive(slot);
      this.lastPacked = { id: taskId, home: home!, slot, version: version + 1, task };
    } else {
      // Resumed (an interrupted task going on): its body is a live object again.
      if (packed !== LIVE_BODY) tasks.setLive(slot, task);
    }
    if (micros !== oldMicros) {
      home!.all.drop();
      home!.all.add(slot);
    }
    if (micros !== oldMicros || state !== oldState) {
      home!.stateIndex(oldState).drop();
      home!.stateIndex(state).add(slot);
      home!.contexts.moved(slot, oldState, oldMicros);
    }
    return version + 1;
  }

  /**
   * The slot of task `taskId` in `home`, for a write. Why the one-entry cache: a running task is
   * written many times in a row (a stream's chunks), and finding it by id hashes the whole id
   * each time. Only a task in progress is cached: its live body names it, so a slot since given
   * to another task is never taken for it.
   */
  private slotOfWritten(home: ScopeTasks, taskId: string): number {
    const cached = this.lastWritten;
    if (home === this.lastWrittenHome && cached >= 0 && this.tasks.liveBody(cached)?.id === taskId) return cached;
    const slot = home.slotOf(taskId);
    this.lastWritten = slot;
    this.lastWrittenHome = home;
    return slot;
  }

  private async readEventsAfter(scope: TaskScope, taskId: string, afterVersion: number): Promise<EventLogRead> {
    const home = this.scopeTasks(scope);
    const slot = home === undefined ? -1 : home.slotOf(taskId);
    if (slot < 0) return { kind: "not-found" };
    // A chunk's part is found in the task as it is now: a live one as it is, a packed one decoded.
    const events = this.ring!.after(taskId, afterVersion, this.tasks.version[slot]!, () => this.tasks.liveBody(slot) ?? this.unpack(home!, slot));
    return events === undefined ? { kind: "expired" } : { kind: "events", events, state: this.tasks.state[slot]! };
  }

  async list(scope: TaskScope, query: TaskQuery): Promise<TaskPage> {
    const home = this.scopeTasks(scope);
    if (home === undefined) return { tasks: [], totalSize: 0 };
    const { contextId, state, statusMicrosAtLeast: atLeast } = query;
    const tasks = this.tasks;
    const contexts = home.contexts;
    const ctx = contextId === undefined ? -1 : contexts.find(contextId);

    // Walk the narrowest index that covers the filters; test the other filter per task.
    const byState = state === undefined ? undefined : home.states[state];
    const inContext = contexts.size(ctx);
    let walk: Walk = (after, min) => home.all.walk(after, min);
    let size = home.all.live;
    if (state !== undefined) {
      walk = (after, min) => byState?.walk(after, min) ?? [];
      size = byState?.live ?? 0;
    }
    if (contextId !== undefined && (state === undefined || inContext < size)) {
      walk = (after, min) => contexts.walk(ctx, after, min);
    }
    const wanted = (s: number) => (state === undefined || tasks.state[s] === state) && (contextId === undefined || tasks.ctx[s] === ctx);

    // An unknown context is number -1: its walk is empty and no task's `ctx` matches it.
    let totalSize = 0;
    if (atLeast !== undefined) {
      for (const s of walk(undefined, atLeast)) if (wanted(s)) totalSize++;
    } else if (contextId !== undefined) {
      totalSize = contexts.size(ctx, state);
    } else {
      totalSize = size;
    }

    const page: number[] = [];
    let more = false;
    for (const s of walk(query.after, atLeast)) {
      if (!wanted(s)) continue;
      if (page.length === query.pageSize) {
        more = true;
        break;
      }
      page.push(s);
    }
    const last = page[page.length - 1];
    return {
      tasks: page.map((s) => trimmed(this.copyOf(home, s), query.historyLength, query.includeArtifacts)),
      next: more && last !== undefined ? { statusMicros: tasks.micros[last]!, taskId: tasks.idOf(last) } : undefined,
      totalSize,
    };
  }

  async listActive(): Promise<Array<{ scope: TaskScope; task: StoredTask }>> {
    const active: Array<{ scope: TaskScope; task: StoredTask }> = [];
    for (const home of this.allScopes()) {
      for (const state of [TaskState.SUBMITTED, TaskState.WORKING]) {
        for (const s of home.states[state]?.walk() ?? []) {
          active.push({ scope: home.scope, task: { task: this.copyOf(home, s), version: this.tasks.version[s]! } });
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
        for (const slot of [...index.oldest(statusMicros)]) {
          this.remove(home, slot, state);
          index.drop();
          purged++;
        }
      }
      if (home.size === 0) this.dropScope(home);
    }
    return purged;
  }

  async close(): Promise<void> {
    this.scopes.clear();
    this.push.clear();
    this.lastHome = undefined;
    this.lastPacked = undefined;
    this.lastWritten = -1;
    this.lastWrittenHome = undefined;
    this.slabs.clear();
    this.keys.clear();
    this.tasks.clear();
  }

  /** Takes the task in `slot` out of every structure but the state index it is in (the caller drops that). */
  private remove(home: ScopeTasks, slot: number, state: TaskState): void {
    const tasks = this.tasks;
    const id = tasks.idOf(slot);
    home.ids.delete(hashKey(id), slot);
    tasks.dropLive(slot);
    const body = tasks.body[slot]!;
    if (body !== LIVE_BODY) this.slabs.release(body);
    if (this.lastPacked?.id === id) this.lastPacked = undefined;
    if (this.push.active) this.push.taskRemoved(id);
    tasks.release(slot);
    home.all.drop();
    home.contexts.remove(slot, state);
    home.removed(slot);
  }

  /** A copy of the stored task for a caller. */
  private copyOf(home: ScopeTasks, slot: number): Task {
    const live = this.tasks.liveBody(slot);
    return live !== undefined ? cloneTask(live) : this.unpack(home, slot);
  }

  private unpack(home: ScopeTasks, slot: number): Task {
    return unpackTask(this.slabs, this.tasks.body[slot]!, this.tasks.idOf(slot), home.contexts.contextIdOf(slot));
  }

  /**
   * The live object task `id` of `home` was just packed from, handed over once (the caller then
   * owns it), if it is still what is stored.
   */
  private takeJustPacked(home: ScopeTasks, id: string): { task: Task; version: number } | undefined {
    const kept = this.lastPacked;
    if (kept === undefined || kept.id !== id || kept.home !== home) return undefined; // another task, or the same id in another scope
    this.lastPacked = undefined;
    const { slot } = kept;
    if (kept.version !== this.tasks.version[slot] || this.tasks.body[slot] === LIVE_BODY) return undefined;
    const task = kept.task;
    // Storage pushed the status message into history as the same object; a decoded copy has two.
    // A new status object: the one stored may be the run's own (a fresh change), shared with its event.
    const status = task.status;
    if (status?.message !== undefined && status.message === task.history[task.history.length - 1]) {
      task.status = { ...status, message: cloneMessage(status.message) };
    }
    return kept;
  }

  private scopeTasks(scope: TaskScope, create: true): ScopeTasks;
  private scopeTasks(scope: TaskScope, create?: boolean): ScopeTasks | undefined;
  private scopeTasks(scope: TaskScope, create = false): ScopeTasks | undefined {
    // A call's writes and reads all name the same scope: the last one found is kept at hand.
    const last = this.lastHome;
    if (last !== undefined && last.scope.tenant === scope.tenant && last.scope.principal === scope.principal) return last;
    const home = this.findScope(scope, create);
    if (home !== undefined) this.lastHome = home;
    return home;
  }

  private findScope(scope: TaskScope, create: boolean): ScopeTasks | undefined {
    let principals = this.scopes.get(scope.tenant);
    let home = principals?.get(scope.principal);
    if (home === undefined && create) {
      home = new ScopeTasks({ tenant: scope.tenant, principal: scope.principal }, this.tasks);
      if (principals === undefined) this.scopes.set(scope.tenant, (principals = new Map()));
      principals.set(scope.principal, home);
    }
    return home;
  }

  private *allScopes(): Generator<ScopeTasks> {
    for (const principals of this.scopes.values()) yield* principals.values();
  }

  private dropScope(home: ScopeTasks): void {
    if (this.lastHome === home) this.lastHome = undefined;
    home.dispose();
    const principals = this.scopes.get(home.scope.tenant);
    principals?.delete(home.scope.principal);
    if (principals?.size === 0) this.scopes.delete(home.scope.tenant);
  }
}

function trimmed(task: Task, historyLength: number | undefined, includeArtifacts: boolean): Task {
  if (historyLength !== undefined) task.history = historyLength === 0 ? [] : task.history.slice(-historyLength);
  if (!includeArtifacts) task.artifacts = [];
  return task;
}
