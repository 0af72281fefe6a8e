import type { Task, TaskState } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { isSettled } from "../../lifecycle/task-state.js";
import type { TaskScope } from "../../lifecycle/task-repository.js";
import { ContextDirectory } from "./context-directory.js";
import { KeyTable, hashKey } from "./key-table.js";
import { StatusIndex } from "./status-index.js";
import type { TaskColumns } from "./task-columns.js";

/** Released slots wait for reuse until there are more than this (a share of the scope's tasks, plus slack). */
const pendingLimit = (tasks: number) => (tasks >> 2) + 32;

/** A task not settled yet: its slot, and its body as a JS object (its `body` column says LIVE_BODY). */
export interface LiveTask {
  readonly slot: number;
  readonly task: Task;
}

/**
 * Everything stored under one (tenant, principal): no lookup ever crosses scopes.
 * Its tasks live in the repository's shared TaskColumns; the scope holds their ids
 * (id -> slot), contexts and ListTasks indexes.
 */
export class ScopeTasks {
  readonly ids: KeyTable;
  readonly all: StatusIndex;
  readonly contexts: ContextDirectory;
  /** Per-state indexes by TaskState number. */
  readonly states: Array<StatusIndex | undefined> = [];
  /**
   * The scope's tasks not settled yet (SUBMITTED, WORKING) by id: their slots and their bodies,
   * which stay JS objects while they change. Why a Map by id: those are the tasks written
   * several times in a row; a Map finds them by the id string's cached hash, where `ids` hashes
   * the id and compares its stored bytes on every lookup. Why slot and body in one entry: one
   * Map changing per call, not two. They are few (the tasks in progress), so their heap cost is small.
   */
  readonly active = new Map<string, LiveTask>();
  /** Slots of removed tasks that the indexes may still point at (see `settlePending`). */
  private pending: number[] = [];

  constructor(
    readonly scope: TaskScope,
    private readonly tasks: TaskColumns,
  ) {
    this.ids = new KeyTable((slot, id) => tasks.idEquals(slot, id));
    this.all = new StatusIndex(tasks);
    this.contexts = new ContextDirectory(tasks);
  }

  /** The slot of the task with this id, or -1. */
  slotOf(id: string): number {
    return this.active.get(id)?.slot ?? this.ids.get(id, hashKey(id));
  }

  get size(): number {
    return this.ids.size;
  }

  stateIndex(state: TaskState): StatusIndex {
    return (this.states[state] ??= new StatusIndex(this.tasks, state, !isSettled(state)));
  }

  /**
   * Notes a released slot. Why not reuse it at once: stale index entries may still point at
   * it, and would then match the slot's next task. Once enough are waiting, every index of
   * the scope is compacted (amortized: a compaction per quarter of the tasks removed) and the
   * slots go back to the columns.
   */
  removed(slot: number): void {
    this.pending.push(slot);
    if (this.pending.length > pendingLimit(this.size)) this.settlePending();
  }

  /** The scope is going away with its indexes: its waiting slots are safe to reuse. */
  dispose(): void {
    this.tasks.reuse(this.pending);
    this.pending = [];
  }

  private settlePending(): void {
    this.all.compact();
    for (const index of this.states) index?.compact();
    this.contexts.compact();
    this.dispose();
  }
}
