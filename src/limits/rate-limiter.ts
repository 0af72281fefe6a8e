/**
 * A token bucket per principal: `burst` tokens, refilled at `ratePerSecond`. Memory stays
 * bounded however many principals call: a bucket that has refilled completely holds nothing a
 * new bucket would not, so when the table reaches `maxPrincipals` the full buckets are dropped
 * (and, if every bucket is in use, the oldest); each entry is two numbers in a Map.
 */
export class RateLimiter {
  readonly #buckets = new Map<string, { tokens: number; at: number }>();
  readonly #perMs: number;

  constructor(
    ratePerSecond: number,
    private readonly burst: number,
    private readonly maxPrincipals = 100_000,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.#perMs = ratePerSecond / 1000;
  }

  /** Takes one token for `principal`: 0 when allowed, else the ms until a token is there. */
  take(principal: string): number {
    const now = this.now();
    let bucket = this.#buckets.get(principal);
    if (bucket === undefined) {
      if (this.#buckets.size >= this.maxPrincipals) this.#sweep(now);
      bucket = { tokens: this.burst, at: now };
      this.#buckets.set(principal, bucket);
    } else {
      bucket.tokens = Math.min(this.burst, bucket.tokens + (now - bucket.at) * this.#perMs);
      bucket.at = now;
    }
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / this.#perMs));
  }

  /** The ms until `key` has a token (0: it has one now), without taking it. */
  peek(key: string): number {
    const bucket = this.#buckets.get(key);
    if (bucket === undefined) return 0;
    const tokens = Math.min(this.burst, bucket.tokens + (this.now() - bucket.at) * this.#perMs);
    return tokens >= 1 ? 0 : Math.max(1, Math.ceil((1 - tokens) / this.#perMs));
  }

  get principals(): number {
    return this.#buckets.size;
  }

  #sweep(now: number): void {
    for (const [key, b] of this.#buckets) if (b.tokens + (now - b.at) * this.#perMs >= this.burst) this.#buckets.delete(key);
    // Every bucket busy: forget the oldest quarter (they get a full bucket back: bounded memory wins).
    if (this.#buckets.size >= this.maxPrincipals) {
      let drop = Math.ceil(this.maxPrincipals / 4);
      for (const key of this.#buckets.keys()) {
        if (drop-- <= 0) break;
        this.#buckets.delete(key);
      }
    }
  }
}
