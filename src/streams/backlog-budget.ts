/**
 * The bytes that every stream's merged backlog may hold together. A stream whose backlog would
 * take the total past the limit is ended (RESOURCE_EXHAUSTED) instead of queueing more, so the
 * server's memory stays bounded however many clients stall at once.
 */
export class BacklogBudget {
  #used = 0;

  constructor(readonly limit: number) {}

  get used(): number {
    return this.#used;
  }

  /** Moves a stream's share by `delta` bytes; false (and nothing taken) when growing it would pass the limit. */
  adjust(delta: number): boolean {
    if (delta > 0 && this.#used + delta > this.limit) return false;
    this.#used += delta;
    return true;
  }
}

/** Limits of one stream's backlog, and the budget all of them share. */
export interface BacklogLimits {
  /** Encoded bytes one stream's merged backlog may hold. */
  readonly streamBytes: number;
  /** Bytes one merged response may reach (under the message size limit); appends beyond start a new one. */
  readonly entryBytes: number;
  /** Entries (after merging) one stream's backlog may hold. */
  readonly streamEntries: number;
  readonly shared: BacklogBudget;
}
