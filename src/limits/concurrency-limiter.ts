/**
 * Counts what each principal has going at once (agent runs, open streams), with an optional cap
 * over all principals. A principal's entry exists only while its count is above zero, so memory
 * follows what is running, not how many principals ever called.
 */
export class ConcurrencyLimiter {
  readonly #counts = new Map<string, number>();
  #total = 0;

  constructor(
    /** Most per principal; 0 = no limit. */
    private readonly perPrincipal: number,
    /** Most in all; 0 = no limit. */
    private readonly total = 0,
  ) {}

  /**
   * Takes a slot for `principal`: "ok", or which cap is reached. Every "ok" must be matched by
   * one release().
   */
  acquire(principal: string): "ok" | "principal" | "total" {
    if (this.total > 0 && this.#total >= this.total) return "total";
    const count = this.#counts.get(principal) ?? 0;
    if (this.perPrincipal > 0 && count >= this.perPrincipal) return "principal";
    this.#counts.set(principal, count + 1);
    this.#total++;
    return "ok";
  }

  release(principal: string): void {
    const count = this.#counts.get(principal);
    if (count === undefined) return;
    if (count <= 1) this.#counts.delete(principal);
    else this.#counts.set(principal, count - 1);
    this.#total--;
  }

  count(principal: string): number {
    return this.#counts.get(principal) ?? 0;
  }

  get running(): number {
    return this.#total;
  }

  /** Principals with something running (memory follows this). */
  get principals(): number {
    return this.#counts.size;
  }
}
