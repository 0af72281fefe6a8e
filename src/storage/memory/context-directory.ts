import { TaskState } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { ListCursor } from "../../lifecycle/task-repository.js";
import { StatusIndex } from "./status-index.js";
import { isAfter, newestFirst, type TaskRecord } from "./task-record.js";

/** Up to this many tasks a context keeps a plain array, sorted when listed (cheap at this size). */
const SMALL_CONTEXT = 32;
const STATE_SLOTS = Math.max(...Object.values(TaskState).filter((v): v is number => typeof v === "number")) + 1;

/** A large context: its own ordered index and counts per state. */
class LargeContext {
  readonly index = new StatusIndex<TaskRecord>();
  readonly perState = new Array<number>(STATE_SLOTS).fill(0);
  constructor(readonly id: string) {}
}

/**
 * Most contexts hold one task (a new conversation per request), so a context is stored
 * as cheaply as its size allows: the task's record itself, then a small array, then a
 * LargeContext. That keeps a one-task context at a map entry and its id string.
 */
type Context = TaskRecord | TaskRecord[] | LargeContext;

/** The contexts of one scope. */
export class ContextDirectory {
  private readonly contexts = new Map<string, Context>();

  /** The scope's shared copy of a context id, to be used in the new task's record. */
  shared(contextId: string): string {
    const c = this.contexts.get(contextId);
    if (c === undefined) return contextId;
    return c instanceof LargeContext ? c.id : Array.isArray(c) ? c[0]!.contextId : c.contextId;
  }

  add(record: TaskRecord): void {
    const id = record.contextId;
    const c = this.contexts.get(id);
    if (c === undefined) {
      this.contexts.set(id, record);
    } else if (c instanceof LargeContext) {
      c.index.add(record);
      c.perState[record.state]!++;
    } else if (!Array.isArray(c)) {
      this.contexts.set(id, [c, record]);
    } else if (c.length < SMALL_CONTEXT) {
      c.push(record);
    } else {
      const large = new LargeContext(id);
      for (const r of [...c, record].sort(newestFirst).reverse()) {
        large.index.add(r);
        large.perState[r.state]!++;
      }
      this.contexts.set(id, large);
    }
  }

  /** Call after `record.removed` is set. */
  remove(record: TaskRecord): void {
    const id = record.contextId;
    const c = this.contexts.get(id);
    if (c instanceof LargeContext) {
      c.index.drop();
      c.perState[record.state]!--;
      if (c.index.live === 0) this.contexts.delete(id);
    } else if (Array.isArray(c)) {
      c.splice(c.indexOf(record), 1);
      if (c.length === 1) this.contexts.set(id, c[0]!);
    } else {
      this.contexts.delete(id);
    }
  }

  /** Call after the record's state or status timestamp changed. */
  moved(record: TaskRecord, oldState: TaskState, oldMicros: number): void {
    const c = this.contexts.get(record.contextId);
    if (!(c instanceof LargeContext)) return;
    if (record.micros !== oldMicros) {
      c.index.drop();
      c.index.add(record);
    }
    c.perState[oldState]!--;
    c.perState[record.state]!++;
  }

  /** Number of tasks in the context, optionally only those in `state`. */
  count(contextId: string, state?: TaskState): number {
    const c = this.contexts.get(contextId);
    if (c === undefined) return 0;
    if (c instanceof LargeContext) return state === undefined ? c.index.live : c.perState[state]!;
    const all = Array.isArray(c) ? c : [c];
    return state === undefined ? all.length : all.filter((r) => r.state === state).length;
  }

  /** The context's tasks newest first, strictly after `after`, down to status micros `atLeast`. */
  *walk(contextId: string, after?: ListCursor, atLeast = -Infinity): Generator<TaskRecord> {
    const c = this.contexts.get(contextId);
    if (c === undefined) return;
    if (c instanceof LargeContext) {
      yield* c.index.walk(after, atLeast);
      return;
    }
    for (const r of Array.isArray(c) ? [...c].sort(newestFirst) : [c]) {
      if (r.micros < atLeast) return;
      if (after === undefined || isAfter(r, after)) yield r;
    }
  }
}
