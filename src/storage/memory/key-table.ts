/** FNV-1a over a string's UTF-16 code units: the hash KeyTable callers pass in. */
export function hashKey(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h | 0;
}

/** Resize when entries exceed this share of the cells (and shrink below a quarter of it). */
const MAX_LOAD = 0.625;
const MIN_CELLS = 8;
/** Shared by every empty table: a typed array costs ~200 heap bytes even when tiny, and scopes are many. */
const NO_CELLS = new Int32Array(0);

/**
 * A map from string keys to small non-negative integers (task slots, context numbers) that
 * keeps nothing on the V8 heap per entry. Why: a Map<string, …> costs a string and a slot
 * per key on the heap, and V8 keeps old space ~2.4× what it uses.
 *
 * The keys themselves live elsewhere (their owner stores them off-heap); the table keeps
 * only each entry's value and the key's 32-bit hash, side by side in one Int32Array, and
 * asks `matches(value, key)` to confirm a hit whose hash agrees. Open addressing with linear
 * probing; deletion shifts the following entries back, so there are no tombstones.
 */
export class KeyTable {
  /** Per cell: value + 1 (0 = empty), then the key's hash. */
  private table = NO_CELLS;
  private mask = -1;
  size = 0;

  constructor(private readonly matches: (value: number, key: string) => boolean) {}

  /** Number of cells (for tests: growth and shrinking). */
  get cells(): number {
    return this.table.length >> 1;
  }

  /** The value stored under `key` (whose hash is `hash`), or -1. */
  get(key: string, hash: number): number {
    if (this.size === 0) return -1;
    const table = this.table;
    for (let i = hash & this.mask; ; i = (i + 1) & this.mask) {
      const v = table[2 * i]!;
      if (v === 0) return -1;
      if (table[2 * i + 1] === hash && this.matches(v - 1, key)) return v - 1;
    }
  }

  /** Adds `key` -> `value`. The key must not be present (callers check with get first). */
  add(hash: number, value: number): void {
    if (this.size + 1 > this.cells * MAX_LOAD) this.resize(Math.max(MIN_CELLS, this.cells * 2));
    this.place(hash, value);
    this.size++;
  }

  /** Removes the entry holding `value` under `hash`; false if there is none. */
  delete(hash: number, value: number): boolean {
    if (this.size === 0) return false;
    const table = this.table;
    const mask = this.mask;
    let i = hash & mask;
    for (; ; i = (i + 1) & mask) {
      const v = table[2 * i]!;
      if (v === 0) return false;
      if (v === value + 1) break;
    }
    // Backward shift: move later entries of the probe run into the hole when their home allows it.
    let hole = i;
    for (let j = (i + 1) & mask; table[2 * j] !== 0; j = (j + 1) & mask) {
      const home = table[2 * j + 1]! & mask;
      // The entry at j may fill the hole if its home is not cyclically in (hole, j].
      if (((j - home) & mask) >= ((j - hole) & mask)) {
        table[2 * hole] = table[2 * j]!;
        table[2 * hole + 1] = table[2 * j + 1]!;
        hole = j;
      }
    }
    table[2 * hole] = 0;
    table[2 * hole + 1] = 0;
    this.size--;
    if (this.size === 0) this.resize(0);
    else if (this.cells > MIN_CELLS && this.size < this.cells * MAX_LOAD * 0.25) this.resize(this.cells / 2);
    return true;
  }

  private place(hash: number, value: number): void {
    let i = hash & this.mask;
    while (this.table[2 * i] !== 0) i = (i + 1) & this.mask;
    this.table[2 * i] = value + 1;
    this.table[2 * i + 1] = hash;
  }

  private resize(cells: number): void {
    const old = this.table;
    this.table = cells === 0 ? NO_CELLS : new Int32Array(2 * cells);
    this.mask = cells - 1;
    for (let i = 0; i < old.length; i += 2) if (old[i] !== 0) this.place(old[i + 1]!, old[i]! - 1);
  }
}
