import type { TaskEvent, TaskEventListener } from "./task-event.js";

/**
 * Fans each task's events out to its listeners, synchronously and in the order published.
 * The task service publishes under its per-task write lock, right after the repository
 * accepted the write, so publish order is version order. A listener that throws is
 * removed and does not disturb the others.
 */
export class EventHub {
  private readonly listeners = new Map<string, Set<TaskEventListener>>();
  private total = 0;

  constructor(private readonly onListenerError: (error: unknown, event: TaskEvent) => void = () => {}) {}

  /** Adds a listener for one task; returns the function that removes it (idempotent). */
  subscribe(taskId: string, listener: TaskEventListener): () => void {
    let set = this.listeners.get(taskId);
    if (!set) this.listeners.set(taskId, (set = new Set()));
    // A function may subscribe twice; wrap it so each subscription is its own entry.
    const entry: TaskEventListener = (event) => listener(event);
    set.add(entry);
    this.total++;
    return () => this.remove(taskId, entry);
  }

  publish(event: TaskEvent): void {
    const set = this.listeners.get(event.taskId);
    if (!set) return;
    // Iterates the live set (no copy per event): a listener that unsubscribes during delivery
    // is simply skipped; listeners never subscribe synchronously from inside a delivery.
    for (const listener of set) {
      try {
        listener(event);
      } catch (error) {
        this.remove(event.taskId, listener);
        this.onListenerError(error, event);
      }
    }
  }

  /** Listeners of one task, or of all tasks: what the leak tests watch. */
  listenerCount(taskId?: string): number {
    return taskId === undefined ? this.total : (this.listeners.get(taskId)?.size ?? 0);
  }

  /** Tasks that have at least one listener. */
  topicCount(): number {
    return this.listeners.size;
  }

  private remove(taskId: string, listener: TaskEventListener): void {
    const set = this.listeners.get(taskId);
    if (!set?.delete(listener)) return;
    this.total--;
    if (set.size === 0) this.listeners.delete(taskId);
  }
}
