import { TaskState } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { ListCursor } from "../../lifecycle/task-repository.js";
import { hashKey, KeyTable } from "./key-table.js";
import { StatusIndex } from "./status-index.js";
import { NO_SLOT, type TaskColumns } from "./task-columns.js";

/** Up to this many tasks a context keeps them as a chain of slots, sorted when listed (cheap at this size). */
const SMALL_CONTEXT = 32;
const STATE_SLOTS = Math.max(...Object.values(TaskState).filter((v): v is number => typeof v === "number")) + 1;
const INITIAL_CONTEXTS = 4;
/** Shared until the first context: a typed array costs ~200 heap bytes even when tiny, and scopes are many. */
const NO_CONTEXTS = new Float64Array(0);

/** A context past SMALL_CONTEXT tasks: its own ordered index and counts per state (a JS object; there are few). */
class LargeContext {
  readonly perState = new Array<number>(STATE_SLOTS).fill(0);
  constructor(readonly index: StatusIndex) {}
}

/**
 * The contexts of one scope, numbered, with nothing on the V8 heap per context while it is
 * small. Why: most contexts hold one task (a new conversation per request), and a Map entry,
 * an id string and an array per context cost more heap than the task itself.
 *
 * Per context number: the address of the context id's bytes (in the tasks' key slabs) and the
 * first slot of its chain; the tasks of a small context are chained through the tasks'
 * `next` column (counted by walking it: at most SMALL_CONTEXT steps). A context that grows
 * past SMALL_CONTEXT tasks moves to a LargeContext and stays one until it is empty.
 */
export class ContextDirectory {
  private readonly ids: KeyTable;
  /** Context c: key address at [2c], first slot of its chain at [2c + 1]. */
  private columns = NO_CONTEXTS;
  private large: Map<number, LargeContext> | undefined;
  private readonly freeNumbers: number[] = [];
  private used = 0;

  constructor(private readonly tasks: TaskColumns) {
    this.ids = new KeyTable((c, id) => tasks.keys.stringEquals(this.columns[2 * c]!, id));
  }

  /** The context's number, or -1 when it has no task. */
  find(contextId: string): number {
    return this.ids.get(contextId, hashKey(contextId));
  }

  /** Enters the task in `slot` (state and micros set) into its context; sets the slot's `ctx`. */
  add(slot: number, contextId: string): void {
    const hash = hashKey(contextId);
    let c = this.ids.get(contextId, hash);
    if (c < 0) {
      c = this.newContext(contextId);
      this.ids.add(hash, c);
    }
    this.tasks.ctx[slot] = c;
    const large = this.large?.get(c);
    if (large !== undefined) {
      large.index.add(slot);
      large.perState[this.tasks.state[slot]!]!++;
      return;
    }
    if (this.size(c) < SMALL_CONTEXT) {
      this.tasks.next[slot] = this.columns[2 * c + 1]!;
      this.columns[2 * c + 1] = slot;
      return;
    }
    const promoted = new LargeContext(new StatusIndex(this.tasks));
    for (const s of [...this.chain(c), slot].sort(this.tasks.newestFirst).reverse()) {
      promoted.index.add(s);
      promoted.perState[this.tasks.state[s]!]!++;
    }
    this.columns[2 * c + 1] = NO_SLOT;
    (this.large ??= new Map()).set(c, promoted);
  }

  /** The context id of the task in `slot`. */
  contextIdOf(slot: number): string {
    return this.tasks.keys.readString(this.columns[2 * this.tasks.ctx[slot]!]!);
  }

  /** Takes the task in `slot` out of its context. Call after its slot is released; `state` is the state it had. */
  remove(slot: number, state: TaskState): void {
    const c = this.tasks.ctx[slot]!;
    const large = this.large?.get(c);
    let empty: boolean;
    if (large !== undefined) {
      large.index.drop();
      large.perState[state]!--;
      empty = large.index.live === 0;
    } else {
      this.unlink(c, slot);
      empty = this.columns[2 * c + 1] === NO_SLOT;
    }
    if (empty) this.freeContext(c);
  }

  /** Call after the task's state or status timestamp changed. */
  moved(slot: number, oldState: TaskState, oldMicros: number): void {
    const large = this.large?.get(this.tasks.ctx[slot]!);
    if (large === undefined) return;
    if (this.tasks.micros[slot] !== oldMicros) {
      large.index.drop();
      large.index.add(slot);
    }
    large.perState[oldState]!--;
    large.perState[this.tasks.state[slot]!]!++;
  }

  /** Number of tasks in context `c`, optionally only those in `state`. */
  size(c: number, state?: TaskState): number {
    if (c < 0) return 0;
    const large = this.large?.get(c);
    if (large !== undefined) return state === undefined ? large.index.live : large.perState[state]!;
    let n = 0;
    for (let s = this.columns[2 * c + 1]!; s !== NO_SLOT; s = this.tasks.next[s]!) if (state === undefined || this.tasks.state[s] === state) n++;
    return n;
  }

  /** Slots of context `c` newest first, strictly after `after`, down to status micros `atLeast`. */
  *walk(c: number, after?: ListCursor, atLeast = -Infinity): Generator<number> {
    if (c < 0) return;
    const large = this.large?.get(c);
    if (large !== undefined) {
      yield* large.index.walk(after, atLeast);
      return;
    }
    for (const s of this.chain(c).sort(this.tasks.newestFirst)) {
      if (this.tasks.micros[s]! < atLeast) return;
      if (after === undefined || this.tasks.isAfter(s, after)) yield s;
    }
  }

  /** Drops stale entries of the large contexts' indexes (before freed slots are reused). */
  compact(): void {
    for (const large of this.large?.values() ?? []) large.index.compact();
  }

  private chain(c: number): number[] {
    const slots: number[] = [];
    for (let s = this.columns[2 * c + 1]!; s !== NO_SLOT; s = this.tasks.next[s]!) slots.push(s);
    return slots;
  }

  private unlink(c: number, slot: number): void {
    const next = this.tasks.next;
    if (this.columns[2 * c + 1] === slot) {
      this.columns[2 * c + 1] = next[slot]!;
      return;
    }
    for (let s = this.columns[2 * c + 1]!; s !== NO_SLOT; s = next[s]!) {
      if (next[s] === slot) {
        next[s] = next[slot]!;
        return;
      }
    }
  }

  private newContext(contextId: string): number {
    let c = this.freeNumbers.pop();
    if (c === undefined) {
      c = this.used++;
      if (2 * c === this.columns.length) this.grow();
    }
    this.columns[2 * c] = this.tasks.keys.appendString(contextId);
    this.columns[2 * c + 1] = NO_SLOT;
    return c;
  }

  private freeContext(c: number): void {
    const keys = this.tasks.keys;
    const key = this.columns[2 * c]!;
    this.ids.delete(hashKey(keys.readString(key)), c);
    keys.release(key);
    this.large?.delete(c);
    this.freeNumbers.push(c);
    if (this.ids.size === 0) this.reset();
  }

  /** No context left: give the array back (scopes are many, and may live on empty until purged). */
  private reset(): void {
    this.columns = NO_CONTEXTS;
    this.large = undefined;
    this.freeNumbers.length = 0;
    this.used = 0;
  }

  private grow(): void {
    const columns = new Float64Array(Math.max(2 * INITIAL_CONTEXTS, 2 * this.columns.length));
    columns.set(this.columns);
    this.columns = columns;
  }
}
