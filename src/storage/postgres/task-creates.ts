import type pg from "pg";
import { StatementBatches } from "./statement-batches.js";
import { TASK_CHANNEL } from "./task-notice.js";

/** One new task, as the repository prepared it (see PostgresTaskRepository.create). */
export interface TaskCreate {
  readonly id: string;
  readonly tenant: string;
  readonly principal: string;
  readonly contextId: string;
  readonly state: number;
  readonly statusMicros: number;
  /** The core blob (the task without history and artifacts). */
  readonly core: Uint8Array;
  readonly artifacts: Uint8Array | null;
  /** The history rows, seq 0 onwards. */
  readonly messages: readonly Uint8Array[];
  readonly eventKind: number;
  readonly eventBody: Uint8Array;
  readonly notice: string;
}

export interface TaskCreatesOptions {
  readonly pool: pg.Pool;
  /** The replica a new task is leased to. */
  readonly replicaId: string;
  readonly leaseMs: number;
  /** Statements of creates in flight at most; the creates that come meanwhile go together in the next. */
  readonly inFlight: number;
  readonly batchLimit?: number;
}

/**
 * Inserts new tasks, several in one statement when they come together (as task-writes.ts does
 * for writes): under load a blocking SendMessage's create was one statement of its own, a round
 * trip and a commit each. Each task keeps what it has alone: its row, its history rows, its
 * "created" event row and its notice, committed together; a statement that fails (an id taken:
 * unique violation) is sent again create by create, so the error reaches only that create.
 */
export class TaskCreates {
  private readonly batches: StatementBatches<TaskCreate, void>;

  constructor(private readonly options: TaskCreatesOptions) {
    this.batches = new StatementBatches({
      inFlight: options.inFlight,
      batchLimit: options.batchLimit ?? 64,
      key: (c) => c.id,
      one: (c) => this.one(c),
      many: (cs) => this.many(cs),
    });
  }

  /** Resolves once the task is stored; rejects with the driver's error (code 23505: the id is taken). */
  create(create: TaskCreate): Promise<void> {
    return this.batches.add(create);
  }

  private async one(c: TaskCreate): Promise<void> {
    await this.options.pool.query({
      name: "a2a_create",
      text: `WITH t AS (
               INSERT INTO a2a_tasks (id, tenant, principal, context_id, state, status_micros, version, history_len, task, artifacts, owner, lease_until)
               VALUES ($1, $2, $3, $4, $5, $6, 1, $7, $8, $9, $10, now() + $11 * interval '1 millisecond') RETURNING id),
             h AS (INSERT INTO a2a_history (task_id, seq, message)
               SELECT $1, m.ord - 1, m.message FROM unnest($12::bytea[]) WITH ORDINALITY AS m (message, ord)),
             e AS (INSERT INTO a2a_task_events (task_id, version, kind, body) SELECT id, 1, $13, $14 FROM t)
             SELECT pg_notify('${TASK_CHANNEL}', $15) FROM t`,
      values: [
        c.id,
        c.tenant,
        c.principal,
        c.contextId,
        c.state,
        c.statusMicros,
        c.messages.length,
        c.core,
        c.artifacts,
        this.options.replicaId,
        this.options.leaseMs,
        c.messages,
        c.eventKind,
        c.eventBody,
        c.notice,
      ],
    });
  }

  /** Several creates in one statement, in id order (the order other multi-row statements lock rows in). */
  private async many(creates: TaskCreate[]): Promise<void[]> {
    const sorted = [...creates].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const historyTask: string[] = [];
    const historySeq: number[] = [];
    const historyMessage: Uint8Array[] = [];
    for (const c of sorted) {
      c.messages.forEach((message, i) => {
        historyTask.push(c.id);
        historySeq.push(i);
        historyMessage.push(message);
      });
    }
    const column = <T>(pick: (c: TaskCreate) => T) => sorted.map(pick);
    const { rowCount } = await this.options.pool.query({
      name: "a2a_create_many",
      text: `WITH i AS (
               SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::smallint[], $6::bigint[], $7::int[], $8::bytea[], $9::bytea[],
                 $10::smallint[], $11::bytea[], $12::text[])
                 AS i (id, tenant, principal, context_id, state, status_micros, history_len, task, artifacts, kind, body, notice)),
             t AS (
               INSERT INTO a2a_tasks (id, tenant, principal, context_id, state, status_micros, version, history_len, task, artifacts, owner, lease_until)
               SELECT i.id, i.tenant, i.principal, i.context_id, i.state, i.status_micros, 1, i.history_len, i.task, i.artifacts, $13,
                 now() + $14 * interval '1 millisecond' FROM i ORDER BY i.id
               RETURNING id),
             h AS (INSERT INTO a2a_history (task_id, seq, message)
               SELECT m.task_id, m.seq, m.message FROM unnest($15::text[], $16::int[], $17::bytea[]) AS m (task_id, seq, message) JOIN t ON t.id = m.task_id),
             e AS (INSERT INTO a2a_task_events (task_id, version, kind, body) SELECT t.id, 1, i.kind, i.body FROM t JOIN i ON i.id = t.id)
             SELECT pg_notify('${TASK_CHANNEL}', i.notice) FROM t JOIN i ON i.id = t.id`,
      values: [
        column((c) => c.id),
        column((c) => c.tenant),
        column((c) => c.principal),
        column((c) => c.contextId),
        column((c) => c.state),
        column((c) => c.statusMicros),
        column((c) => c.messages.length),
        column((c) => c.core),
        column((c) => c.artifacts),
        column((c) => c.eventKind),
        column((c) => c.eventBody),
        column((c) => c.notice),
        this.options.replicaId,
        this.options.leaseMs,
        historyTask,
        historySeq,
        historyMessage,
      ],
    });
    // Every row or none: a taken id fails the whole statement (unique violation), never skips a row.
    if (rowCount !== creates.length) throw new Error(`created ${rowCount} of ${creates.length} tasks`);
    return creates.map(() => undefined);
  }
}
