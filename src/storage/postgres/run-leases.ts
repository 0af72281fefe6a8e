import type pg from "pg";
import type { TaskState } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { type CoreLogger, type RunLeases, type RunLost, type StoredTask, type TaskScope, isSettled, isTerminal } from "../../lifecycle/index.js";
import type { NoticeListener, TaskNotifications } from "./notifications.js";
import { lockedInIdOrder } from "./row-lock-order.js";
import type { PostgresTaskRepository } from "./postgres-task-repository.js";
import type { HeardNotice } from "./task-notice.js";

export interface PostgresRunLeasesOptions {
  readonly pool: pg.Pool;
  readonly repository: PostgresTaskRepository;
  readonly notifications: TaskNotifications;
  readonly replicaId: string;
  readonly leaseMs: number;
  readonly logger: CoreLogger;
}

const INTERRUPTED = "(6, 8)"; // INPUT_REQUIRED, AUTH_REQUIRED

/**
 * Run ownership among replicas (the core's RunLeases port) on the task rows' `owner` and
 * `lease_until`. The tasks this replica runs are renewed together, one statement every third of
 * the lease. A run stops when its task is written by another replica (a cancel: heard from the
 * write's notice at once) or when a renewal finds it is no longer this replica's (the same news
 * if the notice was lost, or the lease ran out and another replica took the task over).
 */
export class PostgresRunLeases implements RunLeases, NoticeListener {
  private readonly held = new Map<string, RunLost>();
  private readonly renewer: NodeJS.Timeout;
  private readonly stopListening: () => void;
  /** The renewal in flight, if any. */
  private renewing: Promise<void> | undefined;
  /** A notice came while a renewal was in flight: renew once more when it ends. */
  private renewAgain = false;
  private closed = false;

  constructor(private readonly options: PostgresRunLeasesOptions) {
    this.stopListening = options.notifications.add(this);
    this.renewer = setInterval(() => void this.renew(), Math.max(50, Math.floor(options.leaseMs / 3)));
    this.renewer.unref();
  }

  hold(taskId: string, lost: RunLost): void {
    this.held.set(taskId, lost);
  }

  release(taskId: string, state: TaskState | undefined): void {
    if (!this.held.delete(taskId) || (state !== undefined && isSettled(state))) return; // the settling write dropped the lease already
    // Left active (a write failed): no owner, so the orphan sweep settles it by the restart rule.
    this.options.pool
      .query({
        name: "a2a_lease_release",
        text: "UPDATE a2a_tasks SET owner = NULL, lease_until = NULL WHERE id = $1 AND owner = $2",
        values: [taskId, this.options.replicaId],
      })
      .catch((error: unknown) => this.options.logger.warn({ err: error, task_id: taskId }, "could not release a task's lease; it runs out by itself"));
  }

  async claim(scope: TaskScope, taskId: string): Promise<boolean> {
    const { rowCount } = await this.options.pool.query({
      name: "a2a_lease_claim",
      text: `UPDATE a2a_tasks SET owner = $4, lease_until = now() + $5 * interval '1 millisecond'
             WHERE id = $1 AND tenant = $2 AND principal = $3 AND state IN ${INTERRUPTED}
               AND (owner IS NULL OR owner = $4 OR lease_until < now())`,
      values: [taskId, scope.tenant, scope.principal, this.options.replicaId, this.options.leaseMs],
    });
    return rowCount === 1;
  }

  /** Active tasks whose owner's lease ran out (or that have none), now leased to this replica. */
  async orphans(): Promise<Array<{ scope: TaskScope; task: StoredTask }>> {
    const taken = await this.options.repository.takeOrphans();
    for (const { task } of taken) this.options.logger.info({ task_id: task.task.id }, "took over a task whose replica stopped renewing its lease");
    return taken;
  }

  /**
   * Another replica wrote a task this one runs. A terminal state (a cancel) stops the run at once:
   * a terminal task stays so, so such a notice is never older than this replica's hold. Any other
   * state may be old news: the LISTEN connection is not ordered with the pool's, so the notices of
   * the previous run's last writes (its INPUT_REQUIRED) can arrive after this replica claimed the
   * task for a follow-up. The row decides then (a renewal, now): only an owner that is not this
   * replica stops the run.
   */
  notice(notice: HeardNotice): void {
    if (notice.writer === this.options.replicaId) return;
    const lost = this.held.get(notice.taskId);
    if (lost === undefined) return;
    if (!isTerminal(notice.state)) {
      if (this.renewing !== undefined) this.renewAgain = true; // the one in flight may have read the row before that write
      void this.renew();
      return;
    }
    this.held.delete(notice.taskId);
    lost(notice.taskId, notice.state);
  }

  resumed(): void {
    void this.renew();
  }

  /** Renews every held lease; a task that comes back not ours any more stops its run. Resolves when the renewal in flight has ended. */
  renew(): Promise<void> {
    if (this.renewing !== undefined) return this.renewing;
    if (this.closed || this.held.size === 0) return Promise.resolve();
    this.renewing = this.renewHeld().finally(() => {
      this.renewing = undefined;
      if (!this.renewAgain) return;
      this.renewAgain = false;
      void this.renew();
    });
    return this.renewing;
  }

  private async renewHeld(): Promise<void> {
    const ids = [...this.held.keys()];
    try {
      const { rows } = await this.options.pool.query<{ id: string; state: number; owner: string | null }>({
        name: "a2a_lease_renew",
        text: `WITH renewed AS (
                 UPDATE a2a_tasks SET lease_until = now() + $3 * interval '1 millisecond'
                 WHERE id IN (${lockedInIdOrder("id = ANY($1) AND owner = $2")}) RETURNING id)
               SELECT t.id, t.state, t.owner FROM a2a_tasks t WHERE t.id = ANY($1) AND t.id NOT IN (SELECT id FROM renewed)`,
        values: [ids, this.options.replicaId, this.options.leaseMs],
      });
      for (const row of rows) {
        const lost = this.held.get(row.id);
        if (lost === undefined) continue; // released meanwhile
        if (row.owner === null && !isTerminal(row.state)) continue; // interrupted and released by its run ending right now
        this.held.delete(row.id);
        lost(row.id, row.state as TaskState);
      }
    } catch (error) {
      if (!this.closed) this.options.logger.warn({ err: error, tasks: ids.length }, "could not renew run leases");
    }
  }

  /**
   * Stops renewing. The leases of runs left active (an agent that resumes after a restart keeps
   * its tasks WORKING) run out now, so another replica takes them over without waiting.
   */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.renewer);
    this.stopListening();
    await this.options.pool
      .query(`UPDATE a2a_tasks SET lease_until = now() WHERE id IN (${lockedInIdOrder("owner = $1 AND state IN (1, 2)")})`, [this.options.replicaId])
      .catch(() => {});
    this.held.clear();
  }
}
