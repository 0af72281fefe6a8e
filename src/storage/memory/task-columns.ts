import { TaskState, type Task } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { ListCursor } from "../../lifecycle/task-repository.js";
import type { ByteSlabs } from "./byte-slabs.js";

/** The state column's mark for a slot that holds no task. */
export const FREE = TaskState.UNSPECIFIED;
/** The body column's mark for a task whose body is a live JS object, not packed bytes. */
export const LIVE_BODY = -1;
/** End of a context's chain of slots. */
export const NO_SLOT = -1;

const INITIAL_SLOTS = 1024;

/**
 * What the store knows about each task, one slot number per task, one typed array per field.
 * Why columns: a settled task must leave no object and no string on the V8 heap (V8 keeps
 * old space ~2.4× what it uses, so each heap byte costs ~2.4 bytes of RSS); typed arrays keep
 * their contents off the heap and cost what they weigh. The id is stored in `keys` (bytes),
 * read back as a string only where order between equal timestamps needs it.
 *
 * The arrays are replaced when they grow: read them through the instance, never keep one.
 */
export class TaskColumns {
  /** Status timestamp in microseconds (the ListTasks key). */
  micros: Float64Array;
  version: Int32Array;
  /** TaskState; FREE for an unused slot. */
  state: Uint8Array;
  /** Address of the packed body in the body slabs, or LIVE_BODY. */
  body: Float64Array;
  /** Address of the task id in `keys`. */
  key: Float64Array;
  /** The task's context number in its scope's ContextDirectory. */
  ctx: Int32Array;
  /** The next task of the same (small) context, or NO_SLOT. */
  next: Int32Array;
  /**
   * The body of a task not settled yet (SUBMITTED, WORKING), a JS object while it changes; undefined
   * for a packed body. Why an array by slot and not a Map by id: such tasks come and go with every
   * call, and a Map that keeps shrinking and growing makes a new table each time, which V8 then
   * keeps (and promotes) until its next full collection.
   */
  private live: Array<Task | undefined>;
  #liveCount = 0;
  private freeSlots: number[] = [];
  private used = 0;

  constructor(
    readonly keys: ByteSlabs,
    capacity = INITIAL_SLOTS,
  ) {
    this.micros = new Float64Array(capacity);
    this.version = new Int32Array(capacity);
    this.state = new Uint8Array(capacity);
    this.body = new Float64Array(capacity);
    this.key = new Float64Array(capacity);
    this.ctx = new Int32Array(capacity);
    this.next = new Int32Array(capacity);
    this.live = new Array<Task | undefined>(capacity).fill(undefined);
  }

  get capacity(): number {
    return this.state.length;
  }

  /** A slot for a new task with id `id`; the caller sets the other fields. */
  allocate(id: string): number {
    let slot = this.freeSlots.pop();
    if (slot === undefined) {
      if (this.used === this.capacity) this.grow();
      slot = this.used++;
    }
    this.key[slot] = this.keys.appendString(id);
    this.body[slot] = LIVE_BODY;
    this.next[slot] = NO_SLOT;
    return slot;
  }

  /** How many slots hold a live body. */
  get liveCount(): number {
    return this.#liveCount;
  }

  /** The live body of the slot's task, or undefined when it is packed. */
  liveBody(slot: number): Task | undefined {
    return this.live[slot];
  }

  /** Keeps `task` as the slot's body, a live object. */
  setLive(slot: number, task: Task): void {
    if (this.live[slot] === undefined) this.#liveCount++;
    this.live[slot] = task;
    this.body[slot] = LIVE_BODY;
  }

  /** Lets go of the slot's live body (its packed address goes in `body`). */
  dropLive(slot: number): void {
    if (this.live[slot] === undefined) return;
    this.live[slot] = undefined;
    this.#liveCount--;
  }

  /**
   * Marks the slot's task gone. Its id bytes stay until `reuse`: stale index entries may
   * still point at the slot, and keep their place in order by that id.
   */
  release(slot: number): void {
    this.state[slot] = FREE;
  }

  /**
   * Gives back released slots and their id bytes. Only call once nothing refers to them any
   * more (no index entry), or a new task there would be mistaken for the old one.
   */
  reuse(slots: readonly number[]): void {
    for (const s of slots) {
      this.keys.release(this.key[s]!);
      this.freeSlots.push(s);
    }
  }

  /** Forgets every task (the key slabs are cleared by their owner). */
  clear(): void {
    this.freeSlots = [];
    this.used = 0;
    this.state.fill(FREE);
    this.live.fill(undefined);
    this.#liveCount = 0;
  }

  idOf(slot: number): string {
    return this.keys.readString(this.key[slot]!);
  }

  idEquals(slot: number, id: string): boolean {
    // A task in progress has its id at hand as a string (usually the very string asked with).
    const live = this.live[slot];
    if (live !== undefined) return live.id === id;
    return this.keys.stringEquals(this.key[slot]!, id);
  }

  /** Sign of the slot's current (micros, id) against (micros, id) in ascending order. */
  compareTo(slot: number, micros: number, id: string | number): number {
    const m = this.micros[slot]!;
    if (m !== micros) return m < micros ? -1 : 1;
    return this.compareIds(slot, id);
  }

  /**
   * Sign of the slot's id against `id` (a string, or the slot holding it), in JS string order.
   * Equal timestamps are rare (the clock is strictly increasing): only then are ids read back.
   */
  compareIds(slot: number, id: string | number): number {
    if (id === slot) return 0;
    const mine = this.idOf(slot);
    const other = typeof id === "number" ? this.idOf(id) : id;
    return mine === other ? 0 : mine < other ? -1 : 1;
  }

  /** ListTasks order as a sort comparator: newest first, then id descending. */
  newestFirst = (a: number, b: number): number => -this.compareTo(a, this.micros[b]!, b);

  /** True when the slot's task comes strictly after `cursor` in ListTasks order. */
  isAfter(slot: number, cursor: ListCursor): boolean {
    return this.compareTo(slot, cursor.statusMicros, cursor.taskId) < 0;
  }

  private grow(): void {
    const n = this.capacity * 2;
    const grown = <T extends Float64Array | Int32Array | Uint8Array>(a: T, make: new (n: number) => T): T => {
      const b = new make(n);
      b.set(a);
      return b;
    };
    this.micros = grown(this.micros, Float64Array);
    this.version = grown(this.version, Int32Array);
    this.state = grown(this.state, Uint8Array);
    this.body = grown(this.body, Float64Array);
    this.key = grown(this.key, Float64Array);
    this.ctx = grown(this.ctx, Int32Array);
    this.next = grown(this.next, Int32Array);
    for (let i = this.live.length; i < n; i++) this.live.push(undefined);
  }
}
