import type pg from "pg";
import type { EventLogRead, LoggedEvent, TaskEventLog, TaskScope } from "../../lifecycle/index.js";
import { eventOfRow } from "./event-rows.js";

export interface PostgresEventLogOptions {
  readonly pool: pg.Pool;
  /** How long events are kept for resuming streams, ms: an older cursor is expired. */
  readonly retentionMs: number;
}

interface LogRow {
  head: number;
  state: number;
  version: number | null;
  kind: number | null;
  body: Buffer | null;
  /** Whether the row was written within the retention window (judged by the database's clock). */
  fresh: boolean | null;
}

/**
 * The resume event log on PostgreSQL: the relay's event table, `a2a_task_events`, read by
 * cursor. Every write's event row is committed with the write itself by every replica, so a cursor
 * one replica handed out names a row any other replica reads, also after all of them restarted.
 *
 * One statement, one snapshot: the task's head (version, state) and its events after the cursor
 * are read together, so the events end exactly at the state returned. The rows are gapless
 * (each version is a compare-and-set on the task row), so a complete read has exactly
 * `head - after` rows; fewer means the rows right after the cursor were pruned.
 *
 * Retention: a row written before the window is expired here even while it is still stored
 * (the table is pruned by the store at max(window, what the relay needs), once a minute).
 */
export class PostgresEventLog implements TaskEventLog {
  readonly retentionMs: number;
  private readonly pool: pg.Pool;

  constructor(options: PostgresEventLogOptions) {
    this.pool = options.pool;
    this.retentionMs = options.retentionMs;
  }

  async readAfter(scope: TaskScope, taskId: string, afterVersion: number): Promise<EventLogRead> {
    // Version 1 is "created", which no cursor resumes after into: a cursor names at least version 1.
    if (!Number.isSafeInteger(afterVersion) || afterVersion < 1) {
      const head = await this.head(scope, taskId);
      return head === undefined ? { kind: "not-found" } : { kind: "expired" };
    }
    const { rows } = await this.pool.query<LogRow>({
      name: "a2a_event_log_after",
      text: `SELECT t.version AS head, t.state, e.version, e.kind, e.body,
               e.written_at >= now() - $5 * interval '1 millisecond' AS fresh
             FROM a2a_tasks t
             LEFT JOIN a2a_task_events e ON e.task_id = t.id AND e.version > $4 AND e.version <= t.version
             WHERE t.id = $1 AND t.tenant = $2 AND t.principal = $3
             ORDER BY e.version`,
      values: [taskId, scope.tenant, scope.principal, afterVersion, this.retentionMs],
    });
    const first = rows[0];
    if (first === undefined) return { kind: "not-found" };
    const { head, state } = first;
    if (afterVersion > head) return { kind: "expired" }; // a cursor ahead of the task is not ours to trust
    if (afterVersion === head) return { kind: "events", events: [], state };
    if (first.version !== afterVersion + 1 || first.fresh !== true || rows.length !== head - afterVersion) return { kind: "expired" };
    const events: LoggedEvent[] = [];
    for (const row of rows) {
      const event = eventOfRow(taskId, row.version!, row.kind!, row.body!);
      // A kind this code does not know (written by a newer replica) or "created": not resumable here.
      if (event === undefined || event.kind === "created") return { kind: "expired" };
      events.push(event);
    }
    return { kind: "events", events, state };
  }

  private async head(scope: TaskScope, taskId: string): Promise<number | undefined> {
    const { rows } = await this.pool.query<{ version: number }>({
      name: "a2a_event_log_head",
      text: "SELECT version FROM a2a_tasks WHERE id = $1 AND tenant = $2 AND principal = $3",
      values: [taskId, scope.tenant, scope.principal],
    });
    return rows[0]?.version;
  }
}
