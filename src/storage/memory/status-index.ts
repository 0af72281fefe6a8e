import type { TaskState } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { ListCursor } from "../../lifecycle/task-repository.js";
import { FREE, type TaskColumns } from "./task-columns.js";

/** Stale entries tolerated before a compaction: a quarter of the live ones, plus slack for small indexes. */
const staleLimit = (live: number) => (live >> 2) + 32;
/** A list walk that skips this many stale entries compacts the index afterwards. */
const WALK_STALE_LIMIT = 256;
const INITIAL_ENTRIES = 4;
/** Entries (16 bytes each) an index may keep reserved when mostly empty. */
const SHRINK_ABOVE = 4096;
/** Shared by every empty index: a typed array costs ~200 heap bytes even when tiny, and scopes have several indexes. */
const NO_ENTRIES = new Float64Array(0);
/** An index that empties gives back an array of at most this many entries, and keeps a larger one. */
const RELEASE_AT_MOST = 16;

/**
 * Tasks of one scope (optionally one context or one state) in ListTasks order, for
 * keyset pagination without sorting per call. Entries are kept ascending by
 * (status micros, task id) as (micros, task slot) pairs in one Float64Array (16 bytes an
 * entry, off the V8 heap), and walked from the end, newest first.
 *
 * Entries are never moved: a status change appends a new entry (O(1) while timestamps
 * rise, a binary-search insert otherwise), and the old one goes stale: its micros no
 * longer match the task's, the task changed state (state indexes), or the task is gone
 * (slot FREE). Walks skip stale entries; they are compacted away once they outnumber a
 * quarter of the live ones, or all at once when no live one is left. A freed slot must not be reused until every index of its
 * scope has been compacted (see `compact`), or its stale entries would come back to life.
 */
export class StatusIndex {
  /** Entry i is micros at [2i], slot at [2i + 1]. */
  private pairs = NO_ENTRIES;
  private length = 0;
  /** Number of live entries, i.e. tasks currently in this index. */
  live = 0;

  /**
   * `state`: for a per-state index, an entry is live only while its task is in that state.
   * `refills`: the index empties and fills again all the time (SUBMITTED, WORKING: every task
   * passes through), so it keeps its array when it empties.
   */
  constructor(
    private readonly tasks: TaskColumns,
    private readonly state?: TaskState,
    private readonly refills = false,
  ) {}

  get entries(): number {
    return this.length;
  }

  /** Entries the array has room for (for tests: what an index keeps when it empties). */
  get reserved(): number {
    return this.pairs.length >> 1;
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
    for (let i = at; i < n && this.micros(i) === m && this.tasks.compareIds(this.slot(i), slot) === 0; i++) {
      // An earlier entry of this task at this key (it came back to it): reuse the entry.
      if (this.slot(i) === slot) return;
    }
    this.insertAt(at, m, slot);
  }

  /** Notes that one task left this index (its entry is now stale). Call after updating the task's columns. */
  drop(): void {
    this.live--;
    if (this.live === 0) this.clear();
    else if (this.length - this.live > staleLimit(this.live)) this.compact();
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
        if (this.micros(i) < atLeast) return;
        if (this.isLive(i)) yield this.slot(i);
        else skipped++;
      }
    } finally {
      if (skipped > WALK_STALE_LIMIT) this.compact();
    }
  }

  /** Slots of live entries oldest first whose status micros are < `before`. */
  *oldest(before: number): Generator<number> {
    for (let i = 0; i < this.length && this.micros(i) < before; i++) {
      if (this.isLive(i)) yield this.slot(i);
    }
  }

  /** Drops every stale entry; afterwards no entry refers to a FREE slot. */
  compact(): void {
    const pairs = this.pairs;
    let w = 0;
    for (let r = 0; r < this.length; r++) {
      if (!this.isLive(r)) continue;
      pairs[2 * w] = pairs[2 * r]!;
      pairs[2 * w + 1] = pairs[2 * r + 1]!;
      w++;
    }
    this.length = w;
    // Give memory back after a purge emptied most of a large index. Small ones keep theirs: the
    // SUBMITTED and WORKING indexes empty and refill all the time.
    const capacity = pairs.length >> 1;
    if (w === 0 && this.live === 0) this.clear();
    else if (capacity > SHRINK_ABOVE && w < capacity >> 2) this.resize(capacity >> 1);
  }

  private micros(i: number): number {
    return this.pairs[2 * i]!;
  }

  private slot(i: number): number {
    return this.pairs[2 * i + 1]!;
  }

  /**
   * No live entry is left: every entry is stale. A small index gives its array back (scopes are
   * many, and most hold few tasks), unless it `refills`; a larger one keeps it. Why: the
   * SUBMITTED and WORKING indexes of a busy scope empty and fill again many times a second, and
   * regrowing their array from nothing each time was a few hundred bytes of garbage per call.
   */
  private clear(): void {
    this.length = 0;
    if (!this.refills && this.pairs.length <= 2 * RELEASE_AT_MOST) this.pairs = NO_ENTRIES;
  }

  private isLive(i: number): boolean {
    const slot = this.slot(i);
    const state = this.tasks.state[slot]!;
    return state !== FREE && this.tasks.micros[slot] === this.micros(i) && (this.state === undefined || state === this.state);
  }

  private insertAt(at: number, micros: number, slot: number): void {
    const capacity = this.pairs.length >> 1;
    if (this.length === capacity) this.resize(Math.max(INITIAL_ENTRIES, capacity * 2));
    const pairs = this.pairs;
    if (at < this.length) pairs.copyWithin(2 * at + 2, 2 * at, 2 * this.length);
    pairs[2 * at] = micros;
    pairs[2 * at + 1] = slot;
    this.length++;
  }

  private resize(capacity: number): void {
    const pairs = new Float64Array(2 * capacity);
    pairs.set(this.pairs.subarray(0, 2 * this.length));
    this.pairs = pairs;
  }

  /** Sign of entry i against (micros, id) in ascending order; `id` a string or the slot holding it. */
  private compare(i: number, micros: number, id: string | number): number {
    const m = this.micros(i);
    if (m !== micros) return m < micros ? -1 : 1;
    return this.tasks.compareIds(this.slot(i), id);
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
