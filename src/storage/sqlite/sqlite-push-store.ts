import { clone, fromBinary, toBinary } from "@bufbuild/protobuf";
import type { Database as Db } from "better-sqlite3";
import { TaskPushNotificationConfigSchema, type Task, type TaskPushNotificationConfig } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { type Answer, TaskNotFoundError, type TaskChange, type TaskScope } from "../../lifecycle/index.js";
import {
  type DeliveryConfig,
  PushConfigLimitError,
  type PushConfigStore,
  type PushProtocolVersion,
  type PutConfigOptions,
} from "../../push/ports/push-config-store.js";
import type { OutboxEntry, PushOutbox, TraceContextSource } from "../../push/ports/push-outbox.js";
import { pushPayloadOf, pushSnapshotPayloadOf } from "../push-event.js";

/**
 * What a task staged in the open batch carries for push: the ids of its configs (read once
 * per batch), configs made for it in this batch (an inline config of a task created in the
 * same turn), and the outbox rows its writes owe them. All of it is written by the batch's
 * transaction, with the task: the same commit.
 */
export interface StagedPush {
  readonly configIds: string[];
  readonly newConfigs: Array<{ readonly config: TaskPushNotificationConfig; readonly protocolVersion: PushProtocolVersion }>;
  readonly outbox: StagedOutboxRow[];
}

/** An outbox row staged with its task's write; its seq comes with the INSERT. */
interface StagedOutboxRow {
  readonly scope: TaskScope;
  readonly taskId: string;
  readonly configId: string;
  readonly createdMs: number;
  readonly event: Uint8Array;
  /** The webhook body made with the event (not stored: handed over with the entry). */
  readonly body: string | undefined;
  readonly traceContext: string | undefined;
}

/** What the push store needs from the task store whose database it shares. */
export interface SqlitePushHost {
  /** The push part of a task staged in the open batch, made if missing; undefined when the task is not staged or not ours. */
  stagedPush(scope: TaskScope, taskId: string): { push: StagedPush; created: boolean; snapshot: () => Task } | undefined;
  /** Commits the open batch when it holds the task, so what follows sees its rows. */
  commitIfStaged(taskId: string): void;
  /** Commits the open batch, if any: its outbox rows are written at commit. */
  commitOpenBatch(): void;
  scopeId(scope: TaskScope): number | undefined;
  /** The committed task, whole. */
  snapshot(scope: TaskScope, taskId: string): Task | undefined;
  guarded<T>(operation: () => T): T;
}

interface OutboxRow {
  seq: number;
  task_id: string;
  config_id: string;
  created_ms: number;
  event: Uint8Array;
  trace_context: string | null;
  tenant: string;
  principal: string;
}

/** Tasks whose config ids are kept (see loadStaged). */
const MAX_CACHED_TASKS = 4096;

/**
 * How long delivered entries wait for a batch of task writes to delete them with, before one
 * transaction of their own deletes them: once no delivery ended for `quietMs` (the burst that
 * made them is over), and at most `maxMs` after the oldest (deliveries that never pause).
 * Why not only the second: the rows delivered after a burst's last commit then waited for the
 * next burst's first commit, and every delivery of that burst waited for their deletes
 * (~20 µs each); deleted in the quiet after their own burst, they are on nobody's way, for one
 * small transaction per burst. Why 100 ms: longer than the gaps between a burst's deliveries, or
 * those of a steady 20/s (which the next batch still takes), shorter than the pause between bursts
 * of agents that write every few hundred ms. A crash re-sends at most these delivered events (at
 * least once, A-29).
 */
const REMOVAL_DELAYS = { quietMs: 100, maxMs: 1000 };

const OUTBOX_COLUMNS = `o.seq, t.id AS task_id, o.config_id, o.created_ms, o.event, o.trace_context, s.tenant, s.principal
  FROM push_outbox o JOIN tasks t ON t.pk = o.task_pk JOIN scopes s ON s.scope_id = t.scope_id`;

/**
 * Push configs and the outbox of the SQLite store, in its database (tables of migration 3; the
 * outbox's trace context column, migration 5). The rows a commit added are also kept in memory
 * until listeners have them, so a consumer delivers them without reading them back.
 */
export class SqlitePushStore implements PushConfigStore, PushOutbox {
  private readonly s;
  /** Whether any config exists: until one does, a task write reads nothing more. */
  private anyConfigs: boolean;
  private readonly listeners: Array<(added: number, entries?: readonly OutboxEntry[]) => void> = [];
  /** Rows committed since listeners were last told. */
  private unannounced: OutboxEntry[] = [];
  /** Rows the batch being written inserted: announced if it commits, forgotten if it is lost. */
  private batchEntries: OutboxEntry[] = [];
  private changes = 0;
  /** Outbox rows staged in the open batch (by task writes and inline configs), for the batch's cap. */
  stagedRows = 0;
  /** Config ids by task pk (see loadStaged). */
  private readonly idsByTask = new Map<number, string[]>();
  private traceContext: TraceContextSource | undefined;

  constructor(
    db: Db,
    private readonly host: SqlitePushHost,
  ) {
    this.s = {
      any: db.prepare("SELECT EXISTS (SELECT 1 FROM push_configs)").pluck(),
      configIds: db.prepare("SELECT id FROM push_configs WHERE task_pk = ?").pluck(),
      taskRow: db.prepare("SELECT pk, scope_id FROM tasks WHERE id = ?"),
      countConfigs: db.prepare("SELECT count(*) FROM push_configs WHERE task_pk = ?").pluck(),
      hasConfig: db.prepare("SELECT 1 FROM push_configs WHERE task_pk = ? AND id = ?").pluck(),
      putConfig: db.prepare(
        "INSERT INTO push_configs (task_pk, id, config, protocol_version) VALUES (?, ?, ?, ?) ON CONFLICT DO UPDATE SET config = excluded.config, protocol_version = excluded.protocol_version",
      ),
      getConfig: db.prepare("SELECT config FROM push_configs WHERE task_pk = ? AND id = ?").pluck(),
      getForDelivery: db.prepare("SELECT config, protocol_version FROM push_configs WHERE task_pk = ? AND id = ?"),
      listConfigs: db.prepare("SELECT config FROM push_configs WHERE task_pk = ? AND id > ? ORDER BY id LIMIT ?").pluck(),
      deleteConfig: db.prepare("DELETE FROM push_configs WHERE task_pk = ? AND id = ?"),
      addOutbox: db.prepare("INSERT INTO push_outbox (task_pk, config_id, created_ms, event, trace_context) VALUES (?, ?, ?, ?, ?)"),
      pendingAfter: db.prepare(`SELECT ${OUTBOX_COLUMNS} WHERE o.seq > ? ORDER BY o.seq LIMIT ?`),
      firstOf: db.prepare(
        `SELECT ${OUTBOX_COLUMNS} WHERE o.task_pk = (SELECT pk FROM tasks WHERE id = ?) AND o.config_id = ? AND o.seq > ? ORDER BY o.seq LIMIT 1`,
      ),
      remove: db.prepare("DELETE FROM push_outbox WHERE seq = ?"),
      count: db.prepare("SELECT count(*) FROM push_outbox").pluck(),
    };
    this.put$ = db.transaction((pk: number, config: TaskPushNotificationConfig, options: PutConfigOptions, snapshot: StagedOutboxRow | undefined) => {
      const replaces = this.s.hasConfig.get(pk, config.id) !== undefined;
      if (!replaces && (this.s.countConfigs.get(pk) as number) >= options.maxPerTask) throw new PushConfigLimitError(config.taskId, options.maxPerTask);
      this.s.putConfig.run(pk, config.id, toBinary(TaskPushNotificationConfigSchema, config), options.protocolVersion ?? "1.0");
      return { replaces, added: snapshot === undefined ? undefined : this.insertOutbox(pk, snapshot) };
    });
    this.removeBatch = db.transaction((seqs: number[]) => {
      for (const seq of seqs) this.s.remove.run(seq);
    });
    this.anyConfigs = this.s.any.get() === 1;
  }

  private readonly removeBatch;
  /**
   * Delivered entries not deleted yet: deleted together, by the next batch of task writes (in its
   * transaction) or, when none comes in time (see REMOVAL_DELAYS), by one transaction of
   * their own; not one commit each. A crash before re-delivers them (at least once).
   */
  private removals: number[] = [];
  /** Removals the batch being written deletes: back in `removals` if it is lost. */
  private batchRemovals: number[] = [];
  private removalTimer: NodeJS.Timeout | undefined;
  /** When the oldest and the newest of `removals` were made (performance.now()). */
  private firstRemovalAt = 0;
  private lastRemovalAt = 0;
  /** False once rows may have gone without a removal (config deleted, tasks purged): some of `removals` may have no row. */
  private removalsAreRows = true;

  /** Deletes the removals waiting for their batch (before reads that must not see them, and at close). */
  flushRemovals(): void {
    clearTimeout(this.removalTimer);
    this.removalTimer = undefined;
    if (this.removals.length === 0) return;
    const seqs = this.removals;
    this.removals = [];
    try {
      this.host.guarded(() => this.removeBatch.immediate(seqs));
    } catch (error) {
      this.removals = seqs.concat(this.removals);
      throw error;
    }
  }

  /** Inside the batch transaction of task writes: the removals waiting go with it. */
  writeRemovals(): void {
    if (this.removals.length === 0) return;
    this.batchRemovals = this.removals;
    this.removals = [];
    // Nothing waits now: the next removal starts the delays again. Left running, the timer gave a
    // steady stream of deliveries a transaction of its own every so often.
    clearTimeout(this.removalTimer);
    this.removalTimer = undefined;
    for (const seq of this.batchRemovals) this.s.remove.run(seq);
  }

  private armRemovalTimer(ms: number): void {
    this.removalTimer = setTimeout(this.flushLater, ms);
    this.removalTimer.unref();
  }

  /** The removal timer: flushes once deliveries paused for `quietMs`, or the oldest waited `maxMs`; else waits on. */
  private readonly flushLater = (): void => {
    this.removalTimer = undefined;
    if (this.removals.length === 0) return;
    const now = performance.now();
    const { quietMs, maxMs } = REMOVAL_DELAYS;
    const wait = Math.min(this.lastRemovalAt + quietMs, this.firstRemovalAt + maxMs) - now;
    if (wait > 0) {
      this.armRemovalTimer(wait);
      return;
    }
    try {
      this.flushRemovals();
    } catch {
      // The entries stay and are delivered again after a restart (at least once).
    }
  };

  private readonly put$;

  /**
   * Config ids of a task's row, when a batch first stages it; undefined when it has none. Kept per
   * task (bounded) until one of its configs is put or deleted, or tasks are purged: a task is
   * staged again at each of its writes, and its configs seldom change.
   */
  loadStaged(taskPk: number): StagedPush | undefined {
    if (!this.anyConfigs) return undefined;
    let ids = this.idsByTask.get(taskPk);
    if (ids === undefined) {
      ids = this.s.configIds.all(taskPk) as string[];
      if (this.idsByTask.size >= MAX_CACHED_TASKS) this.idsByTask.clear();
      this.idsByTask.set(taskPk, ids);
    }
    return ids.length === 0 ? undefined : { configIds: ids.slice(), newConfigs: [], outbox: [] };
  }

  /** A staged write of a task with configs: its outbox rows, written with it. */
  recordWrite(push: StagedPush, scope: TaskScope, taskId: string, contextId: string, change: TaskChange): void {
    if (push.configIds.length === 0) return;
    const payload = pushPayloadOf(taskId, contextId, change);
    if (payload === undefined) return;
    const { event, body } = payload;
    const createdMs = Date.now();
    const traceContext = this.traceContext?.();
    for (const configId of push.configIds) push.outbox.push({ scope, taskId, configId, createdMs, event, body, traceContext });
    this.stagedRows += push.configIds.length;
  }

  /** Inside the batch transaction, after the task's row: its new configs and outbox rows. */
  writeStaged(taskPk: number, push: StagedPush): void {
    for (const { config, protocolVersion } of push.newConfigs)
      this.s.putConfig.run(taskPk, config.id, toBinary(TaskPushNotificationConfigSchema, config), protocolVersion);
    if (push.newConfigs.length > 0) this.idsByTask.delete(taskPk);
    for (const row of push.outbox) this.batchEntries.push(this.insertOutbox(taskPk, row));
  }

  /**
   * The batch of task writes committed (or was lost): listeners hear of the rows it added after
   * the commit, outside the write (a microtask later); removals it was to delete wait again if lost.
   */
  batchEnded(committed: boolean): void {
    this.stagedRows = 0;
    if (this.batchRemovals.length > 0) {
      if (!committed) {
        this.removals = this.batchRemovals.concat(this.removals);
        this.firstRemovalAt = this.lastRemovalAt = performance.now();
        if (this.removalTimer === undefined) this.armRemovalTimer(REMOVAL_DELAYS.quietMs);
      }
      this.batchRemovals = [];
    }
    const entries = this.batchEntries;
    if (entries.length === 0) return;
    this.batchEntries = [];
    if (committed) this.announce(entries);
  }

  /** Tasks went (retention): their configs and pending rows went with them. */
  tasksPurged(): void {
    this.changes++;
    this.removalsAreRows = false;
    this.idsByTask.clear();
  }

  readonly revision = (): number => this.changes;

  useTraceContext(source: TraceContextSource): void {
    this.traceContext = source;
  }

  private insertOutbox(taskPk: number, row: StagedOutboxRow): OutboxEntry {
    const seq = Number(this.s.addOutbox.run(taskPk, row.configId, row.createdMs, row.event, row.traceContext ?? null).lastInsertRowid);
    return {
      seq,
      scope: row.scope,
      taskId: row.taskId,
      configId: row.configId,
      createdMs: row.createdMs,
      event: row.event,
      traceContext: row.traceContext,
      body: row.body,
    };
  }

  private announce(entries: readonly OutboxEntry[]): void {
    if (this.listeners.length === 0) return;
    if (this.unannounced.length === 0) queueMicrotask(this.notify);
    for (const entry of entries) this.unannounced.push(entry);
  }

  // PushConfigStore
  /** `put` within the call; throws when refused. */
  private putAtOnce(scope: TaskScope, config: TaskPushNotificationConfig, options: PutConfigOptions): void {
    const own = clone(TaskPushNotificationConfigSchema, config);
    const staged = this.host.stagedPush(scope, config.taskId);
    if (staged?.created) {
      // Created in this turn: the config joins the task's batch and commits with it.
      const { push } = staged;
      const replaces = push.configIds.includes(own.id);
      if (!replaces && push.configIds.length >= options.maxPerTask) throw new PushConfigLimitError(own.taskId, options.maxPerTask);
      if (!replaces) push.configIds.push(own.id);
      else this.changes++; // a new config makes nothing read before untrue
      const at = push.newConfigs.findIndex((c) => c.config.id === own.id);
      const made = { config: own, protocolVersion: options.protocolVersion ?? "1.0" };
      if (at >= 0) push.newConfigs[at] = made;
      else push.newConfigs.push(made);
      if (options.snapshot) {
        const { event, body } = pushSnapshotPayloadOf(staged.snapshot());
        push.outbox.push({ scope, taskId: own.taskId, configId: own.id, createdMs: Date.now(), event, body, traceContext: this.traceContext?.() });
        this.stagedRows++;
      }
      this.anyConfigs = true;
      return;
    }
    this.host.commitIfStaged(own.taskId);
    const pk = this.taskPk(scope, own.taskId);
    if (pk === undefined) throw new TaskNotFoundError(own.taskId);
    const snapshot: StagedOutboxRow | undefined = options.snapshot
      ? {
          scope: { tenant: scope.tenant, principal: scope.principal },
          taskId: own.taskId,
          configId: own.id,
          createdMs: Date.now(),
          ...pushSnapshotPayloadOf(this.host.snapshot(scope, own.taskId)!),
          traceContext: this.traceContext?.(),
        }
      : undefined;
    this.idsByTask.delete(pk);
    const { replaces, added } = this.host.guarded(() => this.put$.immediate(pk, own, options, snapshot));
    if (replaces) this.changes++; // a new config makes nothing read before untrue
    this.anyConfigs = true;
    if (added !== undefined) this.announce([added]);
  }

  /** Within the call (with a task created in this turn: in its batch, so an inline config commits with its task); a refusal is a rejection. */
  put(scope: TaskScope, config: TaskPushNotificationConfig, options: PutConfigOptions): Answer<void> {
    try {
      this.putAtOnce(scope, config, options);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  async get(scope: TaskScope, taskId: string, configId: string): Promise<TaskPushNotificationConfig | undefined> {
    this.host.commitIfStaged(taskId);
    const pk = this.taskPk(scope, taskId);
    if (pk === undefined) return undefined;
    const bytes = this.host.guarded(() => this.s.getConfig.get(pk, configId) as Uint8Array | undefined);
    return bytes && fromBinary(TaskPushNotificationConfigSchema, bytes);
  }

  async getForDelivery(scope: TaskScope, taskId: string, configId: string): Promise<DeliveryConfig | undefined> {
    this.host.commitIfStaged(taskId);
    const pk = this.taskPk(scope, taskId);
    if (pk === undefined) return undefined;
    const row = this.host.guarded(() => this.s.getForDelivery.get(pk, configId) as { config: Uint8Array; protocol_version: PushProtocolVersion } | undefined);
    return row && { config: fromBinary(TaskPushNotificationConfigSchema, row.config), protocolVersion: row.protocol_version };
  }

  async list(scope: TaskScope, taskId: string, page: { limit: number; afterId?: string }): Promise<TaskPushNotificationConfig[]> {
    this.host.commitIfStaged(taskId);
    const pk = this.taskPk(scope, taskId);
    if (pk === undefined) return [];
    const rows = this.host.guarded(() => this.s.listConfigs.all(pk, page.afterId ?? "", page.limit) as Uint8Array[]);
    return rows.map((bytes) => fromBinary(TaskPushNotificationConfigSchema, bytes));
  }

  async delete(scope: TaskScope, taskId: string, configId: string): Promise<void> {
    this.host.commitIfStaged(taskId); // a write staged for the task must not owe this config anything at commit
    const pk = this.taskPk(scope, taskId);
    if (pk !== undefined) {
      this.idsByTask.delete(pk);
      this.host.guarded(() => this.s.deleteConfig.run(pk, configId)); // its outbox rows go by trigger
      this.removalsAreRows = false;
    }
    this.changes++;
  }

  /** A read of the outbox sees every entry owed by the writes answered so far: the batch holding some commits first. */
  private commitStagedRows(): void {
    if (this.stagedRows > 0) this.host.commitOpenBatch();
  }

  // PushOutbox
  async pendingAfter(afterSeq: number, limit: number): Promise<OutboxEntry[]> {
    this.commitStagedRows();
    this.flushRemovals();
    return this.host.guarded(() => (this.s.pendingAfter.all(afterSeq, limit) as OutboxRow[]).map(entryOf));
  }

  async firstOf(taskId: string, configId: string, afterSeq = 0): Promise<OutboxEntry | undefined> {
    this.commitStagedRows();
    const row = this.host.guarded(() => this.s.firstOf.get(taskId, configId, afterSeq) as OutboxRow | undefined);
    return row && entryOf(row);
  }

  async remove(seq: number): Promise<void> {
    const now = performance.now();
    if (this.removals.length === 0) this.firstRemovalAt = now;
    this.lastRemovalAt = now;
    this.removals.push(seq);
    if (this.removalTimer === undefined) this.armRemovalTimer(REMOVAL_DELAYS.quietMs);
  }

  /**
   * The rows less the removals waiting for their batch, which are still rows; no flush of them
   * first (the push service counts once a second while lanes close: a transaction of its own
   * each time). Unless rows went by themselves since (a config deleted, tasks purged), which may
   * have taken waiting removals' rows with them: then they are flushed first, so none is
   * subtracted twice.
   */
  async count(): Promise<number> {
    this.commitStagedRows();
    if (!this.removalsAreRows) {
      this.flushRemovals();
      this.removalsAreRows = true;
    }
    const rows = this.host.guarded(() => this.s.count.get() as number);
    return Math.max(0, rows - new Set(this.removals).size); // an entry may be removed twice
  }

  onAdded(listener: (added: number, entries?: readonly OutboxEntry[]) => void): void {
    this.listeners.push(listener);
  }

  private taskPk(scope: TaskScope, taskId: string): number | undefined {
    const scopeId = this.host.scopeId(scope);
    if (scopeId === undefined) return undefined;
    const row = this.host.guarded(() => this.s.taskRow.get(taskId) as { pk: number; scope_id: number } | undefined);
    return row !== undefined && row.scope_id === scopeId ? row.pk : undefined;
  }

  private readonly notify = (): void => {
    const added = this.unannounced;
    this.unannounced = [];
    for (const listener of this.listeners) listener(added.length, added);
  };
}

function entryOf(row: OutboxRow): OutboxEntry {
  return {
    seq: row.seq,
    scope: { tenant: row.tenant, principal: row.principal },
    taskId: row.task_id,
    configId: row.config_id,
    createdMs: row.created_ms,
    event: row.event,
    traceContext: row.trace_context ?? undefined,
  };
}
