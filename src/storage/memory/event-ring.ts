import type { Part } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { EventLogOptions, LoggedEvent } from "../../lifecycle/index.js";

/** Events kept for resume across all tasks when the operator sets no cap. */
export const DEFAULT_MAX_EVENTS = 100_000;
/** About the bytes the kept events may weigh together when the operator sets no cap. */
export const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;

interface Kept {
  readonly event: LoggedEvent;
  readonly at: number;
  readonly weight: number;
}

/** One task's kept events, oldest first from `first` (dropping one moves `first`: no shift of a long array). */
interface TaskEvents {
  list: Kept[];
  first: number;
}

/**
 * The memory store's log of events for resume, bounded three ways: events older than the
 * retention window go, and so do the oldest events of all tasks once `maxEvents` are kept or they
 * weigh more than `maxBytes`. Each task's events are an array in version order; one queue of
 * every kept event, oldest first, says which goes next.
 */
export class EventRing {
  readonly retentionMs: number;
  private readonly maxEvents: number;
  private readonly maxBytes: number;
  private readonly byTask = new Map<string, TaskEvents>();
  /** Task ids of the kept events, oldest first; `head` is the first not dropped yet. */
  private order: string[] = [];
  private head = 0;
  private weight = 0;

  constructor(
    options: EventLogOptions,
    private readonly now: () => number = Date.now,
  ) {
    this.retentionMs = options.retentionMs;
    this.maxEvents = options.maxEvents ?? DEFAULT_MAX_EVENTS;
    this.maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  }

  /** How many events are kept. */
  get size(): number {
    return this.order.length - this.head;
  }

  /** About the bytes the kept events weigh. */
  get bytes(): number {
    return this.weight;
  }

  /** Keeps `event`, the task's next change; drops the oldest events past the caps. */
  record(event: LoggedEvent): void {
    const at = this.now();
    const kept: Kept = { event, at, weight: weightOf(event) };
    const events = this.byTask.get(event.taskId);
    if (events === undefined) this.byTask.set(event.taskId, { list: [kept], first: 0 });
    else events.list.push(kept);
    this.order.push(event.taskId);
    this.weight += kept.weight;
    this.dropOld(at);
  }

  /**
   * The events after `afterVersion` up to `currentVersion`, in order with no gap; undefined when
   * the log no longer holds all of them (expired) or the cursor is ahead of the task.
   */
  after(taskId: string, afterVersion: number, currentVersion: number): LoggedEvent[] | undefined {
    if (afterVersion > currentVersion || afterVersion < 0) return undefined;
    if (afterVersion === currentVersion) return [];
    this.dropOld(this.now());
    const events = this.byTask.get(taskId);
    if (events === undefined) return undefined;
    let start = -1;
    for (let i = events.first; i < events.list.length; i++) {
      if (events.list[i]!.event.version === afterVersion + 1) {
        start = i;
        break;
      }
    }
    if (start < 0) return undefined;
    const found = events.list.slice(start).map((k) => k.event);
    for (let i = 0; i < found.length; i++) if (found[i]!.version !== afterVersion + 1 + i) return undefined; // a gap: the log was off
    return found[found.length - 1]!.version === currentVersion ? found : undefined;
  }

  /** The task is gone (retention): its events go with it. */
  forget(taskId: string): void {
    const events = this.byTask.get(taskId);
    if (events === undefined) return;
    this.byTask.delete(taskId);
    for (let i = events.first; i < events.list.length; i++) this.weight -= events.list[i]!.weight;
    this.order = this.order.slice(this.head).filter((id) => id !== taskId);
    this.head = 0;
  }

  clear(): void {
    this.byTask.clear();
    this.order = [];
    this.head = 0;
    this.weight = 0;
  }

  private dropOld(now: number): void {
    const oldest = now - this.retentionMs;
    while (this.size > 0) {
      const taskId = this.order[this.head]!;
      const events = this.byTask.get(taskId)!;
      if (this.size <= this.maxEvents && this.weight <= this.maxBytes && events.list[events.first]!.at >= oldest) break;
      this.weight -= events.list[events.first++]!.weight;
      if (events.first === events.list.length) this.byTask.delete(taskId);
      else if (events.first > 1024 && events.first * 2 > events.list.length) {
        events.list = events.list.slice(events.first);
        events.first = 0;
      }
      this.head++;
    }
    // Drop the consumed front of the queue once it is most of it.
    if (this.head > 1024 && this.head * 2 > this.order.length) {
      this.order = this.order.slice(this.head);
      this.head = 0;
    }
  }
}

/**
 * About the bytes an event keeps alive: what its parts carry plus a little per object. Why an
 * estimate: encoding every event to weigh it would cost more than keeping it.
 */
function weightOf(event: LoggedEvent): number {
  switch (event.kind) {
    case "artifact":
      return 128 + partsWeight(event.artifact.parts);
    case "status":
      return 128 + partsWeight(event.status.message?.parts ?? []);
    case "history":
      return 128 + partsWeight(event.message.parts);
  }
}

function partsWeight(parts: readonly Part[]): number {
  let bytes = 0;
  for (const { content } of parts) {
    if (content.case === "text" || content.case === "url") bytes += 2 * content.value.length;
    else if (content.case === "raw") bytes += content.value.byteLength;
    else bytes += 256; // structured data: a rough figure
    bytes += 48;
  }
  return bytes;
}
