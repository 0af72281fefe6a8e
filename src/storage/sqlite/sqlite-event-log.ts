import type { TaskScope, EventLogRead, LoggedEvent, TaskEventLog } from "../../lifecycle/index.js";
import { BATCH, decodeEventRow } from "./event-row-codec.js";
import type { EventRow, TaskStatements } from "./task-statements.js";

/** What the event log needs from the task store it is part of. */
export interface SqliteEventLogHost {
  /** Commits the open batch when it holds the task, so its events are in rows (and published) first. */
  commitIfStaged(taskId: string): void;
  scopeId(scope: TaskScope): number | undefined;
  guarded<T>(operation: () => T): T;
}

/**
 * The events kept for resuming streams, in `task_events`: written by the batch that
 * commits their changes (task-row-writes.ts), read back here, trimmed past the retention window.
 */
export class SqliteEventLog implements TaskEventLog {
  private lastTrim = 0;

  constructor(
    private readonly s: TaskStatements,
    readonly retentionMs: number,
    private readonly host: SqliteEventLogHost,
  ) {}

  /**
   * Events after `afterVersion`, from committed rows (a staged write of the task is committed
   * first, so its events are published before this returns and a stream waiting on this read
   * holds them).
   */
  async readAfter(scope: TaskScope, taskId: string, afterVersion: number): Promise<EventLogRead> {
    this.host.commitIfStaged(taskId);
    return this.host.guarded(() => {
      const scopeId = this.host.scopeId(scope);
      const row = this.s.taskHead.get(taskId) as { pk: number; scope_id: number; version: number; state: number; context_id: string } | undefined;
      if (row === undefined || scopeId === undefined || row.scope_id !== scopeId) return { kind: "not-found" } as const;
      if (afterVersion > row.version || afterVersion < 0) return { kind: "expired" } as const;
      if (afterVersion === row.version) return { kind: "events", events: [], state: row.state } as const;
      const rows = this.s.eventsAfter.all(row.pk, afterVersion) as EventRow[];
      const first = rows[0];
      const oldest = (Date.now() - this.retentionMs) * 1000;
      if (
        first === undefined ||
        (first.first_version ?? first.version) > afterVersion + 1 ||
        first.at_micros < oldest ||
        rows[rows.length - 1]!.version !== row.version
      ) {
        return { kind: "expired" } as const;
      }
      const events: LoggedEvent[] = [];
      let next = afterVersion + 1;
      for (const r of rows) {
        if (r.kind === BATCH && r.body === null) return { kind: "expired" } as const; // its tail row is gone (not reached: emptied only after copying)
        for (const event of decodeEventRow(r, taskId, row.context_id)) {
          if (event.version < next) continue; // a batch row that began at or before the cursor
          if (event.version !== next) return { kind: "expired" } as const; // a gap: the log was off meanwhile
          events.push(event);
          next++;
        }
      }
      return { kind: "events", events, state: row.state } as const;
    });
  }

  /** Drops events past the retention window, at most once a second; run inside the batch transaction. */
  trim(): void {
    const now = Date.now();
    if (now - this.lastTrim < 1000) return;
    this.lastTrim = now;
    this.s.trimEvents.run((now - this.retentionMs) * 1000);
  }
}
