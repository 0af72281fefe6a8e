import type pg from "pg";
import { lockedInIdOrder } from "./row-lock-order.js";
import { StatementBatches } from "./statement-batches.js";
import { TASK_CHANNEL } from "./task-notice.js";

/** One task write, as the repository prepared it (see PostgresTaskRepository.update). */
export interface TaskWrite {
  readonly taskId: string;
  readonly expectedVersion: number;
  readonly state: number;
  readonly statusMicros: number;
  readonly historyLen: number;
  /** The new core blob; null: unchanged. */
  readonly core: Uint8Array | null;
  readonly setArtifacts: boolean;
  readonly artifacts: Uint8Array | null;
  /** Drops the lease (a settling status). */
  readonly settled: boolean;
  /** The history rows this write adds start at this seq. */
  readonly firstSeq: number;
  readonly messages: readonly Uint8Array[];
  readonly eventKind: number;
  readonly eventBody: Uint8Array;
  readonly notice: string;
  /** Whether this kind of event is owed to the task's webhooks (a2a_push_owe, when it has configs). */
  readonly owes: boolean;
  readonly traceContext: string | null;
}

/** What a write found: `written` false when the stored version was not the expected one (or the task is gone). */
export interface WriteResult {
  readonly written: boolean;
  /** Outbox rows it added. */
  readonly owed: number;
}

export interface TaskWritesOptions {
  readonly pool: pg.Pool;
  readonly replicaId: string;
  /** Statements of writes in flight at most; the writes that come meanwhile go together in the next. */
  readonly inFlight: number;
  /** Writes in one statement at most. */
  readonly batchLimit?: number;
}

const DEFAULT_BATCH_LIMIT = 64;

/**
 * Sends task writes to PostgreSQL, several in one statement when they come together: group
 * commit across tasks (statement-batches.ts). Why: under load most of a write's cost, in this
 * process and in PostgreSQL, is per statement (a round trip, a transaction, its commit and
 * NOTIFY), not per row. At most `inFlight` statements run at once; writes made while they do
 * wait and go in the next one, so an idle store sends a write at once and a busy one sends
 * fewer, larger statements.
 *
 * Each write in a statement is its own compare-and-set on its task's version, exactly as alone:
 * a write whose version was taken by another replica matches no row and is reported as not
 * written, and the others are unaffected. They commit together: if the statement fails (an
 * error of one of them, or a deadlock with another replica's statement), each is sent again
 * alone, so an error reaches only the write that caused it. A statement never holds two writes
 * of one task (a task's writes are made one after the other anyway). It locks its rows in id
 * order before updating them, as lease renewal does (row-lock-order.ts): ordering the rows it
 * sends was not enough, since the UPDATE's join may reach them in the heap's order instead.
 */
export class TaskWrites {
  private readonly batches: StatementBatches<TaskWrite, WriteResult>;

  constructor(private readonly options: TaskWritesOptions) {
    this.batches = new StatementBatches({
      inFlight: options.inFlight,
      batchLimit: options.batchLimit ?? DEFAULT_BATCH_LIMIT,
      key: (w) => w.taskId,
      one: (w) => this.single(w),
      many: async (writes) => {
        const results = await this.many(writes);
        return writes.map((w) => {
          const owed = results.get(w.taskId);
          return owed === undefined ? { written: false, owed: 0 } : { written: true, owed };
        });
      },
    });
  }

  write(write: TaskWrite): Promise<WriteResult> {
    return this.batches.add(write);
  }

  private async single(w: TaskWrite): Promise<WriteResult> {
    // The outbox rows are added by a2a_push_owe in the final SELECT: it runs once the UPDATE
    // holds the task's row, and its queries see every config committed by then (see migrations.ts).
    // Called only when the row, as updated, says the task has configs: the flag is set under the
    // same row lock by any config's insert, so a put that committed before this write got the row
    // is seen (the UPDATE rereads the row it waited for), and a later put finds this write done.
    const { rows, rowCount } = await this.options.pool.query<{ owed: number }>({
      name: "a2a_update",
      text: `WITH u AS (
               UPDATE a2a_tasks SET version = $3, state = $4, status_micros = $5, history_len = $6,
                 task = coalesce($7, task), artifacts = CASE WHEN $8 THEN $9 ELSE artifacts END,
                 owner = CASE WHEN $10 THEN NULL ELSE owner END, lease_until = CASE WHEN $10 THEN NULL ELSE lease_until END
               WHERE id = $1 AND version = $2 RETURNING id, push_configs),
             h AS (INSERT INTO a2a_history (task_id, seq, message)
               SELECT u.id, $11 + m.ord - 1, m.message FROM u, unnest($12::bytea[]) WITH ORDINALITY AS m (message, ord)),
             e AS (INSERT INTO a2a_task_events (task_id, version, kind, body) SELECT id, $3, $13, $14 FROM u)
             SELECT pg_notify('${TASK_CHANNEL}', $15), CASE WHEN $16 AND u.push_configs THEN a2a_push_owe(u.id, $13::smallint, $14, $17, $18) ELSE 0 END AS owed FROM u`,
      values: [
        w.taskId,
        w.expectedVersion,
        w.expectedVersion + 1,
        w.state,
        w.statusMicros,
        w.historyLen,
        w.core,
        w.setArtifacts,
        w.artifacts,
        w.settled,
        w.firstSeq,
        w.messages,
        w.eventKind,
        w.eventBody,
        w.notice,
        w.owes,
        this.options.replicaId,
        w.traceContext,
      ],
    });
    return rowCount === 0 ? { written: false, owed: 0 } : { written: true, owed: rows[0]!.owed };
  }

  /** Several writes in one statement, the same per write as `single`; the tasks written, with the outbox rows each added. */
  private async many(batch: readonly TaskWrite[]): Promise<Map<string, number>> {
    const writes = [...batch].sort((a, b) => (a.taskId < b.taskId ? -1 : a.taskId > b.taskId ? 1 : 0));
    const historyTask: string[] = [];
    const historySeq: number[] = [];
    const historyMessage: Uint8Array[] = [];
    for (const w of writes) {
      w.messages.forEach((message, i) => {
        historyTask.push(w.taskId);
        historySeq.push(w.firstSeq + i);
        historyMessage.push(message);
      });
    }
    const column = <T>(pick: (w: TaskWrite) => T) => writes.map(pick);
    const { rows } = await this.options.pool.query<{ id: string; owed: number }>({
      name: "a2a_update_many",
      text: `WITH i AS (
               SELECT * FROM unnest($1::text[], $2::int[], $3::smallint[], $4::bigint[], $5::int[], $6::bytea[], $7::bool[], $8::bytea[],
                 $9::bool[], $10::smallint[], $11::bytea[], $12::text[], $13::bool[], $14::text[])
                 AS i (id, expected, state, status_micros, history_len, task, set_artifacts, artifacts, settled, kind, body, notice, owes, trace)),
             u AS (
               UPDATE a2a_tasks t SET version = i.expected + 1, state = i.state, status_micros = i.status_micros, history_len = i.history_len,
                 task = coalesce(i.task, t.task), artifacts = CASE WHEN i.set_artifacts THEN i.artifacts ELSE t.artifacts END,
                 owner = CASE WHEN i.settled THEN NULL ELSE t.owner END, lease_until = CASE WHEN i.settled THEN NULL ELSE t.lease_until END
               FROM i WHERE t.id = i.id AND t.version = i.expected AND t.id IN (${lockedInIdOrder("id = ANY($1::text[])")})
               RETURNING t.id, t.push_configs),
             h AS (INSERT INTO a2a_history (task_id, seq, message)
               SELECT m.task_id, m.seq, m.message FROM unnest($15::text[], $16::int[], $17::bytea[]) AS m (task_id, seq, message) JOIN u ON u.id = m.task_id),
             e AS (INSERT INTO a2a_task_events (task_id, version, kind, body) SELECT u.id, i.expected + 1, i.kind, i.body FROM u JOIN i ON i.id = u.id)
             SELECT u.id, pg_notify('${TASK_CHANNEL}', i.notice),
               CASE WHEN i.owes AND u.push_configs THEN a2a_push_owe(u.id, i.kind, i.body, $18, i.trace) ELSE 0 END AS owed
             FROM u JOIN i ON i.id = u.id`,
      values: [
        column((w) => w.taskId),
        column((w) => w.expectedVersion),
        column((w) => w.state),
        column((w) => w.statusMicros),
        column((w) => w.historyLen),
        column((w) => w.core),
        column((w) => w.setArtifacts),
        column((w) => w.artifacts),
        column((w) => w.settled),
        column((w) => w.eventKind),
        column((w) => w.eventBody),
        column((w) => w.notice),
        column((w) => w.owes),
        column((w) => w.traceContext),
        historyTask,
        historySeq,
        historyMessage,
        this.options.replicaId,
      ],
    });
    return new Map(rows.map((row) => [row.id, row.owed]));
  }
}
