import type { TaskState } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { isSettled } from "../../lifecycle/task-state.js";
import type { TaskScope } from "../../lifecycle/task-repository.js";
import { ContextDirectory } from "./context-directory.js";
import { KeyTable, hashKey } from "./key-table.js";
import { StatusIndex } from "./status-index.js";
import type { TaskColumns } from "./task-columns.js";

/** Released slots wait for reuse until there are more than this (a share of the scope's tasks, plus slack). */
const pendingLimit = (tasks: number) => (tasks >> 2) + 32;

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
  /** Slots of removed tasks that the indexes may still point at (see `reclaimPending`). */
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
    return this.ids.get(id, hashKey(id));
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
    if (this.pending.length > pendingLimit(this.size)) this.reclaimPending();
  }

  /** The scope is going away with its indexes: its waiting slots are safe to reuse. */
  dispose(): void {
    this.tasks.reuse(this.pending);
    this.pending = [];
  }

  private reclaimPending(): void {
    this.all.compact();
    for (const index of this.states) index?.compact();
    this.contexts.compact();
    this.dispose();
  }
}
