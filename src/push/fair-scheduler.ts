/**
 * Who gets the next webhook request slot (issue 33 finding 4): the lanes waiting for one are
 * served round robin across principals (owner scopes), and within a principal round robin across
 * destination hosts, so that one principal's many or slow receivers cannot starve another's.
 * Two caps bound what a waiting lane may take: requests in flight to one host (a stalled receiver
 * holds at most that many slots), and slots one principal holds (some always stay for the others).
 */
export interface Schedulable {
  /** The owner scope the lane delivers for. */
  readonly principal: string;
  /** The destination host, once its config was read (undefined before: not capped yet). */
  readonly host: string | undefined;
}

export interface FairnessCaps {
  /** Requests in flight to one host at most (A2A_PUSH_CONCURRENCY_PER_HOST). */
  readonly perHost: number;
  /** Request slots one principal holds at most. */
  readonly perPrincipal: number;
}

/** Slots one principal may hold out of `concurrency`: all but a quarter (at least one) kept for the others. */
export function principalShare(concurrency: number): number {
  return Math.max(1, concurrency - Math.max(1, Math.floor(concurrency / 4)));
}

const UNKNOWN_HOST = "";

export class FairScheduler<T extends Schedulable> {
  /** Waiting lanes: principal -> host -> lanes in arrival order. Map order is the round robin order. */
  private readonly waiting = new Map<string, Map<string, T[]>>();
  private readonly hostsInFlight = new Map<string, number>();
  private readonly principalsInFlight = new Map<string, number>();
  private count = 0;

  constructor(private readonly caps: FairnessCaps) {}

  get size(): number {
    return this.count;
  }

  push(item: T): void {
    let hosts = this.waiting.get(item.principal);
    if (hosts === undefined) this.waiting.set(item.principal, (hosts = new Map()));
    const host = item.host ?? UNKNOWN_HOST;
    let queue = hosts.get(host);
    if (queue === undefined) hosts.set(host, (queue = []));
    queue.push(item);
    this.count++;
  }

  /**
   * The next lane to run, counted against its principal's share until `finished`; undefined when
   * none waits or every waiting one is capped. The served principal and host go to the back.
   */
  take(): T | undefined {
    for (const [principal, hosts] of this.waiting) {
      if ((this.principalsInFlight.get(principal) ?? 0) >= this.caps.perPrincipal) continue;
      for (const [host, queue] of hosts) {
        if (host !== UNKNOWN_HOST && !this.hostHasRoom(host)) continue;
        const item = queue.shift()!;
        this.count--;
        hosts.delete(host);
        if (queue.length > 0) hosts.set(host, queue);
        this.waiting.delete(principal);
        if (hosts.size > 0) this.waiting.set(principal, hosts);
        increment(this.principalsInFlight, principal, 1);
        return item;
      }
    }
    return undefined;
  }

  /** A lane `take` gave out is done with its slot. */
  finished(item: T): void {
    increment(this.principalsInFlight, item.principal, -1);
  }

  /** A request to `host` may start: counted until `releaseHost`. False when the host is at its cap. */
  acquireHost(host: string): boolean {
    if (!this.hostHasRoom(host)) return false;
    increment(this.hostsInFlight, host, 1);
    return true;
  }

  releaseHost(host: string): void {
    increment(this.hostsInFlight, host, -1);
  }

  clear(): void {
    this.waiting.clear();
    this.count = 0;
  }

  private hostHasRoom(host: string): boolean {
    return (this.hostsInFlight.get(host) ?? 0) < this.caps.perHost;
  }
}

/** Adds to a count kept only while it is above zero (the maps hold in-flight keys only). */
function increment(counts: Map<string, number>, key: string, by: number): void {
  const next = (counts.get(key) ?? 0) + by;
  if (next > 0) counts.set(key, next);
  else counts.delete(key);
}

/** The host a webhook URL's requests are counted against (the name as written, without port). */
export function destinationHost(url: string): string {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return UNKNOWN_HOST;
  }
}
