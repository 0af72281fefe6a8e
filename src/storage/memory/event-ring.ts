import type { EventLogOptions, LoggedEvent } from "../../lifecycle/event-log.js";

/** Events kept for resume across all tasks when the operator sets no cap. */
export const DEFAULT_MAX_EVENTS = 100_000;

interface TaskRing {
  /** Oldest first; `head` is the first still kept (dropping from the front by index, not by shift). */
  events: LoggedEvent[];
  at: number[];
  head: number;
}

/**
 * The memory store's log of events for resume, bounded twice: events older than the
 * retention window go, and so do the oldest events of all tasks once `maxEvents` are kept.
 * One queue of task ids in the order events were recorded says whose event is oldest, so
 * dropping is O(1) per event and needs no timer. The events are the objects the task itself
 * holds (a chunk's parts are shared with the task's artifact), so the log costs little more
 * than its arrays.
 */
export class EventRing {
  private readonly rings = new Map<string, TaskRing>();
  /** The task id of every kept event, oldest first. */
  private order: string[] = [];
  private orderHead = 0;
  private readonly maxEvents: number;
  readonly retentionMs: number;

  constructor(options: EventLogOptions, private readonly now: () => number = Date.now) {
    this.retentionMs = options.retentionMs;
    this.maxEvents = Math.max(1, options.maxEvents ?? DEFAULT_MAX_EVENTS);
  }

  /** Events kept, across all tasks. */
  get size(): number {
    return this.order.length - this.orderHead;
  }

  record(event: LoggedEvent): void {
    const now = this.now();
    let ring = this.rings.get(event.taskId);
    if (ring === undefined) this.rings.set(event.taskId, (ring = { events: [], at: [], head: 0 }));
    ring.events.push(event);
    ring.at.push(now);
    this.order.push(event.taskId);
    const oldest = now - this.retentionMs;
    while (this.size > this.maxEvents || this.oldestAt() < oldest) this.dropOldest();
  }

  /**
   * The kept events of `taskId` after `afterVersion` up to `currentVersion`, or undefined when
   * the one right after the cursor is gone (or the cursor is ahead of the task).
   */
  after(taskId: string, afterVersion: number, currentVersion: number): LoggedEvent[] | undefined {
    if (afterVersion > currentVersion || afterVersion < 0) return undefined;
    if (afterVersion === currentVersion) return [];
    const ring = this.rings.get(taskId);
    if (ring === undefined) return undefined;
    const { events, at, head } = ring;
    const first = events[head]?.version;
    if (first === undefined || first > afterVersion + 1) return undefined;
    const start = head + (afterVersion + 1 - first);
    if (at[start]! < this.now() - this.retentionMs) return undefined;
    const found = events.slice(start);
    return found.length > 0 && found[found.length - 1]!.version === currentVersion ? found : undefined;
  }

  private oldestAt(): number {
    if (this.size === 0) return Infinity;
    const ring = this.rings.get(this.order[this.orderHead]!)!;
    return ring.at[ring.head]!;
  }

  private dropOldest(): void {
    const taskId = this.order[this.orderHead]!;
    this.order[this.orderHead++] = undefined!;
    if (this.orderHead > 1024 && this.orderHead * 2 > this.order.length) {
      this.order = this.order.slice(this.orderHead);
      this.orderHead = 0;
    }
    const ring = this.rings.get(taskId)!;
    ring.events[ring.head] = undefined!;
    ring.head++;
    if (ring.head === ring.events.length) {
      this.rings.delete(taskId);
    } else if (ring.head > 64 && ring.head * 2 > ring.events.length) {
      ring.events = ring.events.slice(ring.head);
      ring.at = ring.at.slice(ring.head);
      ring.head = 0;
    }
  }
}
