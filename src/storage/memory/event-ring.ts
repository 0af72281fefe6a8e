import type { Part } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { EventLogOptions, LoggedEvent } from "../../lifecycle/event-log.js";

/** Events kept for resume across all tasks when the operator sets no cap. */
export const DEFAULT_MAX_EVENTS = 100_000;
/** About the bytes the kept events may weigh together when the operator sets no cap. */
export const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;

interface TaskRing {
  /** Oldest first; `head` is the first still kept (dropping from the front by index, not by shift). */
  events: LoggedEvent[];
  at: number[];
  /** Each event's estimated weight (see weightOf). */
  weight: number[];
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
  private readonly maxBytes: number;
  /** Estimated bytes of the kept events. */
  bytes = 0;
  readonly retentionMs: number;

  constructor(
    options: EventLogOptions,
    private readonly now: () => number = Date.now,
  ) {
    this.retentionMs = options.retentionMs;
    this.maxEvents = Math.max(1, options.maxEvents ?? DEFAULT_MAX_EVENTS);
    this.maxBytes = Math.max(1, options.maxBytes ?? DEFAULT_MAX_BYTES);
  }

  /** Events kept, across all tasks. */
  get size(): number {
    return this.order.length - this.orderHead;
  }

  record(event: LoggedEvent): void {
    const now = this.now();
    let ring = this.rings.get(event.taskId);
    if (ring === undefined) this.rings.set(event.taskId, (ring = { events: [], at: [], weight: [], head: 0 }));
    const weight = weightOf(event);
    ring.events.push(event);
    ring.at.push(now);
    ring.weight.push(weight);
    this.bytes += weight;
    this.order.push(event.taskId);
    const oldest = now - this.retentionMs;
    while (this.size > this.maxEvents || this.bytes > this.maxBytes || this.oldestAt() < oldest) this.dropOldest();
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
    this.bytes -= ring.weight[ring.head]!;
    ring.head++;
    if (ring.head === ring.events.length) {
      this.rings.delete(taskId);
    } else if (ring.head > 64 && ring.head * 2 > ring.events.length) {
      ring.events = ring.events.slice(ring.head);
      ring.at = ring.at.slice(ring.head);
      ring.weight = ring.weight.slice(ring.head);
      ring.head = 0;
    }
  }
}

/**
 * About the bytes an event keeps alive: what its parts carry plus a little per object. Why an
 * estimate: encoding every event to weigh it would cost more than keeping it. An event that
 * replaces an artifact keeps its own parts, which the task may no longer hold.
 */
function weightOf(event: LoggedEvent): number {
  if (event.kind === "artifact") return 96 + partsWeight(event.artifact.parts);
  if (event.kind === "status") return 96 + (event.status.message === undefined ? 0 : partsWeight(event.status.message.parts));
  return 64;
}

function partsWeight(parts: readonly Part[]): number {
  let bytes = 0;
  for (const part of parts) {
    const { content } = part;
    if (content.case === "text" || content.case === "url") bytes += 2 * content.value.length;
    else if (content.case === "raw") bytes += content.value.byteLength;
    else bytes += 256; // structured data: a rough figure
    bytes += 48;
  }
  return bytes;
}
