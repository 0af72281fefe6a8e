import type { CommitCallback } from "../../lifecycle/index.js";

/**
 * When the open batch commits, and who waits for it (group commit). A batch opened on an idle
 * store commits at the end of its turn (setImmediate); one opened less than the commit window
 * after the last commit ended waits until the window is over (a timer; Node rounds it up to whole
 * milliseconds), so the writes of the turns in between share the commit.
 */
export class CommitSchedule {
  /** Told when the open batch commits or is lost; undefined while no batch is open. */
  private callbacks: CommitCallback[] | undefined;
  private scheduled = false;
  /** The pending commit's timer, while a batch waits for the commit window to pass. */
  private timer: NodeJS.Timeout | undefined;
  /** When the last commit ended (performance.now()), for the commit window. */
  private lastCommitEnd = Number.NEGATIVE_INFINITY;

  constructor(
    /** See SqliteTaskRepositoryOptions.commitWindowMs. */
    private readonly windowMs: number,
    /** Commits the open batch (and calls `ended`). */
    private readonly commit: () => void,
  ) {}

  get batchOpen(): boolean {
    return this.callbacks !== undefined;
  }

  /** Opens a batch, unless one is open, and schedules its commit. */
  open(): void {
    if (this.callbacks !== undefined) return;
    this.callbacks = [];
    if (!this.scheduled) this.schedule();
  }

  /** Calls `callback` once the open batch committed (error undefined) or was lost; at once when none is open. */
  readonly afterCommit = (callback: CommitCallback): void => {
    if (this.callbacks === undefined)
      callback(undefined); // nothing waits for a commit
    else this.callbacks.push(callback);
  };

  /** The open batch's transaction ended: who waits for it, to be told; the next write opens a new batch. */
  ended(): CommitCallback[] {
    const callbacks = this.callbacks ?? [];
    this.callbacks = undefined;
    if (this.windowMs > 0) this.lastCommitEnd = performance.now();
    return callbacks;
  }

  stop(): void {
    clearTimeout(this.timer);
  }

  private schedule(): void {
    this.scheduled = true;
    const wait = this.lastCommitEnd + this.windowMs - performance.now();
    if (wait > 0) this.timer = setTimeout(this.atTurnEnd, wait);
    else setImmediate(this.atTurnEnd);
  }

  private readonly atTurnEnd = (): void => {
    this.scheduled = false;
    this.timer = undefined;
    this.commit();
  };
}
