import { LimitExceededError, type TaskRepository, type TaskScope } from "../lifecycle/index.js";

/** What a refused caller is told to wait before trying again: tasks leave the store by retention, not on a clock we know. */
const QUOTA_RETRY_MS = 60_000;

/**
 * The optional quota of stored tasks per principal (A2A_LIMIT_TASKS_PER_PRINCIPAL, issue 33,
 * finding 12): a call that would create a task beyond it is refused with RESOURCE_EXHAUSTED.
 * It counts through the store's own ListTasks count (one-row page), so every store supports it
 * as it is. Concurrent creations by one principal may pass it by a few: it bounds, it does not meter.
 */
export class TaskQuota {
  constructor(
    private readonly repository: Pick<TaskRepository, "list">,
    readonly maxTasks: number,
  ) {}

  /** Resolves when `scope` may create one more task; rejects with a LimitExceededError when it may not. */
  async checkRoomFor(scope: TaskScope): Promise<void> {
    const { totalSize } = await this.repository.list(scope, { pageSize: 1, historyLength: 0, includeArtifacts: false });
    if (totalSize < this.maxTasks) return;
    throw new LimitExceededError(
      "TASK_QUOTA_EXCEEDED",
      `principal ${JSON.stringify(scope.principal.slice(0, 64))} has ${totalSize} stored tasks, the most this server keeps per principal (${this.maxTasks}); continue an existing task, or retry once older tasks have expired`,
      QUOTA_RETRY_MS,
    );
  }
}
