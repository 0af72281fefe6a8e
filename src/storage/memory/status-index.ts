import type { TaskState } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { ListCursor } from "../../lifecycle/task-repository.js";

/** What an index needs to know about a stored task to tell a current entry from a stale one. */
export interface Indexed {
  readonly id: string;
  readonly micros: number;
  readonly state: TaskState;
  readonly removed: boolean;
}

/** Stale entries tolerated before a compaction: a quarter of the live ones, plus slack for small indexes. */
const staleLimit = (live: number) => (live >> 2) + 32;
/** A list walk that skips this many stale entries compacts the index afterwards. */
const WALK_STALE_LIMIT = 256;

/**
 * Tasks of one scope (optionally one context or one state) in ListTasks order, for
 * keyset pagination without sorting per call. Entries are kept ascending by
 * (status micros, task id) in two parallel arrays (16 bytes an entry), and walked
 * from the end, newest first.
 *
 * Entries are never moved: a status change appends a new entry (an O(1) push while
 * timestamps rise, a binary-search insert otherwise), and the old one goes stale:
 * its micros no longer match the task's, the task changed state (state indexes), or
 * the task is gone. Walks skip stale entries; they are compacted away once they
 * outnumber a quarter of the live ones, so a walk pays for few of them.
 */
export class StatusIndex<R extends Indexed> {
  private micros: number[] = [];
  private recs: R[] = [];
  /** Number of live entries, i.e. tasks currently in this index. */
  live = 0;

  /** `state`: for a per-state index, an entry is live only while its task is in that state. */
  constructor(private readonly state?: TaskState) {}

  get entries(): number {
    return this.recs.length;
  }

  /** Enters `rec` at its current micros. Call after updating the task's fields. */
  add(rec: R): void {
    this.live++;
    const n = this.recs.length;
    const m = rec.micros;
    if (n === 0 || this.compare(n - 1, m, rec.id) < 0) {
      this.micros.push(m);
      this.recs.push(rec);
      return;
    }
    const at = this.lowerBound(m, rec.id);
    if (at < n && this.micros[at] === m && this.recs[at]!.id === rec.id) {
      // An earlier entry of this key (the task came back to it, or a purged task had the id): reuse the slot.
      this.recs[at] = rec;
      return;
    }
    this.micros.splice(at, 0, m);
    this.recs.splice(at, 0, rec);
  }

  /** Notes that one task left this index (its entry is now stale). Call after updating the task's fields. */
  drop(): void {
    this.live--;
    if (this.recs.length - this.live > staleLimit(this.live)) this.compact();
  }

  /**
   * Live entries newest first, strictly after `after` in ListTasks order, down to
   * status micros `atLeast` inclusive.
   */
  *walk(after?: ListCursor, atLeast = -Infinity): Generator<R> {
    let i = (after === undefined ? this.recs.length : this.lowerBound(after.statusMicros, after.taskId)) - 1;
    let skipped = 0;
    try {
      for (; i >= 0; i--) {
        if (this.micros[i]! < atLeast) return;
        if (this.isLive(i)) yield this.recs[i]!;
        else skipped++;
      }
    } finally {
      if (skipped > WALK_STALE_LIMIT) this.compact();
    }
  }

  /** Live entries oldest first whose status micros are < `before`. */
  *oldest(before: number): Generator<R> {
    for (let i = 0; i < this.recs.length && this.micros[i]! < before; i++) {
      if (this.isLive(i)) yield this.recs[i]!;
    }
  }

  private isLive(i: number): boolean {
    const rec = this.recs[i]!;
    return !rec.removed && rec.micros === this.micros[i] && (this.state === undefined || rec.state === this.state);
  }

  private compact(): void {
    let w = 0;
    for (let r = 0; r < this.recs.length; r++) {
      if (!this.isLive(r)) continue;
      this.micros[w] = this.micros[r]!;
      this.recs[w] = this.recs[r]!;
      w++;
    }
    this.micros.length = w;
    this.recs.length = w;
  }

  /** Sign of entry i against (micros, id) in ascending order. */
  private compare(i: number, micros: number, id: string): number {
    const m = this.micros[i]!;
    if (m !== micros) return m < micros ? -1 : 1;
    const other = this.recs[i]!.id;
    return other === id ? 0 : other < id ? -1 : 1;
  }

  /** First position whose entry is >= (micros, id). */
  private lowerBound(micros: number, id: string): number {
    let lo = 0;
    let hi = this.recs.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.compare(mid, micros, id) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
