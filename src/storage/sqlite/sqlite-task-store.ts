import { setImmediate as nextTurn } from "node:timers/promises";
import type { Database as Db } from "better-sqlite3";
import type { Message, Task } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { cloneMessage, cloneTask } from "../../codec/task-clone.js";
import {
  type Answer,
  storeCommitChannel,
  type StoreCommit,
  TaskNotFoundError,
  eventAtVersion,
  type EventLogOptions,
  applyChange,
  DuplicateTaskError,
  InvalidChangeError,
  VersionConflictError,
  type CommitCallback,
  type ReadOptions,
  type StoredTask,
  type TaskChange,
  type TaskPage,
  type TaskQuery,
  type TaskRepository,
  type TaskScope,
  INITIAL_STATE,
  isTerminal,
  stateName,
} from "../../lifecycle/index.js";
import { ownChange } from "../owned-change.js";
import { CommitSchedule } from "./commit-schedule.js";
import type { DataFileLock } from "./data-file-lock.js";
import { ScopeIds } from "./scope-ids.js";
import { SqliteEventLog } from "./sqlite-event-log.js";
import { SqlitePushStore } from "./sqlite-push-store.js";
import { badData, isBadDataError } from "./sqlite-store-error.js";
import { newStagedTask, stagedFromKept, stagedFromRow, type StagedTask } from "./staged-task.js";
import { TaskReads } from "./task-reads.js";
import { TaskRowWriter } from "./task-row-writes.js";
import { prepareTaskStatements, type TaskRow, type TaskStatements } from "./task-statements.js";

/** Tasks still going kept in memory between their writes (see `kept`). */
const KEPT_LIMIT = 1000;

/** Writes staged per batch at most: a longer run of writes within one turn commits and starts a new batch. */
const BATCH_WRITE_LIMIT = 1000;
/**
 * Outbox rows (pending webhook deliveries) staged per batch at most: the next write commits the
 * batch first. Why: none of a batch's deliveries can start before its commit, so when many tasks
 * with push configs write in the same turn (100 agents waking together), every delivery waited
 * for all of their writes and their one commit; capped, the first ones commit and go out while
 * the rest are still being written. A commit costs less than one delivery, so few extra commits.
 */
const BATCH_OUTBOX_LIMIT = 16;

/**
 * TaskRepository on SQLite (better-sqlite3, synchronous).
 *
 * A write is checked and applied at once, in memory: the task is read from its row (or taken
 * from the open batch if the turn wrote it already), the version compared (compare-and-set),
 * the shared guard `applyChange` run on it; a refused write changes nothing. The task then
 * waits in the open batch, staged.
 *
 * Group commit: at the end of the event-loop turn (setImmediate) the batch is written in ONE
 * transaction (or, when the last commit ended less than the commit window ago, once the window
 * is over, so a writer that writes once per turn shares one commit between many turns), each staged task to its row once, however many writes it took, with the
 * messages it gained. `create` and `update` answer at once, once applied, and tell of the commit
 * through `afterCommit` (the lifecycle shows a write to clients only then), so an agent can finish
 * a task within the turn and its four writes cost one row write and share one commit. A failed commit loses the whole batch, and everyone who
 * waits for it hears why. Reads never see a write that is not committed, nor miss one that
 * was applied: a read of a staged task (or any list) commits the batch first.
 *
 * Nothing is cached but scope ids, the tasks of the open batch and up to KEPT_LIMIT tasks still
 * going (as their last commit left them), so memory stays flat however many tasks are stored.
 */
export class SqliteTaskRepository implements TaskRepository {
  private readonly s: TaskStatements;
  private readonly tx;
  private readonly scopes: ScopeIds;
  private readonly reads: TaskReads;
  private readonly rows: TaskRowWriter;
  private readonly schedule: CommitSchedule;
  /** The open batch: tasks written this turn, by id. */
  private staged = new Map<string, StagedTask>();
  /**
   * While the callbacks of a commit run: the tasks that commit wrote, as they were written, each
   * handed once to a reader instead of read back from its row. Why: a blocking SendMessage reads
   * its task in the commit's callback, and reading it back (a SELECT of the row and its history,
   * three protobuf decodes) cost a third of SQLite's CPU per call. Only for that window, so a
   * task is never served from memory after anything else could have changed its row.
   */
  private justCommitted: Map<string, StagedTask> | undefined;
  /**
   * Tasks still going (not terminal) as their last commit left them, the oldest first, so the
   * next write to one starts from the object instead of its row. Why: an agent that writes a
   * chunk per turn made every write decode the task and all its artifacts again (quadratic in
   * the answer's size). Exact because this process is the file's only writer (the lock); a task
   * leaves when it is written again, handed to a reader, or its batch is lost.
   */
  private readonly kept = new Map<string, StagedTask>();
  private batchWrites = 0;
  /** Push configs and the outbox of pending deliveries, in this database. */
  readonly push: SqlitePushStore;
  /** Events kept for resuming streams, when asked for. */
  readonly eventLog: SqliteEventLog | undefined;
  private readonly events: SqliteEventLog | undefined;
  /**
   * No stored task has an id above this one (string order). Why: the server's ids are
   * time-ordered (lifecycle/ids.ts), so a new task's id is above every stored one and needs no
   * lookup to be known new; the lookup (an implicit read transaction) was the one read a
   * blocking call still made. Exact as this process is the file's only writer; a lost batch
   * leaves it too high, which only brings the lookup back.
   */
  private highestTaskId: string;

  constructor(
    private readonly db: Db,
    /** Absolute path of the database file, for messages. */
    readonly file: string,
    /** The schema version found at open and the one after migrations. */
    readonly schema: { readonly from: number; readonly to: number },
    private readonly purgeBatchSize: number,
    /** Held while open: one server process per database file. */
    private readonly lock?: DataFileLock,
    eventLog?: EventLogOptions,
    /** See SqliteTaskRepositoryOptions.commitWindowMs. */
    commitWindowMs = 0,
  ) {
    this.s = prepareTaskStatements(db);
    this.scopes = new ScopeIds(this.s, (operation) => this.guarded(operation));
    this.reads = new TaskReads(db, this.s);
    this.schedule = new CommitSchedule(commitWindowMs, () => this.commit());
    this.events =
      eventLog === undefined
        ? undefined
        : new SqliteEventLog(this.s, eventLog.retentionMs, {
            commitIfStaged: (taskId) => {
              if (this.staged.has(taskId)) this.commit();
            },
            scopeId: (scope) => this.scopes.of(scope, false),
            guarded: (operation) => this.guarded(operation),
          });
    this.eventLog = this.events;
    this.highestTaskId = highestStoredId(db.prepare("SELECT max(id) FROM tasks").pluck().get() as string | null);
    // Transaction wrappers are made once too: better-sqlite3 compiles BEGIN/COMMIT per wrapper.
    this.tx = {
      batch: db.transaction(() => {
        for (const staged of this.staged.values()) this.rows.write(staged);
        this.push.writeRemovals(); // delivered webhooks' outbox rows ride along: no commit of their own
        this.events?.trim();
      }),
      list: db.transaction((scope: TaskScope, query: TaskQuery) => this.reads.readPage(this.scopes.of(scope, false), query)),
      purge: db.transaction((statusMicros: number) => this.s.purgeBatch.run(statusMicros, this.purgeBatchSize).changes),
    };
    this.push = new SqlitePushStore(db, {
      stagedPush: (scope, taskId) => {
        const staged = this.staged.get(taskId);
        if (staged === undefined || staged.scopeId !== this.scopes.of(scope, false)) return undefined;
        staged.push ??= { configIds: [], newConfigs: [], outbox: [] };
        const snapshot = () => {
          const task = cloneTask(staged.task);
          task.history = staged.newHistory.map((m) => m);
          return task;
        };
        return { push: staged.push, created: staged.pk === undefined, snapshot };
      },
      commitIfStaged: (taskId) => {
        if (this.staged.has(taskId)) this.commit();
      },
      commitOpenBatch: () => this.commit(),
      scopeId: (scope) => this.scopes.of(scope, false),
      snapshot: (scope, taskId) => this.read(scope, taskId)?.task,
      guarded: (operation) => this.guarded(operation),
    });
    this.rows = new TaskRowWriter(this.s, this.push);
  }
  create(scope: TaskScope, task: Task, handOver = false): Answer<StoredTask> {
    try {
      this.stageNew(scope, task, handOver);
    } catch (error) {
      return Promise.reject(error);
    }
    return { task: handOver ? task : cloneTask(task), version: 1 };
  }

  get(scope: TaskScope, taskId: string, options?: ReadOptions): Answer<StoredTask | undefined> {
    try {
      return this.read(scope, taskId, options);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  update(scope: TaskScope, taskId: string, expectedVersion: number, change: TaskChange): Answer<number> {
    try {
      return this.stageChange(scope, taskId, expectedVersion, change);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** `create` within the call: checked and staged in the open batch; throws when refused. */
  private stageNew(scope: TaskScope, task: Task, handOver: boolean): void {
    if (task.id === "") throw new InvalidChangeError(task.id, "a task needs an id");
    if (task.status === undefined) throw new InvalidChangeError(task.id, "a task needs a status");
    if (task.status.state !== INITIAL_STATE) {
      throw new InvalidChangeError(task.id, `a new task starts in ${stateName(INITIAL_STATE)}, not ${stateName(task.status.state)}`);
    }
    const scopeId = this.scopes.of(scope, true)!;
    this.makeRoom();
    if (this.staged.has(task.id) || (task.id <= this.highestTaskId && this.guarded(() => this.s.taskExists.get(task.id)) !== undefined)) {
      throw new DuplicateTaskError(task.id);
    }
    if (task.id > this.highestTaskId) this.highestTaskId = task.id;
    const own = handOver ? task : cloneTask(task); // unless handed over, the caller keeps its object and may change it
    const history = own.history;
    own.history = [];
    this.stage(task.id, newStagedTask(scopeId, own, history));
  }

  /** A read of committed state: a staged write of the task is committed first. Throws on damage. */
  private read(scope: TaskScope, taskId: string, options?: ReadOptions): StoredTask | undefined {
    if (this.staged.has(taskId)) this.commit();
    const written = this.justCommitted?.get(taskId);
    return this.guarded(() => {
      if (written !== undefined) {
        const handed = this.takeJustCommitted(scope, written, options?.historyLength);
        if (handed !== undefined) return handed;
      }
      const scopeId = this.scopes.of(scope, false);
      if (scopeId === undefined) return undefined;
      const row = this.s.selectTask.get(taskId) as TaskRow | undefined;
      if (row === undefined || row.scope_id !== scopeId) return undefined;
      return { task: this.reads.assemble(row, options?.historyLength, true), version: row.version };
    });
  }

  /** `update` within the call: checked, applied and staged in the open batch; throws when refused. */
  private stageChange(scope: TaskScope, taskId: string, expectedVersion: number, change: TaskChange): number {
    this.makeRoom();
    const scopeId = this.scopes.of(scope, false);
    const known = this.staged.get(taskId);
    const staged = known ?? this.takeKept(taskId) ?? this.guarded(() => this.load(taskId));
    if (staged === undefined || scopeId === undefined || staged.scopeId !== scopeId) throw new TaskNotFoundError(taskId);
    if (staged.version !== expectedVersion) throw new VersionConflictError(taskId, expectedVersion, staged.version);
    const task = staged.task;
    if (change.kind === "artifact" && !staged.artifactsDecoded) {
      this.guarded(() => this.reads.readArtifacts(task, { pk: staged.pk!, artifacts: staged.storedArtifacts, tail_bytes: staged.tailBytes }));
      staged.artifactsDecoded = true;
    }
    const owned = ownChange(change);
    applyChange(task, owned); // throws, and changes nothing, if refused
    // The guard appends messages to the history; they are the ones this write adds.
    for (const message of task.history) staged.newHistory.push(message);
    task.history.length = 0;
    staged.version++;
    if (owned.kind === "artifact" && staged.pk !== undefined) {
      if (staged.newArtifactChanges === undefined) staged.newArtifactChanges = [owned];
      else staged.newArtifactChanges.push(owned);
    }
    if (staged.push !== undefined) this.push.recordWrite(staged.push, scope, taskId, task.contextId, change); // the outbox, in the same commit
    if (this.events !== undefined) {
      const event = eventAtVersion(taskId, task.contextId, staged.version, owned);
      if (staged.newEvents === undefined) staged.newEvents = [event];
      else staged.newEvents.push(event);
    }
    if (change.kind === "status") staged.statusChanged = true;
    else if (change.kind === "artifact") staged.artifactsChanged = true;
    if (known === undefined) this.stage(taskId, staged);
    else this.batchWrites++;
    return staged.version;
  }

  /** Calls `callback` once every write answered so far is committed, or was lost (the error). */
  readonly afterCommit = (callback: CommitCallback): void => this.schedule.afterCommit(callback);

  list(scope: TaskScope, query: TaskQuery): Answer<TaskPage> {
    try {
      this.commit(); // a page shows every write applied so far, committed
      // One read transaction: the count and the page see the same snapshot.
      return this.guarded(() => this.tx.list.deferred(scope, query));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  listActive(): Answer<Array<{ scope: TaskScope; task: StoredTask }>> {
    try {
      this.commit();
      return this.guarded(() =>
        (this.s.active.all() as Array<TaskRow & { tenant: string; principal: string }>).map((row) => ({
          scope: { tenant: row.tenant, principal: row.principal },
          task: { task: this.reads.assemble(row, undefined, true), version: row.version },
        })),
      );
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Deletes in batches of `purgeBatchSize` tasks, each batch one transaction (its history
   * goes with it through ON DELETE CASCADE, its counters through triggers), yielding to the
   * event loop between batches so a large purge never stalls the server.
   */
  async purgeTerminalBefore(statusMicros: number): Promise<number> {
    this.justCommitted = undefined; // rows may go: read them
    let total = 0;
    for (;;) {
      this.commit(); // writes made while the last batch was deleted go first: a purge is a transaction of its own
      const deleted = this.guarded(() => this.tx.purge.immediate(statusMicros));
      if (deleted > 0) this.push.tasksPurged(); // their configs and pending deliveries went with them
      total += deleted;
      if (deleted < this.purgeBatchSize) return total;
      await nextTurn();
    }
  }

  /** A small key/value store beside the tasks (e.g. the page-token secret). */
  async getMeta(key: string): Promise<string | undefined> {
    return this.guarded(() => this.s.getMeta.get(key) as string | undefined);
  }

  async setMeta(key: string, value: string): Promise<void> {
    this.guarded(() => this.s.setMeta.run(key, value));
  }

  async close(): Promise<void> {
    if (this.db.open) {
      this.commit(); // applied writes commit (and their callers hear so) before the file closes
      this.schedule.stop();
      this.push.flushRemovals();
      this.kept.clear();
      this.db.close();
    }
    this.lock?.release();
  }

  /** A task not staged yet, as its row holds it; undefined if there is no such row. */
  private load(taskId: string): StagedTask | undefined {
    const row = this.s.selectTask.get(taskId) as TaskRow | undefined;
    return row === undefined ? undefined : stagedFromRow(row, this.push.loadStaged(row.pk));
  }

  /**
   * A full batch commits before the next write, so a long run of writes in one turn stays bounded,
   * and so does the wait of its webhook deliveries (BATCH_OUTBOX_LIMIT).
   */
  private makeRoom(): void {
    if (this.batchWrites >= BATCH_WRITE_LIMIT || this.push.stagedRows >= BATCH_OUTBOX_LIMIT) this.commit();
  }

  /** Puts a task in the open batch, opening one (and scheduling its commit) if none is. */
  private stage(taskId: string, staged: StagedTask): void {
    this.schedule.open();
    this.staged.set(taskId, staged);
    this.justCommitted?.delete(taskId); // written again: its row is what a read must see
    this.batchWrites++;
  }

  /** A task of the batch just committed, kept for its next write if it is still going. */
  private keep(taskId: string, staged: StagedTask): void {
    if (isTerminal(staged.task.status!.state)) return;
    if (this.kept.size >= KEPT_LIMIT) this.kept.delete(this.kept.keys().next().value!);
    this.kept.set(taskId, staged);
  }

  /** The kept task, as a new staged entry for this batch. */
  private takeKept(taskId: string): StagedTask | undefined {
    const k = this.kept.get(taskId);
    if (k === undefined) return undefined;
    this.kept.delete(taskId);
    return stagedFromKept(
      k,
      this.guarded(() => this.push.loadStaged(k.pk!)),
    );
  }

  /**
   * Writes the open batch in one IMMEDIATE transaction and tells everyone who waits for it.
   * Any failure (the write lock not had, disk full, I/O error) rolls all of it back: the batch
   * is lost, whole.
   */
  private commit(): void {
    if (!this.schedule.batchOpen || !this.db.open) return;
    const observedAt = storeCommitChannel.hasSubscribers ? performance.now() : undefined;
    let failure: unknown;
    try {
      this.tx.batch.immediate();
    } catch (error) {
      failure = isBadDataError(error) ? badData(this.file, error) : error;
    }
    this.push.batchEnded(failure === undefined);
    if (observedAt !== undefined) {
      const durationMs = performance.now() - observedAt;
      storeCommitChannel.publish({
        store: "sqlite",
        durationMs,
        writes: this.batchWrites,
        tasks: this.staged.size,
        failed: failure !== undefined,
      } satisfies StoreCommit);
    }
    const written = this.staged;
    this.staged = new Map();
    if (failure === undefined) for (const [id, staged] of written) this.keep(id, staged);
    const callbacks = this.schedule.ended();
    this.batchWrites = 0;
    const outer = this.justCommitted; // a callback may commit again (a read of a task it wrote): this commit's tasks are kept apart
    this.justCommitted = failure === undefined ? written : undefined;
    try {
      for (const callback of callbacks) callback(failure);
    } finally {
      this.justCommitted = outer;
    }
  }

  /**
   * The task `written` as the commit whose callbacks run left it, handed over (no one else holds
   * it: the batch is gone), as the read of its row would give it; undefined when the read needs
   * history rows that are not in memory, or the task is not the caller's.
   */
  private takeJustCommitted(scope: TaskScope, written: StagedTask, historyLength: number | undefined): StoredTask | undefined {
    if (this.scopes.of(scope, false) !== written.scopeId) return undefined;
    const added = written.newHistory;
    let history: Message[];
    if (historyLength !== undefined && historyLength <= 0) history = [];
    else if (written.storedHistoryLength === 0) history = historyLength === undefined || historyLength >= added.length ? added : added.slice(-historyLength);
    else if (historyLength !== undefined && historyLength <= added.length) history = added.slice(-historyLength);
    else return undefined; // earlier messages are only in their rows
    this.justCommitted!.delete(written.task.id);
    this.kept.delete(written.task.id); // the reader owns the object now
    const task = written.task;
    if (!written.artifactsDecoded) this.reads.readArtifacts(task, { pk: written.pk!, artifacts: written.storedArtifacts, tail_bytes: written.tailBytes });
    task.history = history;
    // The guard put the status message into history as the same object; a decoded row has two.
    // A new status object too: the stored one may be the run's own (a fresh change), shared with its event.
    const status = task.status;
    if (status?.message !== undefined && status.message === added[added.length - 1]) task.status = { ...status, message: cloneMessage(status.message) };
    return { task, version: written.version };
  }

  /** Runs a store operation; damage found on disk becomes a SqliteStoreError naming the file. */
  private guarded<T>(operation: () => T): T {
    try {
      return operation();
    } catch (err) {
      if (isBadDataError(err)) throw badData(this.file, err);
      throw err;
    }
  }
}

/**
 * The highest stored id as a bound in JavaScript's string order: SQLite orders by UTF-8 bytes,
 * which is the same order for ASCII (every id the server makes); past ASCII the bound is the top.
 */
function highestStoredId(id: string | null): string {
  if (id === null) return "";
  return /^[\x00-\x7f]*$/.test(id) ? id : "\uffff\uffff";
}
