import { fromBinary, toBinary } from "@bufbuild/protobuf";
import type pg from "pg";
import { TaskPushNotificationConfigSchema, type TaskPushNotificationConfig } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { encodeTask } from "../../codec/task-encoder.js";
import { TaskNotFoundError, silentLogger, type CoreLogger, type TaskScope } from "../../lifecycle/index.js";
import {
  type DeliveryConfig,
  PushConfigLimitError,
  type PushConfigStore,
  type PushProtocolVersion,
  type PutConfigOptions,
} from "../../push/ports/push-config-store.js";
import type { OutboxEntry, PushOutbox, TraceContextSource } from "../../push/ports/push-outbox.js";
import { EVENT_KIND } from "./event-rows.js";
import type { NoticeListener, TaskNotifications } from "./notifications.js";
import { pushEventOfRow } from "./push-events.js";
import { decodeArtifacts, decodeMessage, decodeTaskCore } from "../sqlite/task-row-codec.js";
import { TASK_CHANNEL, pushNoticePayload, type PushNotice } from "./task-notice.js";

export interface PostgresPushStoreOptions {
  readonly pool: pg.Pool;
  /** This process's name among the replicas: the owner of the lanes it claims. */
  readonly replicaId: string;
  /** How long a lane claim holds without renewal, ms (the run lease's A2A_LEASE_MS). */
  readonly leaseMs: number;
}

interface OutboxRow {
  seq: string;
  task_id: string;
  config_id: string;
  created_ms: string;
  kind: number;
  body: Buffer;
  trace_context: string | null;
  tenant: string;
  principal: string;
}

const ENTRY_COLUMNS = "o.seq, o.task_id, o.config_id, o.created_ms, o.kind, o.body, o.trace_context, t.tenant, t.principal";
const DEFAULT_POLL_MS = 1000;

/**
 * A replica's lane claims, locked in lane order: the order claimLanes takes lanes in, so a
 * renewal (or a close) and another replica's claim of expired lanes never lock them in opposite
 * orders (a deadlock; see row-lock-order.ts for the task rows).
 */
const LANES_IN_ORDER = "SELECT task_id, config_id FROM a2a_push_lanes WHERE owner = $1 ORDER BY task_id, config_id FOR NO KEY UPDATE";

/**
 * Push configs and the delivery outbox of the PostgreSQL store, shared by every replica
 * (tables of migration 3).
 *
 * Writes: a task write adds its outbox rows itself, in its own statement and so its own
 * transaction, through `a2a_push_owe` (see migrations.ts); a config put takes the task's
 * row lock, so it and the task's writes are ordered, and an inline config's snapshot comes
 * before exactly the events its config gets.
 *
 * Delivery across replicas, once and in order per (task, config): a lane (task, config) is
 * claimed by one replica at a time, with a row in `a2a_push_lanes` (owner, lease_until). Why a
 * claim row rather than holding `FOR UPDATE SKIP LOCKED` row locks or advisory locks while a
 * delivery runs: a delivery is an HTTP request that may take the request timeout, and a lane
 * retries for minutes; a row lock would keep a transaction and a pooled connection open all that
 * time, and an advisory lock lives as long as its session, so a replica that hangs without
 * closing its connections would keep its lanes. A claim row costs one statement at claim and
 * one at release, is renewed for all of a replica's lanes in one statement (as run leases are),
 * and expires by the clock: a replica that dies blocks its lanes for one lease at most. Claims
 * are taken in one statement (INSERT ... ON CONFLICT DO UPDATE WHERE the claim expired), so two
 * replicas never both get one. A lane's claim ends when its holder finds nothing more to send.
 *
 * Wake-ups: a commit that adds rows sends a push notice on the task channel (coalesced here
 * into one scan), the writing replica hears of its own rows at once, and every replica reads
 * the outbox every `pollMs` anyway: a lost notice, or the claims of a replica that died, delay
 * deliveries and never lose them.
 */
export class PostgresPushStore implements PushConfigStore, PushOutbox, NoticeListener {
  private readonly pool: pg.Pool;
  private readonly replicaId: string;
  private readonly leaseMs: number;
  private readonly listeners: Array<(added: number) => void> = [];
  private unannounced = 0;
  private announcing = false;
  /** Lanes this replica holds: renewed while any is. */
  private readonly held = new Set<string>();
  private logger: CoreLogger = silentLogger;
  private timers: NodeJS.Timeout[] = [];
  private stopListening: (() => void) | undefined;
  private renewing = false;
  private closed = false;
  private traceContext: TraceContextSource | undefined;

  constructor(options: PostgresPushStoreOptions) {
    this.pool = options.pool;
    this.replicaId = options.replicaId;
    this.leaseMs = options.leaseMs;
  }

  /** Listens for other replicas' push notices and starts renewing claims and polling. */
  start(options: { readonly notifications: TaskNotifications; readonly logger: CoreLogger; readonly pollMs?: number }): void {
    this.logger = options.logger;
    this.stopListening = options.notifications.add(this);
    const renewer = setInterval(() => void this.renew(), Math.max(50, Math.floor(this.leaseMs / 3)));
    const poller = setInterval(() => this.announce(0), options.pollMs ?? Math.max(50, Math.min(DEFAULT_POLL_MS, Math.floor(this.leaseMs / 2))));
    this.timers = [renewer, poller];
    for (const timer of this.timers) timer.unref();
  }

  /** Stops and gives up this replica's claims, so other replicas take its lanes at once. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const timer of this.timers) clearInterval(timer);
    this.stopListening?.();
    this.held.clear();
    await this.pool.query(`DELETE FROM a2a_push_lanes WHERE (task_id, config_id) IN (${LANES_IN_ORDER})`, [this.replicaId]).catch(() => {});
  }

  /** Entries written from now on keep what `source` returns (the write's traceparent). */
  useTraceContext(source: TraceContextSource): void {
    this.traceContext = source;
  }

  /** The trace context an entry written now keeps (the task write passes it to a2a_push_owe), or null. */
  traceContextNow(): string | null {
    return this.traceContext?.() ?? null;
  }

  /** A task write of this replica committed `added` outbox rows. */
  committedOutbox(added: number): void {
    this.announce(added);
  }

  // NoticeListener: only push notices matter here.
  notice(): void {}

  resumed(): void {
    this.announce(0);
  }

  pushAdded(notice: PushNotice): void {
    if (notice.writer !== this.replicaId) this.announce(notice.added); // our own were announced at commit
  }

  // PushConfigStore
  async put(scope: TaskScope, config: TaskPushNotificationConfig, options: PutConfigOptions): Promise<void> {
    const taskId = config.taskId;
    const added = await this.transaction(async (client) => {
      // The task's row lock orders this put with the task's writes (see a2a_push_owe).
      const { rows } = await client.query<{ tenant: string; principal: string }>({
        name: "a2a_push_lock_task",
        text: "SELECT tenant, principal FROM a2a_tasks WHERE id = $1 FOR UPDATE",
        values: [taskId],
      });
      const owner = rows[0];
      if (owner === undefined || owner.tenant !== scope.tenant || owner.principal !== scope.principal) throw new TaskNotFoundError(taskId);
      const counted = await client.query<{ n: number; replaces: boolean | null }>({
        name: "a2a_push_count_configs",
        text: "SELECT count(*)::int AS n, bool_or(id = $2) AS replaces FROM a2a_push_configs WHERE task_id = $1",
        values: [taskId, config.id],
      });
      const { n, replaces } = counted.rows[0]!;
      if (replaces !== true && n >= options.maxPerTask) throw new PushConfigLimitError(taskId, options.maxPerTask);
      // A replaced config keeps what was queued for it: those deliveries now go where it says.
      await client.query({
        name: "a2a_push_put_config",
        text: `INSERT INTO a2a_push_configs (task_id, id, config, protocol_version) VALUES ($1, $2, $3, $4)
               ON CONFLICT (task_id, id) DO UPDATE SET config = excluded.config, protocol_version = excluded.protocol_version`,
        values: [taskId, config.id, toBinary(TaskPushNotificationConfigSchema, config), options.protocolVersion ?? "1.0"],
      });
      if (!options.snapshot) return 0;
      const { rows: found } = await client.query<{ task: Buffer; artifacts: Buffer | null; history: Buffer[] }>({
        name: "a2a_push_snapshot",
        text: "SELECT task, artifacts, ARRAY(SELECT message FROM a2a_history h WHERE h.task_id = t.id ORDER BY seq) AS history FROM a2a_tasks t WHERE id = $1",
        values: [taskId],
      });
      const snapshot = decodeTaskCore(found[0]!.task);
      snapshot.artifacts = decodeArtifacts(found[0]!.artifacts);
      snapshot.history = found[0]!.history.map(decodeMessage);
      await client.query({
        name: "a2a_push_put_snapshot",
        text: `INSERT INTO a2a_push_outbox (task_id, config_id, created_ms, kind, body, trace_context) VALUES ($1, $2, $3, $4, $5, $6)`,
        values: [taskId, config.id, Date.now(), EVENT_KIND.created, encodeTask(snapshot), this.traceContextNow()],
      });
      await client.query("SELECT pg_notify($1, $2)", [TASK_CHANNEL, pushNoticePayload({ added: 1, writer: this.replicaId })]);
      return 1;
    });
    if (added > 0) this.committedOutbox(added);
  }

  async get(scope: TaskScope, taskId: string, configId: string): Promise<TaskPushNotificationConfig | undefined> {
    return (await this.getForDelivery(scope, taskId, configId))?.config;
  }

  async getForDelivery(scope: TaskScope, taskId: string, configId: string): Promise<DeliveryConfig | undefined> {
    const { rows } = await this.pool.query<{ config: Buffer; protocol_version: PushProtocolVersion }>({
      name: "a2a_push_get_config",
      text: `SELECT c.config, c.protocol_version FROM a2a_push_configs c JOIN a2a_tasks t ON t.id = c.task_id
             WHERE c.task_id = $1 AND c.id = $2 AND t.tenant = $3 AND t.principal = $4`,
      values: [taskId, configId, scope.tenant, scope.principal],
    });
    const row = rows[0];
    return row && { config: fromBinary(TaskPushNotificationConfigSchema, row.config), protocolVersion: row.protocol_version };
  }

  async list(scope: TaskScope, taskId: string, page: { readonly limit: number; readonly afterId?: string }): Promise<TaskPushNotificationConfig[]> {
    const { rows } = await this.pool.query<{ config: Buffer }>({
      name: "a2a_push_list_configs",
      text: `SELECT c.config FROM a2a_push_configs c JOIN a2a_tasks t ON t.id = c.task_id
             WHERE c.task_id = $1 AND t.tenant = $2 AND t.principal = $3 AND c.id > $4 ORDER BY c.id LIMIT $5`,
      values: [taskId, scope.tenant, scope.principal, page.afterId ?? "", page.limit],
    });
    return rows.map((row) => fromBinary(TaskPushNotificationConfigSchema, row.config));
  }

  /** Its outbox rows go with it (foreign key); the task's row lock keeps a write from owing it a row meanwhile. */
  async delete(scope: TaskScope, taskId: string, configId: string): Promise<void> {
    await this.pool.query({
      name: "a2a_push_delete_config",
      text: `WITH t AS (SELECT id FROM a2a_tasks WHERE id = $1 AND tenant = $2 AND principal = $3 FOR UPDATE),
               c AS (DELETE FROM a2a_push_configs c USING t WHERE c.task_id = t.id AND c.id = $4 RETURNING c.task_id)
             DELETE FROM a2a_push_lanes l USING c WHERE l.task_id = c.task_id AND l.config_id = $4`,
      values: [taskId, scope.tenant, scope.principal, configId],
    });
  }

  // PushOutbox
  /** In seq order; across tasks, a row may commit after a higher seq was read (the delivery side claims lanes instead). */
  async pendingAfter(afterSeq: number, limit: number): Promise<OutboxEntry[]> {
    const { rows } = await this.pool.query<OutboxRow>({
      name: "a2a_push_pending_after",
      text: `SELECT ${ENTRY_COLUMNS} FROM a2a_push_outbox o JOIN a2a_tasks t ON t.id = o.task_id WHERE o.seq > $1 ORDER BY o.seq LIMIT $2`,
      values: [afterSeq, limit],
    });
    return rows.map(entryOf);
  }

  /**
   * The lane's next entry, unless another live replica holds the lane (it took it over after our
   * claim expired: the lane is not ours to go on with). Finding nothing ends this replica's claim,
   * in the same statement.
   */
  async firstOf(taskId: string, configId: string, afterSeq = 0): Promise<OutboxEntry | undefined> {
    const { rows } = await this.pool.query<OutboxRow>({
      name: "a2a_push_first_of",
      text: `WITH next AS (
               SELECT ${ENTRY_COLUMNS} FROM a2a_push_outbox o JOIN a2a_tasks t ON t.id = o.task_id
               WHERE o.task_id = $1 AND o.config_id = $2 AND o.seq > $3
                 AND NOT EXISTS (SELECT 1 FROM a2a_push_lanes l WHERE l.task_id = $1 AND l.config_id = $2 AND l.owner <> $4 AND l.lease_until >= now())
               ORDER BY o.seq LIMIT 1),
             released AS (
               DELETE FROM a2a_push_lanes WHERE task_id = $1 AND config_id = $2 AND owner = $4 AND NOT EXISTS (SELECT 1 FROM next))
             SELECT * FROM next`,
      values: [taskId, configId, afterSeq, this.replicaId],
    });
    const row = rows[0];
    if (row === undefined) this.held.delete(laneKey(taskId, configId));
    return row && entryOf(row);
  }

  async remove(seq: number): Promise<void> {
    await this.pool.query({ name: "a2a_push_remove", text: "DELETE FROM a2a_push_outbox WHERE seq = $1", values: [seq] });
  }

  async count(): Promise<number> {
    const { rows } = await this.pool.query<{ n: number }>({ name: "a2a_push_count", text: "SELECT count(*)::int AS n FROM a2a_push_outbox" });
    return rows[0]!.n;
  }

  onAdded(listener: (added: number) => void): void {
    this.listeners.push(listener);
  }

  /**
   * Claims, in one statement, up to `limit` lanes with pending entries that no live replica holds
   * (none, or its claim expired), oldest head first, and returns their heads.
   * - The heads are locked (`FOR UPDATE SKIP LOCKED`): concurrent claims split the lanes between
   *   them, and a head removed since the statement's snapshot (its lane delivered it and was
   *   released meanwhile, by another replica) is skipped instead of being sent a second time.
   * - A lane whose claim another replica committed after the snapshot meets it on the primary key:
   *   the insert then finds a live claim and takes nothing.
   * - No deadlock: the only waits are on lane rows, taken in lane order as renewals take them;
   *   and the heads' tasks are key-shared here (skipped if locked), so the lanes' foreign-key
   *   check never waits for a config delete or a retention sweep that holds the task and waits
   *   for one of these heads (it goes with the config) in turn.
   */
  async claimLanes(limit: number): Promise<OutboxEntry[]> {
    const { rows } = await this.pool.query<OutboxRow>({
      name: "a2a_push_claim_lanes",
      text: `WITH candidates AS (
               SELECT seq FROM (
                 SELECT DISTINCT ON (o.task_id, o.config_id) o.seq FROM a2a_push_outbox o
                 WHERE NOT EXISTS (SELECT 1 FROM a2a_push_lanes l WHERE l.task_id = o.task_id AND l.config_id = o.config_id AND l.lease_until >= now())
                 ORDER BY o.task_id, o.config_id, o.seq) AS firsts
               ORDER BY seq LIMIT $2),
             heads AS (
               SELECT o.seq, o.task_id, o.config_id FROM a2a_push_outbox o JOIN a2a_tasks t ON t.id = o.task_id
               WHERE o.seq IN (SELECT seq FROM candidates)
               ORDER BY o.seq FOR KEY SHARE OF t SKIP LOCKED FOR UPDATE OF o SKIP LOCKED),
             claimed AS (
               INSERT INTO a2a_push_lanes (task_id, config_id, owner, lease_until)
               SELECT task_id, config_id, $1, now() + $3 * interval '1 millisecond' FROM heads ORDER BY task_id, config_id
               ON CONFLICT (task_id, config_id) DO UPDATE SET owner = excluded.owner, lease_until = excluded.lease_until
                 WHERE a2a_push_lanes.lease_until < now()
               RETURNING task_id, config_id)
             SELECT ${ENTRY_COLUMNS} FROM claimed c
               JOIN heads h ON h.task_id = c.task_id AND h.config_id = c.config_id
               JOIN a2a_push_outbox o ON o.seq = h.seq JOIN a2a_tasks t ON t.id = o.task_id
             ORDER BY o.seq`,
      values: [this.replicaId, limit, this.leaseMs],
    });
    for (const row of rows) this.held.add(laneKey(row.task_id, row.config_id));
    return rows.map(entryOf);
  }

  /** Renews every claim of this replica in one statement. */
  async renew(): Promise<void> {
    if (this.renewing || this.closed || this.held.size === 0) return;
    this.renewing = true;
    try {
      await this.pool.query({
        name: "a2a_push_renew",
        text: `UPDATE a2a_push_lanes SET lease_until = now() + $2 * interval '1 millisecond' WHERE (task_id, config_id) IN (${LANES_IN_ORDER})`,
        values: [this.replicaId, this.leaseMs],
      });
    } catch (error) {
      if (!this.closed) this.logger.warn({ err: error, lanes: this.held.size }, "could not renew push lane claims");
    } finally {
      this.renewing = false;
    }
  }

  /** Listeners hear of added rows once per turn, outside the write that added them (also with 0: read the outbox anyway). */
  private announce(added: number): void {
    if (this.closed || this.listeners.length === 0) return;
    this.unannounced += added;
    if (this.announcing) return;
    this.announcing = true;
    setImmediate(() => {
      this.announcing = false;
      const total = this.unannounced;
      this.unannounced = 0;
      for (const listener of this.listeners) listener(total);
    });
  }

  private async transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query("BEGIN");
      const result = await work(client);
      await client.query("COMMIT");
      return result;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }
}

function laneKey(taskId: string, configId: string): string {
  return `${taskId}\u0000${configId}`;
}

function entryOf(row: OutboxRow): OutboxEntry {
  return {
    seq: Number(row.seq),
    scope: { tenant: row.tenant, principal: row.principal },
    taskId: row.task_id,
    configId: row.config_id,
    createdMs: Number(row.created_ms),
    event: pushEventOfRow(row.kind, row.body),
    ...(row.trace_context === null ? {} : { traceContext: row.trace_context }),
  };
}
