import type { TaskState } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { EventHub } from "../events/event-hub.js";
import type { TaskEvent } from "../events/task-event.js";
import { isSettled } from "./task-state.js";
import { VersionConflictError, type ImmediateTaskRepository, type TaskChange, type TaskRepository, type TaskScope } from "./task-repository.js";

/**
 * What `write` returns for a write already applied and published (on a synchronous store):
 * one shared settled promise instead of a new one per write.
 */
export const WRITTEN: Promise<void> = Promise.resolve();

/**
 * The single writer of one task inside this process. Writes are queued and applied one at a
 * time (so the agent's updates and a cancel never race each other into a version conflict),
 * and each accepted write is published to the hub before the next one starts: publish order
 * is version order. A conflict means another process wrote: the version is re-read once and
 * the write retried through the repository's guard.
 */
export class TaskWriter {
  private queue: Promise<unknown> = WRITTEN; // settled: nothing to wait for
  private pending = 0;
  /** Called once the task is settled; undefined when no one waits. */
  private settledListeners: Array<() => void> | undefined;

  constructor(
    private readonly repository: TaskRepository,
    private readonly hub: EventHub,
    readonly scope: TaskScope,
    readonly taskId: string,
    readonly contextId: string,
    private version: number,
    private currentState: TaskState,
    private readonly onIdle: (writer: TaskWriter) => void,
  ) {}

  get state(): TaskState {
    return this.currentState;
  }

  /** No write in flight and no one waiting for the task to settle: the service may forget this writer. */
  get idle(): boolean {
    return this.pending === 0 && this.settledListeners === undefined;
  }

  write(change: TaskChange): Promise<void> {
    // An idle writer applies at once: the queue has nothing to wait for, and going through it
    // would cost a promise and a microtask per write.
    const result = this.pending++ === 0 ? this.apply(change) : this.queue.then(() => this.apply(change));
    if (result === WRITTEN) {
      // Applied and published already (a synchronous store): nothing to queue behind.
      this.done();
      return result;
    }
    // Why one then(done, done) and not catch().finally(): the same queue, two fewer promises per write.
    this.queue = result.then(this.done, this.done);
    return result;
  }

  /**
   * Calls `listener` once the task is settled (terminal or interrupted) as far as this writer
   * knows; the caller checks `state` first (a settled task calls nothing). Why here and not a
   * hub listener: the writer already sees every state change, so a blocking caller waits without
   * a subscription of its own. Why a callback and not a promise: the caller races it with the
   * client going away, and two promises per call were the cost of doing that with one.
   * While someone waits the writer is not idle, so the service keeps it and every write to the
   * task in this process goes through it.
   */
  onSettled(listener: () => void): void {
    (this.settledListeners ??= []).push(listener);
  }

  /** A queued write ended, either way. */
  private readonly done = (): void => {
    if (--this.pending === 0) this.onIdle(this);
  };

  private apply(change: TaskChange): Promise<void> {
    const immediate = this.repository.immediate;
    if (immediate !== undefined) return this.applyNow(immediate, change);
    return this.repository.update(this.scope, this.taskId, this.version, change).then(
      (version) => this.accepted(change, version),
      (error: unknown) => {
        if (!(error instanceof VersionConflictError)) throw error;
        return this.repository.update(this.scope, this.taskId, error.actual, change).then((version) => this.accepted(change, version));
      },
    );
  }

  /** `apply` on a synchronous store: WRITTEN once accepted, a rejection if refused. */
  private applyNow(store: ImmediateTaskRepository, change: TaskChange): Promise<void> {
    let version: number;
    try {
      try {
        version = store.updateNow(this.scope, this.taskId, this.version, change);
      } catch (error) {
        if (!(error instanceof VersionConflictError)) throw error;
        version = store.updateNow(this.scope, this.taskId, error.actual, change);
      }
    } catch (error) {
      return Promise.reject(error);
    }
    this.accepted(change, version);
    return WRITTEN;
  }

  private accepted(change: TaskChange, version: number): void {
    this.version = version;
    if (change.kind === "status") this.currentState = change.status.state;
    if (this.hub.hasListeners(this.taskId)) this.hub.publish(eventOf(change, version, this.taskId, this.contextId));
    const listeners = this.settledListeners;
    if (listeners !== undefined && isSettled(this.currentState)) {
      this.settledListeners = undefined;
      for (const listener of listeners) listener();
    }
  }
}

function eventOf(change: TaskChange, version: number, taskId: string, contextId: string): TaskEvent {
  switch (change.kind) {
    case "status":
      return { kind: "status", version, taskId, contextId, status: change.status };
    case "artifact":
      return { kind: "artifact", version, taskId, contextId, artifact: change.artifact, append: change.append, lastChunk: change.lastChunk };
    case "history":
      return { kind: "history", version, taskId, contextId, message: change.message };
  }
}
