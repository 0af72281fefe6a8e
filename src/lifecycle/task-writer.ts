import type { TaskState } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { EventHub } from "../events/event-hub.js";
import type { TaskEvent } from "../events/task-event.js";
import { VersionConflictError, type TaskChange, type TaskRepository, type TaskScope } from "./task-repository.js";

/**
 * The single writer of one task inside this process. Writes are queued and applied one at a
 * time (so the agent's updates and a cancel never race each other into a version conflict),
 * and each accepted write is published to the hub before the next one starts: publish order
 * is version order. A conflict means another process wrote: the version is re-read once and
 * the write retried through the repository's guard.
 */
export class TaskWriter {
  private queue: Promise<unknown> = Promise.resolve();
  private pending = 0;

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

  get idle(): boolean {
    return this.pending === 0;
  }

  write(change: TaskChange): Promise<void> {
    this.pending++;
    const result = this.queue.then(() => this.apply(change));
    // Why one then(done, done) and not catch().finally(): the same queue, two fewer promises per write.
    this.queue = result.then(this.done, this.done);
    return result;
  }

  /** A queued write ended, either way. */
  private readonly done = (): void => {
    if (--this.pending === 0) this.onIdle(this);
  };

  private async apply(change: TaskChange): Promise<void> {
    try {
      this.version = await this.repository.update(this.scope, this.taskId, this.version, change);
    } catch (error) {
      if (!(error instanceof VersionConflictError)) throw error;
      this.version = await this.repository.update(this.scope, this.taskId, error.actual, change);
    }
    if (change.kind === "status") this.currentState = change.status.state;
    this.hub.publish(eventOf(change, this.version, this.taskId, this.contextId));
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
