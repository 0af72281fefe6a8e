import type { TaskState } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { ListCursor } from "../../lifecycle/task-repository.js";
import { FREE, type TaskColumns } from "./task-columns.js";

/** Stale entries tolerated before a compaction: a quarter of the live ones, plus slack for small indexes. */
const staleLimit = (live: number) => (live >> 2) + 32;
/** A list walk that skips this many stale entries compacts the index afterwards. */
const WALK_STALE_LIMIT = 256;
const INITIAL_ENTRIES = 16;
/** Entries (12 bytes each) an index may keep reserved when mostly empty. */
const SHRINK_ABOVE = 4096;

/**
 * Tasks of one scope (optionally one context or one state) in ListTasks order, for
 * keyset pagination without sorting per call. Entries are kept ascending by
 * (status micros, task id) as a Float64Array of micros and an Int32Array of task slots
 * (12 bytes an entry, off the V8 heap), and walked from the end, newest first.
 *
 * Entries are never moved: a status change appends a new entry (O(1) while timestamps
 * rise, a binary-search insert otherwise), and the old one goes stale: its micros no
 * longer match the task's, the task changed state (state indexes), or the task is gone
 * (slot FREE). Walks skip stale entries; they are compacted away once they outnumber a
 * quarter of the live ones. A freed slot must not be reused until every index of its
 * scope has been compacted (see `compact`), or its stale entries would come back to life.
 */
export class StatusIndex {
  private micros = new Float64Array(INITIAL_ENTRIES);
  private slots = new Int32Array(INITIAL_ENTRIES);
  private length = 0;
  /** Number of live entries, i.e. tasks currently in this index. */
  live = 0;

  /** `state`: for a per-state index, an entry is live only while its task is in that state. */
  constructor(
    private readonly tasks: TaskColumns,
    private readonly state?: TaskState,
  ) {}

  get entries(): number {
    return this.length;
  }

  /** Enters the task in `slot` at its current micros. Call after updating the task's columns. */
  add(slot: number): void {
    this.live++;
    const n = this.length;
    const m = this.tasks.micros[slot]!;
    if (n === 0 || this.compare(n - 1, m, slot) < 0) {
      this.insertAt(n, m, slot);
      return;
    }
    const at = this.lowerBound(m, slot);
    for (let i = at; i < n && this.micros[i] === m && this.tasks.compareIds(this.slots[i]!, slot) === 0; i++) {
      // An earlier entry of this task at this key (it came back to it): reuse the entry.
      if (this.slots[i] === slot) return;
    }
    this.insertAt(at, m, slot);
  }

  /** Notes that one task left this index (its entry is now stale). Call after updating the task's columns. */
  drop(): void {
    this.live--;
    if (this.length - this.live > staleLimit(this.live)) this.compact();
  }

  /**
   * Slots of live entries newest first, strictly after `after` in ListTasks order, down to
   * status micros `atLeast` inclusive.
   */
  *walk(after?: ListCursor, atLeast = -Infinity): Generator<number> {
    let i = (after === undefined ? this.length : this.lowerBound(after.statusMicros, after.taskId)) - 1;
    let skipped = 0;
    try {
      for (; i >= 0; i--) {
        if (this.micros[i]! < atLeast) return;
        if (this.isLive(i)) yield this.slots[i]!;
        else skipped++;
      }
    } finally {
      if (skipped > WALK_STALE_LIMIT) this.compact();
    }
  }

  /** Slots of live entries oldest first whose status micros are < `before`. */
  *oldest(before: number): Generator<number> {
    for (let i = 0; i < this.length && this.micros[i]! < before; i++) {
      if (this.isLive(i)) yield this.slots[i]!;
    }
  }

  /** Drops every stale entry; afterwards no entry refers to a FREE slot. */
  compact(): void {
    let w = 0;
    for (let r = 0; r < this.length; r++) {
      if (!this.isLive(r)) continue;
      this.micros[w] = this.micros[r]!;
      this.slots[w] = this.slots[r]!;
      w++;
    }
    this.length = w;
    // Give memory back after a purge emptied most of a large index. Small ones keep theirs: the
    // SUBMITTED and WORKING indexes empty and refill all the time.
    const capacity = this.slots.length;
    if (capacity > SHRINK_ABOVE && w < capacity >> 2) this.resize(capacity >> 1);
  }

  private isLive(i: number): boolean {
    const slot = this.slots[i]!;
    const state = this.tasks.state[slot]!;
    return state !== FREE && this.tasks.micros[slot] === this.micros[i] && (this.state === undefined || state === this.state);
  }

  private insertAt(at: number, micros: number, slot: number): void {
    if (this.length === this.slots.length) this.resize(this.slots.length * 2);
    if (at < this.length) {
      this.micros.copyWithin(at + 1, at, this.length);
      this.slots.copyWithin(at + 1, at, this.length);
    }
    this.micros[at] = micros;
    this.slots[at] = slot;
    this.length++;
  }

  private resize(capacity: number): void {
    const micros = new Float64Array(capacity);
    const slots = new Int32Array(capacity);
    micros.set(this.micros.subarray(0, this.length));
    slots.set(this.slots.subarray(0, this.length));
    this.micros = micros;
    this.slots = slots;
  }

  /** Sign of entry i against (micros, id) in ascending order; `id` a string or the slot holding it. */
  private compare(i: number, micros: number, id: string | number): number {
    const m = this.micros[i]!;
    if (m !== micros) return m < micros ? -1 : 1;
    return this.tasks.compareIds(this.slots[i]!, id);
  }

  /** First position whose entry is >= (micros, id). */
  private lowerBound(micros: number, id: string | number): number {
    let lo = 0;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.compare(mid, micros, id) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
