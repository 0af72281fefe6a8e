import type { Artifact, Task } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { TaskChange } from "../ports/task-repository.js";

/**
 * Ruling A-34: no reply exceeds the maximum message size. The core knows no wire format, so the
 * edge hands it `measureTask` (the encoded size of a task) with the limits it derived.
 */
export interface TaskSizeLimits {
  /** The largest reply a client can receive (the gRPC maximum message size). */
  readonly maxResponseBytes: number;
  /** The largest a task may grow through agent writes; below maxResponseBytes, so a reply holding it fits. */
  readonly maxTaskBytes: number;
  readonly measureTask: (task: Task) => number;
  /** Same length as measureTask, for the pieces of one write (measured per write, never sent): defaults to measureTask. */
  readonly measurePiece?: (task: Task) => number;
  /**
   * What `artifact` adds to a task's encoded size: the length measurePiece gives a task holding
   * only it. Why apart: it is measured for every streamed chunk, and building a task around each
   * chunk to measure it cost more than the measuring. Defaults to that.
   */
  readonly measureArtifact?: (artifact: Artifact) => number;
}

/** An agent write would make its task larger than the task size limit: refused, nothing applied. */
export class TaskTooLargeError extends Error {
  constructor(
    readonly taskId: string,
    readonly limitBytes: number,
    readonly wouldBeBytes: number,
  ) {
    super(
      `task ${taskId} would grow to about ${wouldBeBytes} bytes, over the task size limit of ${limitBytes} bytes (derived from A2A_MAX_MESSAGE_BYTES); the write was refused and the task is unchanged`,
    );
    this.name = "TaskTooLargeError";
  }
}

/** A single task is larger than a reply may be on its own (stored before a lower limit was set). */
export class ReplyTooLargeError extends Error {
  constructor(
    readonly taskId: string,
    readonly bytes: number,
    readonly limitBytes: number,
  ) {
    super(
      `task ${taskId} is ${bytes} bytes, more than the maximum message size of ${limitBytes} bytes; list with include_artifacts=false or a small history_length, or raise A2A_MAX_MESSAGE_BYTES`,
    );
    this.name = "ReplyTooLargeError";
  }
}

const EMPTY = { id: "", contextId: "", status: undefined, artifacts: [], history: [], metadata: undefined };

/** Bytes a piece adds to its task, measured as a task holding only that piece: O(change), not O(task). */
export function pieceBytes(measure: (task: Task) => number, piece: Partial<Pick<Task, "status" | "artifacts" | "history">>): number {
  return measure({ ...EMPTY, ...piece } as unknown as Task);
}

/**
 * A running estimate of one task's encoded size, kept by its writer. Over, never under: a write
 * refused by the store later still counts, an appended chunk counts with a header of its own.
 */
export class TaskSizeEstimate {
  #bytes: number;
  #statusBytes: number;
  /** Each artifact's share, so that replacing one counts only the difference. */
  readonly #artifactBytes = new Map<string, number>();
  /** The artifact written last and its share, also in #artifactBytes: a stream appends to one artifact, chunk after chunk. */
  #lastArtifactId: string | undefined;
  #lastArtifactShare = 0;
  readonly #measure: (task: Task) => number;
  readonly #measureArtifact: (artifact: Artifact) => number;

  constructor(
    private readonly limits: TaskSizeLimits,
    task: Task,
  ) {
    this.#bytes = limits.measureTask(task);
    const piece = (this.#measure = limits.measurePiece ?? limits.measureTask);
    this.#measureArtifact = limits.measureArtifact ?? ((artifact) => pieceBytes(piece, { artifacts: [artifact] }));
    for (const artifact of task.artifacts) this.#artifactBytes.set(artifact.artifactId, this.#measureArtifact(artifact));
    this.#statusBytes = task.status === undefined ? 0 : pieceBytes(piece, { status: task.status });
  }

  /**
   * Counts `change` in; with `limited`, first throws TaskTooLargeError (counting nothing) when the
   * task would go over the limit.
   */
  add(taskId: string, change: TaskChange, limited: boolean): void {
    const measure = this.#measure;
    let delta: number;
    let statusBytes = this.#statusBytes;
    let artifactShare: number | undefined;
    let artifactId: string | undefined;
    switch (change.kind) {
      case "status":
        statusBytes = pieceBytes(measure, { status: change.status });
        delta = statusBytes - this.#statusBytes + (change.status.message ? pieceBytes(measure, { history: [change.status.message] }) : 0);
        break;
      case "artifact": {
        const bytes = this.#measureArtifact(change.artifact);
        artifactId = change.artifact.artifactId;
        const before = artifactId === this.#lastArtifactId ? this.#lastArtifactShare : (this.#artifactBytes.get(artifactId) ?? 0);
        // Appended: the new parts add to what is there (counted with a header of their own: over, not under).
        artifactShare = change.append ? before + bytes : bytes;
        delta = artifactShare - before;
        break;
      }
      case "history":
        delta = pieceBytes(measure, { history: [change.message] });
        break;
    }
    const next = this.#bytes + delta;
    if (limited && delta > 0 && next > this.limits.maxTaskBytes) throw new TaskTooLargeError(taskId, this.limits.maxTaskBytes, next);
    this.#bytes = next;
    this.#statusBytes = statusBytes;
    if (artifactId !== undefined) {
      // The Map is written only when another artifact takes the last one's place.
      if (this.#lastArtifactId !== undefined && this.#lastArtifactId !== artifactId) this.#artifactBytes.set(this.#lastArtifactId, this.#lastArtifactShare);
      this.#lastArtifactId = artifactId;
      this.#lastArtifactShare = artifactShare!;
    }
  }
}
