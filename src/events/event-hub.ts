import type { TaskEvent, TaskEventListener } from "./task-event.js";

/**
 * Listeners served in one go; a task with more gets each event in slices, one event-loop turn
 * apart. Why: a stream write only leaves the process once the loop turns, so delivering one event
 * to 500 streams in one go held every byte back until the last stream had been written (~5 ms);
 * in slices the first streams' bytes are on the wire while the rest are written.
 */
export const LISTENERS_PER_TURN = 128;

interface Entry {
  readonly listener: TaskEventListener;
  active: boolean;
}

/** Events of one task still being delivered in slices, oldest first. */
interface Backlog {
  readonly events: Array<{ readonly event: TaskEvent; readonly entries: readonly Entry[] }>;
  /** Next entry of the oldest event. */
  next: number;
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
export class EventHub {
  private readonly listeners = new Map<string, Set<Entry>>();
  private readonly backlogs = new Map<string, Backlog>();
  private total = 0;

  constructor(private readonly onListenerError: (error: unknown, event: TaskEvent) => void = () => {}) {}

  /** Adds a listener for one task; returns the function that removes it (idempotent). */
  subscribe(taskId: string, listener: TaskEventListener): () => void {
    let set = this.listeners.get(taskId);
    if (!set) this.listeners.set(taskId, (set = new Set()));
    const entry: Entry = { listener, active: true };
    set.add(entry);
    this.total++;
    return () => this.remove(taskId, entry);
  }

  publish(event: TaskEvent): void {
    const set = this.listeners.get(event.taskId);
    if (!set) return;
    const backlog = this.backlogs.get(event.taskId);
    if (backlog !== undefined) {
      backlog.events.push({ event, entries: [...set] });
      return;
    }
    if (set.size <= LISTENERS_PER_TURN) {
      // Iterates the live set (no copy per event): a listener that unsubscribes during delivery
      // is simply skipped; listeners never subscribe synchronously from inside a delivery.
      for (const entry of set) this.deliver(entry, event);
      return;
    }
    const started: Backlog = { events: [{ event, entries: [...set] }], next: 0 };
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
    while (budget > 0 && backlog.events.length > 0) {
      const { event, entries } = backlog.events[0]!;
      const end = Math.min(entries.length, backlog.next + budget);
      for (let i = backlog.next; i < end; i++) if (entries[i]!.active) this.deliver(entries[i]!, event);
      budget -= end - backlog.next;
      backlog.next = end;
      if (end === entries.length) {
        backlog.events.shift();
        backlog.next = 0;
      }
    }
    if (backlog.events.length === 0) this.backlogs.delete(taskId);
    else setImmediate(() => this.drain(taskId, backlog));
  }

  private deliver(entry: Entry, event: TaskEvent): void {
    try {
      entry.listener(event);
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
