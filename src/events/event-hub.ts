import type { TaskEvent, TaskEventListener, TaskEventReceiver } from "./task-event.js";

/**
 * Listeners served in one go; a task with more gets each event in slices, one event-loop turn
 * apart. Why: a stream write only leaves the process once the loop turns, so delivering one event
 * to 500 streams in one go held every byte back until the last stream had been written (~5 ms);
 * in slices the first streams' bytes are on the wire while the rest are written.
 */
export const LISTENERS_PER_TURN = 128;

interface Entry {
  /** Called as `receiver.onTaskEvent(event)`: one call target per kind of listener, not per listener (see TaskEventListener). */
  readonly receiver: TaskEventReceiver;
  /** The hub's publish count when it subscribed: it gets only events numbered above. */
  readonly since: number;
  active: boolean;
}

/**
 * Events of one task still being delivered in slices, oldest first. Only the oldest has a
 * listener list (a copy of the task's listeners when it came up): queued events hold nothing
 * per listener, so an agent that publishes faster than the hub delivers costs one small entry
 * per event, not one per event and listener.
 */
interface Backlog {
  readonly events: Array<{ readonly event: TaskEvent; readonly seq: number }>;
  /** Index of the oldest event in `events` (shifting a long array per event would be quadratic). */
  head: number;
  entries: readonly Entry[];
  /** Next entry to serve the oldest event. */
  next: number;
}

/**
 * Where the lifecycle core publishes each accepted write's event and where streams listen. One
 * process: EventHub. Replicas on PostgreSQL: a relay (src/storage/postgres/event-relay.ts) that
 * also delivers the events other replicas wrote. Either way a listener gets a task's events in
 * version order, each once, from its subscription on.
 */
export interface TaskEventHub {
  /** Adds a listener for one task; returns the function that removes it (idempotent). */
  subscribe(taskId: string, listener: TaskEventListener): () => void;
  /** Whether the task has listeners in this process now (a publisher may skip building an event no one gets). */
  hasListeners(taskId: string): boolean;
  /** An event this process wrote, published right after the write was accepted, in version order. */
  publish(event: TaskEvent): void;
  /** Listeners of one task, or of all tasks: what the leak tests watch. */
  listenerCount(taskId?: string): number;
  /** Tasks that have at least one listener here. */
  topicCount(): number;
}

/**
 * Fans each task's events out to its listeners in the order published. The task service
 * publishes under its per-task write lock, right after the repository accepted the write, so
 * publish order is version order. Up to LISTENERS_PER_TURN listeners get an event before
 * publish() returns; with more, the rest get it in later turns, and later events of that task
 * queue behind it, so every listener still sees every event in order. A listener gets the events
 * published after it subscribed, and stops getting them as soon as it unsubscribes. A listener
 * that throws is removed and does not disturb the others.
 */
export class EventHub implements TaskEventHub {
  private readonly listeners = new Map<string, Set<Entry>>();
  private readonly backlogs = new Map<string, Backlog>();
  private total = 0;
  private published = 0;

  constructor(private readonly onListenerError: (error: unknown, event: TaskEvent) => void = () => {}) {}

  /** Adds a listener for one task; returns the function that removes it (idempotent). */
  subscribe(taskId: string, listener: TaskEventListener): () => void {
    let set = this.listeners.get(taskId);
    if (!set) this.listeners.set(taskId, (set = new Set()));
    const receiver = typeof listener === "function" ? new FunctionReceiver(listener) : listener;
    const entry: Entry = { receiver, since: this.published, active: true };
    set.add(entry);
    this.total++;
    return () => this.remove(taskId, entry);
  }

  /**
   * Whether the task has listeners now. Why: a publisher may skip building an event no one
   * would get (a blocking call's task usually has none); skipping is safe, since a listener
   * that subscribes later gets only events published after it.
   */
  hasListeners(taskId: string): boolean {
    return this.listeners.has(taskId);
  }

  publish(event: TaskEvent): void {
    const seq = ++this.published;
    const set = this.listeners.get(event.taskId);
    if (!set) return;
    const backlog = this.backlogs.get(event.taskId);
    if (backlog !== undefined) {
      backlog.events.push({ event, seq });
      return;
    }
    if (set.size <= LISTENERS_PER_TURN) {
      // Iterates the live set (no copy per event): a listener that unsubscribes during delivery
      // is simply skipped; listeners never subscribe synchronously from inside a delivery.
      for (const entry of set) this.deliver(entry, event);
      return;
    }
    const started: Backlog = { events: [{ event, seq }], head: 0, entries: [...set], next: 0 };
    this.backlogs.set(event.taskId, started);
    this.drain(event.taskId, started);
  }

  /** Listeners of one task, or of all tasks: what the leak tests watch. */
  listenerCount(taskId?: string): number {
    return taskId === undefined ? this.total : (this.listeners.get(taskId)?.size ?? 0);
  }

  /** Tasks that have at least one listener. */
  topicCount(): number {
    return this.listeners.size;
  }

  /** Delivers one slice of a task's backlog, and schedules the next while any is left. */
  private drain(taskId: string, backlog: Backlog): void {
    let budget = LISTENERS_PER_TURN;
    const { events } = backlog;
    while (budget > 0 && backlog.head < events.length) {
      const { event, seq } = events[backlog.head]!;
      const { entries } = backlog;
      const end = Math.min(entries.length, backlog.next + budget);
      for (let i = backlog.next; i < end; i++) {
        const entry = entries[i]!;
        if (entry.active && entry.since < seq) this.deliver(entry, event);
      }
      budget -= end - backlog.next;
      backlog.next = end;
      if (end < entries.length) break;
      backlog.head++;
      backlog.next = 0;
      if (backlog.head < events.length) backlog.entries = [...(this.listeners.get(taskId) ?? [])];
    }
    if (backlog.head > 1024 && backlog.head * 2 > events.length) {
      events.splice(0, backlog.head);
      backlog.head = 0;
    }
    if (backlog.head === events.length || backlog.entries.length === 0) this.backlogs.delete(taskId);
    else setImmediate(() => this.drain(taskId, backlog));
  }

  private deliver(entry: Entry, event: TaskEvent): void {
    try {
      entry.receiver.onTaskEvent(event);
    } catch (error) {
      this.remove(event.taskId, entry);
      this.onListenerError(error, event);
    }
  }

  private remove(taskId: string, entry: Entry): void {
    const set = this.listeners.get(taskId);
    if (!set?.delete(entry)) return;
    entry.active = false;
    this.total--;
    if (set.size === 0) this.listeners.delete(taskId);
  }
}

/** A listener given as a function, called through one method as receivers are. */
class FunctionReceiver implements TaskEventReceiver {
  constructor(private readonly listener: (event: TaskEvent) => void) {}

  onTaskEvent(event: TaskEvent): void {
    this.listener(event);
  }
}
