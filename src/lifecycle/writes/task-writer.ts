import type { Task, TaskState } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { TaskEventHub } from "../../events/event-hub.js";
import type { TaskEvent } from "../../events/task-event.js";
import { whenAnswered } from "../ports/answer.js";
import { taskCreatedChannel, taskSettledChannel } from "../ports/diagnostics.js";
import type { TaskSizeEstimate } from "./task-size.js";
import { isSettled } from "../model/task-state.js";
import { VersionConflictError, type TaskChange, type TaskRepository, type TaskScope } from "../ports/task-repository.js";

/**
 * What `write` returns for a write already applied (a store that answers within the call): one shared
 * resolved promise instead of a new one per write.
 */
export const WRITTEN: Promise<void> = Promise.resolve();

/** A writer for a task as stored: where it writes, where it publishes, and what it starts from. */
export interface TaskWriterOptions<Run = unknown> {
  readonly repository: TaskRepository;
  readonly hub: TaskEventHub;
  readonly scope: TaskScope;
  readonly taskId: string;
  readonly contextId: string;
  /** The stored version the first write is checked against. */
  readonly version: number;
  /** The stored state (committed, so also what clients may see). */
  readonly state: TaskState;
  /** Called when the writer has nothing left to do (see `idle`): its owner may forget it. */
  readonly onIdle: (writer: TaskWriter<Run>) => void;
  /** The task's running size estimate; undefined = no task size limit. */
  readonly size?: TaskSizeEstimate;
}

/** A write applied but not yet shown to anyone: its change (or the new task) and its version. */
type Unpublished = TaskChange | { readonly kind: "created"; readonly task: Task };

/**
 * The single writer of one task inside this process. Writes are queued and applied one at a
 * time (so the agent's updates and a cancel never race each other into a version conflict),
 * and each accepted write is published to the hub in version order. A conflict means another
 * process wrote: the version is re-read once and the write retried through the repository's
 * guard.
 *
 * On a store that commits later (group commit, see TaskRepository.afterCommit) a write
 * is applied and answered at once, but published, and counted towards "settled", only once it
 * is committed: the agent goes on without waiting for the disk, while no client sees a state
 * that a crash could take back.
 */
export class TaskWriter<Run = unknown> {
  /**
   * The agent run working on this task in this process, if any; set and cleared by the run registry.
   * A type parameter, so that writes know nothing of runs (runs/ depends on writes/, not back).
   */
  run: Run | undefined = undefined;
  private queue: Promise<unknown> = WRITTEN; // resolved: nothing to wait for
  private pending = 0;
  /** Called once the task is settled; undefined when no one waits. */
  private settledListeners: Array<() => void> | undefined;
  /** The state clients may see: the last published status. */
  private publishedState: TaskState;
  /** Writes applied and waiting for their commit, with their versions (deferred stores only). */
  private unpublished: Unpublished[] | undefined;
  private unpublishedVersions: number[] | undefined;
  /** Why the last commit that held writes of this task failed; cleared by the next one that succeeds. */
  private lost: unknown;
  /** Set once another process took the task over: every write is refused with it. */
  private refusal: Error | undefined;

  private readonly repository: TaskRepository;
  private readonly hub: TaskEventHub;
  readonly scope: TaskScope;
  readonly taskId: string;
  readonly contextId: string;
  private version: number;
  private currentState: TaskState;
  private readonly onIdle: (writer: TaskWriter<Run>) => void;
  private readonly size: TaskSizeEstimate | undefined;

  constructor(options: TaskWriterOptions<Run>) {
    this.size = options.size;
    this.repository = options.repository;
    this.hub = options.hub;
    this.scope = options.scope;
    this.taskId = options.taskId;
    this.contextId = options.contextId;
    this.version = options.version;
    this.currentState = options.state;
    this.onIdle = options.onIdle;
    this.publishedState = options.state;
  }

  /** The state after the last accepted write (committed or not): what the next write is checked against. */
  get state(): TaskState {
    return this.currentState;
  }

  /** The task is settled (terminal or interrupted) as far as clients may be told. */
  get settled(): boolean {
    return isSettled(this.publishedState);
  }

  /** Set when writes of this task were lost (rolled back because their commit failed): the error. */
  get commitFailure(): unknown {
    return this.lost;
  }

  /** No write in flight or waiting for its commit, and no one waiting for the task to settle: the service may forget this writer. */
  get idle(): boolean {
    return this.pending === 0 && this.settledListeners === undefined && this.unpublished === undefined;
  }

  /**
   * `limited`: an agent's write, refused (TaskTooLargeError, nothing applied) when it would make
   * the task larger than the task size limit. The service's own writes (cancel, failure) are small
   * and always go through, within the headroom the limit leaves below the maximum message size.
   */
  write(change: TaskChange, limited = false): Promise<void> {
    if (this.refusal !== undefined) return Promise.reject(this.refusal);
    if (this.size !== undefined) {
      try {
        this.size.add(this.taskId, change, limited);
      } catch (error) {
        return Promise.reject(error);
      }
    }
    // An idle writer applies at once: the queue has nothing to wait for, and going through it
    // would cost a promise and a microtask per write.
    const result = this.pending++ === 0 ? this.apply(change) : this.queue.then(() => this.apply(change));
    if (result === WRITTEN) {
      // Applied already (a synchronous store): nothing to queue behind. A method call, not
      // `this.done()`: that arrow is a new function per writer, and V8 threw away the agent's
      // optimized write path at each new task's first write for calling another function here.
      this.writeEnded();
      return result;
    }
    // Why one then(done, done) and not catch().finally(): the same queue, two fewer promises per write.
    this.queue = result.then(this.done, this.done);
    return result;
  }

  /** Publishes "created" for the task this writer was made for, as its other writes are: once committed. */
  announceCreated(task: Task): void {
    this.accepted({ kind: "created", task }, this.version);
  }

  /**
   * Calls `listener` once the task is settled (terminal or interrupted) as far as clients may
   * be told, or once writes of the task were lost (see `commitFailure`); the caller checks
   * `settled` first (a settled task calls nothing). A task another instance took over never
   * settles here: `listener` is called at once. Why here and not a hub listener: the writer
   * already sees every state change, so a blocking caller waits without a subscription of its
   * own. Why a callback and not a promise: the caller races it with the client going away, and
   * two promises per call were the cost of doing that with one. While someone waits the writer
   * is not idle, so the service keeps it and every write to the task in this process goes
   * through it.
   */
  onSettled(listener: () => void): void {
    if (this.refusal !== undefined) return listener(); // taken over: the waiters were woken already, and this one comes late
    // A one-entry literal at first: an empty array's first push reserves 17 slots.
    if (this.settledListeners === undefined) this.settledListeners = [listener];
    else this.settledListeners.push(listener);
  }

  /**
   * Another process settled the task (a cancel on another replica): what this writer knows of
   * it is stale. Whoever waits for it to settle is told now; its next write finds the stored
   * version and is judged against the settled state.
   */
  settledElsewhere(state: TaskState): void {
    this.currentState = this.publishedState = state;
    this.callSettledListeners();
    if (this.idle) this.onIdle(this);
  }

  /**
   * Another process took the task over (this process's lease on it ran out): from now on this
   * writer refuses every write, so neither the stopped agent nor the end of its run writes over
   * the new owner's work. Whoever waits for the task is woken and reads it as it is.
   */
  takenOver(): void {
    this.refusal ??= new Error(`task ${this.taskId} was taken over by another instance; this one writes nothing more to it`);
    this.callSettledListeners();
    if (this.idle) this.onIdle(this);
  }

  /** A write ended, either way. */
  private writeEnded(): void {
    if (--this.pending === 0 && this.idle) this.onIdle(this);
  }

  /** `writeEnded` for a queued write's promise. */
  private readonly done = (): void => this.writeEnded();

  /**
   * Applies `change`: WRITTEN when the store answered within the call, else a promise; a rejection
   * if refused. A version conflict (another process wrote) is retried once at the stored version.
   */
  private apply(change: TaskChange): Promise<void> {
    const answer = this.repository.update(this.scope, this.taskId, this.version, change);
    if (!(answer instanceof Promise)) {
      this.accepted(change, answer);
      return WRITTEN;
    }
    return answer.then(
      (version) => this.accepted(change, version),
      (error: unknown) => {
        if (!(error instanceof VersionConflictError)) throw error;
        return whenAnswered(this.repository.update(this.scope, this.taskId, error.actual, change), (version) => this.accepted(change, version));
      },
    );
  }

  private accepted(change: Unpublished, version: number): void {
    this.version = version;
    if (change.kind === "status") this.currentState = change.status.state;
    const afterCommit = this.repository.afterCommit;
    if (afterCommit === undefined) {
      this.publish(change, version);
      return;
    }
    if (this.unpublished === undefined) {
      // One-entry literals at first: an empty array's first push reserves 17 slots.
      this.unpublished = [change];
      this.unpublishedVersions = [version];
      afterCommit(this.committed); // one callback per batch, not per write
      return;
    }
    this.unpublished.push(change);
    this.unpublishedVersions!.push(version);
  }

  /** The store's commit of this writer's applied writes ended: publish them, or give up on them. */
  private readonly committed = (error: unknown): void => {
    const changes = this.unpublished!;
    const versions = this.unpublishedVersions!;
    this.unpublished = this.unpublishedVersions = undefined;
    if (error === undefined) {
      this.lost = undefined;
      for (let i = 0; i < changes.length; i++) this.publish(changes[i]!, versions[i]!);
    } else {
      // Rolled back: the next write finds the stored version (a conflict, retried) or no task.
      this.lost = error;
      this.currentState = this.publishedState;
      this.callSettledListeners();
    }
    if (this.idle) this.onIdle(this);
  };

  private publish(change: Unpublished, version: number): void {
    if (this.hub.hasListeners(this.taskId)) this.hub.publish(eventOf(change, version, this.taskId, this.contextId));
    if (change.kind === "created" && taskCreatedChannel.hasSubscribers) taskCreatedChannel.publish({ contextId: this.contextId });
    if (change.kind !== "status") return;
    this.publishedState = change.status.state;
    if (!isSettled(this.publishedState)) return;
    if (taskSettledChannel.hasSubscribers) taskSettledChannel.publish({ state: this.publishedState });
    this.callSettledListeners();
  }

  private callSettledListeners(): void {
    const listeners = this.settledListeners;
    if (listeners === undefined) return;
    this.settledListeners = undefined;
    for (const listener of listeners) listener();
  }
}

function eventOf(change: Unpublished, version: number, taskId: string, contextId: string): TaskEvent {
  switch (change.kind) {
    case "created":
      return { kind: "created", version, taskId, contextId, task: change.task };
    case "status":
      return { kind: "status", version, taskId, contextId, status: change.status };
    case "artifact":
      return { kind: "artifact", version, taskId, contextId, artifact: change.artifact, append: change.append, lastChunk: change.lastChunk };
    case "history":
      return { kind: "history", version, taskId, contextId, message: change.message };
  }
}
