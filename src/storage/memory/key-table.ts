/** FNV-1a over a string's UTF-16 code units: the hash KeyTable callers pass in. */
export function hashKey(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h | 0;
}

/** Resize when entries exceed this share of the cells (and shrink below a quarter of it). */
const MAX_LOAD = 0.625;
const MIN_CELLS = 16;

/**
 * A map from string keys to small non-negative integers (task slots, context numbers) that
 * keeps nothing on the V8 heap per entry. Why: a Map<string, …> costs a string and a slot
 * per key on the heap, and V8 keeps old space ~2.4× what it uses.
 *
 * The keys themselves live elsewhere (their owner stores them off-heap); the table keeps
 * only each entry's value and the key's 32-bit hash, in two Int32Arrays, and asks
 * `matches(value, key)` to confirm a hit whose hash agrees. Open addressing with linear
 * probing; deletion shifts the following entries back, so there are no tombstones.
 */
export class KeyTable {
  /** value + 1 per cell; 0 = empty. */
  private values: Int32Array;
  private hashes: Int32Array;
  private mask: number;
  size = 0;

  constructor(
    private readonly matches: (value: number, key: string) => boolean,
    cells = MIN_CELLS,
  ) {
    const n = Math.max(MIN_CELLS, 1 << Math.ceil(Math.log2(cells)));
    this.values = new Int32Array(n);
    this.hashes = new Int32Array(n);
    this.mask = n - 1;
  }

  /** Number of cells (for tests: growth and shrinking). */
  get cells(): number {
    return this.values.length;
  }

  /** The value stored under `key` (whose hash is `hash`), or -1. */
  get(key: string, hash: number): number {
    for (let i = hash & this.mask; ; i = (i + 1) & this.mask) {
      const v = this.values[i]!;
      if (v === 0) return -1;
      if (this.hashes[i] === hash && this.matches(v - 1, key)) return v - 1;
    }
  }

  /** Adds `key` -> `value`. The key must not be present (callers check with get first). */
  add(hash: number, value: number): void {
    if (this.size + 1 > this.values.length * MAX_LOAD) this.resize(this.values.length * 2);
    this.place(hash, value);
    this.size++;
  }

  /** Removes the entry holding `value` under `hash`; false if there is none. */
  delete(hash: number, value: number): boolean {
    const mask = this.mask;
    let i = hash & mask;
    for (; ; i = (i + 1) & mask) {
      const v = this.values[i]!;
      if (v === 0) return false;
      if (v === value + 1) break;
    }
    // Backward shift: move later entries of the probe run into the hole when their home allows it.
    let hole = i;
    for (let j = (i + 1) & mask; this.values[j] !== 0; j = (j + 1) & mask) {
      const home = this.hashes[j]! & mask;
      // The entry at j may fill the hole if its home is not cyclically in (hole, j].
      if (((j - home) & mask) >= ((j - hole) & mask)) {
        this.values[hole] = this.values[j]!;
        this.hashes[hole] = this.hashes[j]!;
        hole = j;
      }
    }
    this.values[hole] = 0;
    this.hashes[hole] = 0;
    this.size--;
    if (this.values.length > MIN_CELLS && this.size < this.values.length * MAX_LOAD * 0.25) this.resize(this.values.length / 2);
    return true;
  }

  private place(hash: number, value: number): void {
    let i = hash & this.mask;
    while (this.values[i] !== 0) i = (i + 1) & this.mask;
    this.values[i] = value + 1;
    this.hashes[i] = hash;
  }

  private resize(cells: number): void {
    const { values, hashes } = this;
    this.values = new Int32Array(cells);
    this.hashes = new Int32Array(cells);
    this.mask = cells - 1;
    for (let i = 0; i < values.length; i++) if (values[i] !== 0) this.place(hashes[i]!, values[i]! - 1);
  }
}
