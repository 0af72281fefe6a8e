import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { setImmediate as nextTurn } from "node:timers/promises";
import Database, { type Database as Db, type Statement } from "better-sqlite3";
import { cloneMessage, cloneTask } from "../../codec/task-clone.js";
import type { Message, Task } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { Answer } from "../../lifecycle/answer.js";
import { TaskNotFoundError } from "../../lifecycle/errors.js";
import { applyChange, mergeArtifact } from "../../lifecycle/task-change.js";
import { storeCommitChannel, type StoreCommit } from "../../lifecycle/diagnostics.js";
import { ownChange } from "../owned-change.js";
import { INITIAL_STATE, isTerminal, stateName } from "../../lifecycle/task-state.js";
import {
  DuplicateTaskError,
  InvalidChangeError,
  type CommitCallback,
  VersionConflictError,
  type ReadOptions,
  type StoredTask,
  type TaskChange,
  type TaskPage,
  type TaskQuery,
  type TaskRepository,
  type TaskScope,
} from "../../lifecycle/task-repository.js";
import { eventAtVersion, type EventLogOptions, type EventLogRead, type LoggedEvent, type TaskEventLog } from "../../lifecycle/event-log.js";
import { mergeArtifactsBlob } from "./artifacts-blob.js";
import { BATCH, decodeArtifactChanges, decodeEventRow, encodeArtifactChanges, encodeEvent, encodeEventBatch } from "./event-row-codec.js";
import { checkDatabaseFile } from "./check-database-file.js";
import { checkSchema, migrate } from "./migrations.js";
import { statusMicros } from "../../lifecycle/clock.js";
import { lockDataFile, type DataFileLock } from "./data-file-lock.js";
import { SqlitePushStore, type StagedPush } from "./sqlite-push-store.js";
import { SqliteStoreError, isBadDataError } from "./sqlite-store-error.js";
import { decodeArtifacts, decodeMessage, decodeTaskCore, encodeArtifacts, encodeMessage, encodeTaskCore } from "./task-row-codec.js";

export interface SqliteTaskRepositoryOptions {
  /** Database file; its directory is created if missing. ":memory:" for a throw-away store. */
  readonly file: string;
  /**
   * What a committed write survives (WAL mode either way):
   * - "process" (default, `synchronous=NORMAL`): a crash or SIGKILL of the process; a power
   *   loss or OS crash may roll back the last transactions, never corrupt the file.
   * - "power" (`synchronous=FULL`): also a power loss or OS crash, at the cost of an fsync per commit.
   */
  readonly durability?: "process" | "power";
  /**
   * Take the one-process-per-file lock (default true). Only for a second connection that reads
   * while the server runs (inspection, tests): it must not settle or write tasks.
   */
  readonly exclusive?: boolean;
  /** How long a write waits for another connection's lock before failing (ms). Default 5000. */
  readonly busyTimeoutMs?: number;
  /**
   * `PRAGMA quick_check` at open: "quick" always, "off" never, "auto" (default) only when the
   * file is at most `quickCheckMaxBytes`. quick_check reads every page, so its cost grows with
   * the file: measured 1.0 s on a 508 MB file of 1M tasks, against 5 ms for the rest of the
   * open, so it is skipped above 64 MB (~130k tasks, ~120 ms) by default. On a large file,
   * corruption is instead reported by the first read that meets it, as a SqliteStoreError
   * naming the file; a truncated file or a foreign/newer one is refused at open regardless.
   */
  readonly integrityCheck?: "quick" | "off" | "auto";
  readonly quickCheckMaxBytes?: number;
  /** Rows deleted per transaction by purgeTerminalBefore; the event loop runs between batches. */
  readonly purgeBatchSize?: number;
  /** Keep every change in `task_events` for resuming streams (A-33), this long. Absent: no log is written. */
  readonly eventLog?: EventLogOptions;
  /**
   * Commit window (ms, default 0). A batch opened less than this after the last commit ended
   * waits until the window is over, gathering the writes of the turns in between into the same
   * transaction; a batch opened on an idle store commits at the end of its turn. 0: every turn
   * commits at its end. Why: an agent writing a chunk per turn paid a whole commit per chunk.
   */
  readonly commitWindowMs?: number;
}

const DEFAULT_QUICK_CHECK_MAX_BYTES = 64 * 1024 * 1024;
const ACTIVE = "(1, 2)"; // SUBMITTED, WORKING: must match the partial index tasks_active
const TERMINAL = "(3, 4, 5, 7)"; // COMPLETED, FAILED, CANCELED, REJECTED: index tasks_terminal
const SCOPE_CACHE_LIMIT = 10_000;
/**
 * A task's artifacts blob: in `task_artifacts` once a write after its insert changed them, else
 * in its row (as inserted). Why apart: SQLite rewrites a whole row, blob included, on any update,
 * so a task streaming its answer rewrote all of it with every commit.
 */
const ARTIFACTS_OF = (t: string) => `coalesce((SELECT a.artifacts FROM task_artifacts a WHERE a.task_pk = ${t}.pk), ${t}.artifacts)`;
/** Tasks still going kept in memory between their writes (see `kept`). */
const KEPT_LIMIT = 1000;
/** Artifact changes kept apart from a blob smaller than this before it is rewritten (see appendToTail). */
const MIN_TAIL_BYTES = 16 * 1024;
/**
 * The tail may grow to this many times the blob before the blob is rewritten (see appendToTail):
 * each rewrite makes the blob four times larger, so an answer's rewrites write about 1.3 times
 * its final size, not 2 times as when the tail was rewritten at the blob's size. Reads do not pay
 * for a long tail: they join it with the blob as bytes and decode once (readArtifacts).
 */
const TAIL_PER_BLOB = 3;
/**
 * `task_events.flags` of a BATCH row whose body is not in the row but is its commit's
 * `artifact_tail` row (same task and version), byte for byte: a commit of appends only frames the
 * same changes for both, and writing them twice was a third of what a burst wrote. Before the
 * tail is emptied, its bodies are copied into these rows (`eventBodiesOutOfTail`).
 */
const BODY_IN_TAIL = 1;
/** An event row's body, from the row or, for BODY_IN_TAIL, from its tail row. */
const EVENT_BODY = `CASE WHEN e.kind = ${BATCH} AND e.flags = ${BODY_IN_TAIL}
  THEN (SELECT a.changes FROM artifact_tail a WHERE a.task_pk = e.task_pk AND a.version = e.version) ELSE e.body END`;

interface TaskRow {
  pk: number;
  scope_id: number;
  version: number;
  history_len: number;
  task: Uint8Array;
  artifacts: Uint8Array | null;
  tail_bytes: number;
  /** 1 when the artifacts blob is in the row itself. */
  inline?: number;
}

interface EventRow {
  version: number;
  first_version: number | null;
  at_micros: number;
  kind: number;
  flags: number;
  body: Uint8Array | null;
}

interface ListRow {
  pk: number;
  id: string;
  status_micros: number;
  task: Uint8Array;
  artifacts: Uint8Array | null;
  tail_bytes: number;
}

/** What a row holds of a task's artifacts: the blob, and the size of the changes kept after it in `artifact_tail`. */
type ArtifactsRow = Pick<TaskRow, "pk" | "artifacts" | "tail_bytes">;

/**
 * Opens (creating or upgrading) a durable task store. Refuses with SqliteStoreError, without
 * modifying the file, a file that is not a SQLite database, is corrupt or truncated, comes
 * from a newer schema, or belongs to another application.
 */
export function openSqliteTaskRepository(options: SqliteTaskRepositoryOptions): SqliteTaskRepository {
  const inMemory = options.file === ":memory:";
  const file = inMemory ? options.file : resolve(options.file);
  let lock: DataFileLock | undefined;
  if (!inMemory) {
    mkdirSync(dirname(file), { recursive: true });
    if (options.exclusive !== false) lock = lockDataFile(file);
    try {
      if (checkDatabaseFile(file)) validateReadOnly(file, options);
    } catch (err) {
      lock?.release();
      throw err;
    }
  }
  let db: Db;
  try {
    db = new Database(file);
  } catch (err) {
    lock?.release();
    throw new SqliteStoreError(file, `cannot be opened (${(err as Error).message}); the file was not modified`, { cause: err });
  }
  try {
    db.pragma("journal_mode = WAL");
    db.pragma(`synchronous = ${options.durability === "power" ? "FULL" : "NORMAL"}`);
    db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
    db.pragma("foreign_keys = ON");
    // Undo pages of a statement inside the batch transaction (statement journal) stay in
    // memory instead of a temp file.
    db.pragma("temp_store = MEMORY");
    checkSchema(db, file); // again, under the write connection: another process may have written since
    const schema = migrate(db, file);
    return new SqliteTaskRepository(db, file, schema, options.purgeBatchSize ?? 1000, lock, options.eventLog, options.commitWindowMs ?? 0);
  } catch (err) {
    db.close();
    lock?.release();
    if (err instanceof SqliteStoreError) throw err;
    if (isBadDataError(err)) throw badData(file, err);
    throw err;
  }
}

/**
 * Every check that can refuse an existing file runs on a read-only connection first, so a
 * refused file is never written to (a read-write connection could switch it to WAL mode or
 * checkpoint into it on close).
 */
function validateReadOnly(file: string, options: SqliteTaskRepositoryOptions): void {
  let db: Db | undefined;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
    checkSchema(db, file);
    const mode = options.integrityCheck ?? "auto";
    const size = (db.pragma("page_count", { simple: true }) as number) * (db.pragma("page_size", { simple: true }) as number);
    if (mode === "quick" || (mode === "auto" && size <= (options.quickCheckMaxBytes ?? DEFAULT_QUICK_CHECK_MAX_BYTES))) {
      const problems = db.prepare("PRAGMA quick_check(5)").pluck().all() as string[];
      if (problems.length !== 1 || problems[0] !== "ok") {
        throw new SqliteStoreError(file, `is corrupt (quick_check: ${problems.join("; ")}); the file was not modified`);
      }
    }
  } catch (err) {
    if (err instanceof SqliteStoreError) throw err;
    throw badData(file, err);
  } finally {
    db?.close();
  }
}

function badData(file: string, err: unknown): SqliteStoreError {
  const code = (err as { code?: string }).code;
  return new SqliteStoreError(file, `is corrupt or unreadable (${code ? `${code}: ` : ""}${(err as Error).message}); the file was not modified`, {
    cause: err,
  });
}

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
 * A task written in the open batch: its state after the writes applied so far, written to its
 * row once, at commit. Its history holds nothing; the messages appended in this batch wait in
 * `newHistory`.
 */
interface StagedTask {
  readonly scopeId: number;
  /** The row's key; undefined for a task created in this batch until its row is inserted at commit. */
  pk: number | undefined;
  readonly task: Task;
  /**
   * The artifacts blob as the row holds it (the tail rows come after it), decoded into
   * `task.artifacts` only when an artifact change needs them; kept up to date when a commit
   * writes the blob, as the next rewrite is made from its bytes (artifacts-blob.ts).
   */
  storedArtifacts: Uint8Array | null;
  artifactsDecoded: boolean;
  /** Whether the artifacts blob is in the task's row (as inserted) rather than in `task_artifacts`. */
  artifactsInline: boolean;
  /** Bytes of the artifacts blob as last written, and of the artifact changes kept in `artifact_tail` since. */
  artifactBytes: number;
  tailBytes: number;
  /** This batch's artifact changes to a task that has a row: what its tail row would hold. */
  newArtifactChanges: Array<Extract<TaskChange, { kind: "artifact" }>> | undefined;
  version: number;
  readonly storedHistoryLength: number;
  readonly newHistory: Message[];
  statusChanged: boolean;
  artifactsChanged: boolean;
  /** Set when the task has push configs: the outbox rows its writes owe them. */
  push: StagedPush | undefined;
  /** The changes of this batch as events, for the event log (only while it is on). */
  newEvents: LoggedEvent[] | undefined;
}

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
 * messages it gained. The async `create` and `update` resolve only after that COMMIT returned;
 * the synchronous face (`immediate`) answers at once and tells of the commit through
 * `afterCommit`, so an agent can finish a task within the turn and its four writes cost one
 * row write and share one commit. A failed commit loses the whole batch, and everyone who
 * waits for it hears why. Reads never see a write that is not committed, nor miss one that
 * was applied: a read of a staged task (or any list) commits the batch first.
 *
 * Nothing is cached but scope ids, the tasks of the open batch and up to KEPT_LIMIT tasks still
 * going (as their last commit left them), so memory stays flat however many tasks are stored.
 */
export class SqliteTaskRepository implements TaskRepository {
  private readonly s;
  private readonly tx;
  private readonly pageStatements = new Map<string, Statement>();
  private readonly countStatements = new Map<string, Statement>();
  /** Interned scope ids by tenant, then principal. Why two levels: a joined string key cost a JSON.stringify per call. */
  private readonly scopeIds = new Map<string, Map<string, number>>();
  private scopeIdCount = 0;
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
  /** Told when the open batch commits or is lost; undefined while no batch is open. */
  private batchCallbacks: CommitCallback[] | undefined;
  private batchWrites = 0;
  private commitScheduled = false;
  /** The pending commit's timer, while a batch waits for the commit window to pass. */
  private commitTimer: NodeJS.Timeout | undefined;
  /** When the last commit ended (performance.now()), for the commit window. */
  private lastCommitEnd = Number.NEGATIVE_INFINITY;
  /** Push configs and the outbox of pending deliveries, in this database (A-29). */
  readonly push: SqlitePushStore;
  /** Events kept for resuming streams (A-33), when asked for. */
  readonly eventLog: TaskEventLog | undefined;
  private lastTrim = 0;
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
    private readonly commitWindowMs = 0,
  ) {
    this.eventLog =
      eventLog === undefined
        ? undefined
        : { retentionMs: eventLog.retentionMs, readAfter: (scope, taskId, after) => this.readEventsAfter(scope, taskId, after) };
    // Prepared once: every call below reuses a compiled statement.
    this.s = {
      findScope: db.prepare("SELECT scope_id FROM scopes WHERE tenant = ? AND principal = ?").pluck(),
      addScope: db.prepare("INSERT INTO scopes (tenant, principal) VALUES (?, ?) ON CONFLICT DO NOTHING"),
      insertTask: db.prepare(
        `INSERT INTO tasks (id, scope_id, context_id, state, status_micros, version, history_len, task, artifacts)
         VALUES (@id, @scopeId, @contextId, @state, @statusMicros, @version, @historyLen, @task, @artifacts)`,
      ),
      taskExists: db.prepare("SELECT 1 FROM tasks WHERE id = ?").pluck(),
      selectTask: db.prepare(
        `SELECT pk, scope_id, version, history_len, task, ${ARTIFACTS_OF("tasks")} AS artifacts, tail_bytes, tasks.artifacts IS NOT NULL AS inline
         FROM tasks WHERE id = ?`,
      ),
      updateStatus: db.prepare(
        `UPDATE tasks SET state = @state, status_micros = @statusMicros, version = @version, history_len = @historyLen, task = @task
         WHERE pk = @pk`,
      ),
      updateArtifacts: db.prepare("UPDATE tasks SET version = @version, history_len = @historyLen, artifacts = NULL, tail_bytes = 0 WHERE pk = @pk"),
      putArtifacts: db.prepare(
        "INSERT INTO task_artifacts (task_pk, artifacts) VALUES (?, ?) ON CONFLICT (task_pk) DO UPDATE SET artifacts = excluded.artifacts",
      ),
      moveArtifacts: db.prepare("INSERT INTO task_artifacts (task_pk, artifacts) SELECT pk, artifacts FROM tasks WHERE pk = ? AND artifacts IS NOT NULL"),
      clearInline: db.prepare("UPDATE tasks SET artifacts = NULL WHERE pk = ?"),
      updateTail: db.prepare("UPDATE tasks SET version = @version, history_len = @historyLen, tail_bytes = @tailBytes WHERE pk = @pk"),
      insertTail: db.prepare("INSERT INTO artifact_tail (task_pk, version, changes) VALUES (?, ?, ?)"),
      tailOf: db.prepare("SELECT changes FROM artifact_tail WHERE task_pk = ? ORDER BY version").pluck(),
      clearTail: db.prepare("DELETE FROM artifact_tail WHERE task_pk = ?"),
      updateVersion: db.prepare("UPDATE tasks SET version = @version, history_len = @historyLen WHERE pk = @pk"),
      insertHistory: db.prepare("INSERT INTO history (task_pk, seq, message) VALUES (?, ?, ?)"),
      allHistory: db.prepare("SELECT message FROM history WHERE task_pk = ? ORDER BY seq").pluck(),
      lastHistory: db.prepare("SELECT message FROM history WHERE task_pk = ? ORDER BY seq DESC LIMIT ?").pluck(),
      active: db.prepare(
        `SELECT t.pk, t.scope_id, t.version, t.history_len, t.task, ${ARTIFACTS_OF("t")} AS artifacts, t.tail_bytes, s.tenant, s.principal
         FROM tasks t JOIN scopes s USING (scope_id) WHERE t.state IN ${ACTIVE}`,
      ),
      purgeBatch: db.prepare(
        `DELETE FROM tasks WHERE pk IN
           (SELECT pk FROM tasks WHERE state IN ${TERMINAL} AND status_micros < ? LIMIT ?)`,
      ),
      insertEvent: db.prepare("INSERT INTO task_events (task_pk, version, at_micros, kind, flags, body) VALUES (?, ?, ?, ?, ?, ?)"),
      insertEvents: db.prepare(`INSERT INTO task_events (task_pk, version, first_version, at_micros, kind, flags, body) VALUES (?, ?, ?, ?, ${BATCH}, 0, ?)`),
      insertEventsInTail: db.prepare(
        `INSERT INTO task_events (task_pk, version, first_version, at_micros, kind, flags, body) VALUES (?, ?, ?, ?, ${BATCH}, ${BODY_IN_TAIL}, NULL)`,
      ),
      eventBodiesOutOfTail: db.prepare(
        `UPDATE task_events AS e SET body = ${EVENT_BODY}, flags = 0 WHERE e.task_pk = ? AND e.kind = ${BATCH} AND e.flags = ${BODY_IN_TAIL}`,
      ),
      taskHead: db.prepare("SELECT pk, scope_id, version, state, context_id FROM tasks WHERE id = ?"),
      eventsAfter: db.prepare(
        `SELECT e.version, e.first_version, e.at_micros, e.kind, e.flags, ${EVENT_BODY} AS body FROM task_events e WHERE e.task_pk = ? AND e.version > ? ORDER BY e.version`,
      ),
      trimEvents: db.prepare("DELETE FROM task_events WHERE at_micros < ?"),
      getMeta: db.prepare("SELECT value FROM meta WHERE key = ?").pluck(),
      setMeta: db.prepare("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT DO UPDATE SET value = excluded.value"),
    };
    this.highestTaskId = highestStoredId(db.prepare("SELECT max(id) FROM tasks").pluck().get() as string | null);
    // Transaction wrappers are made once too: better-sqlite3 compiles BEGIN/COMMIT per wrapper.
    this.tx = {
      batch: db.transaction(() => {
        for (const staged of this.staged.values()) this.writeStaged(staged);
        this.push.writeRemovals(); // delivered webhooks' outbox rows ride along: no commit of their own
        this.trimEvents();
      }),
      list: db.transaction((scope: TaskScope, query: TaskQuery) => this.readPage(scope, query)),
      purge: db.transaction((statusMicros: number) => this.s.purgeBatch.run(statusMicros, this.purgeBatchSize).changes),
    };
    this.push = new SqlitePushStore(db, {
      stagedPush: (scope, taskId) => {
        const staged = this.staged.get(taskId);
        if (staged === undefined || staged.scopeId !== this.scopeId(scope, false)) return undefined;
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
      scopeId: (scope) => this.scopeId(scope, false),
      snapshot: (scope, taskId) => this.read(scope, taskId)?.task,
      guarded: (operation) => this.guarded(operation),
    });
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
    const scopeId = this.scopeId(scope, true)!;
    this.makeRoom();
    if (this.staged.has(task.id) || (task.id <= this.highestTaskId && this.guarded(() => this.s.taskExists.get(task.id)) !== undefined)) {
      throw new DuplicateTaskError(task.id);
    }
    if (task.id > this.highestTaskId) this.highestTaskId = task.id;
    const own = handOver ? task : cloneTask(task); // unless handed over, the caller keeps its object and may change it
    const history = own.history;
    own.history = [];
    this.stage(task.id, {
      scopeId,
      pk: undefined,
      task: own,
      storedArtifacts: null,
      artifactsDecoded: true,
      artifactsInline: false, // set at insert
      artifactBytes: 0,
      tailBytes: 0,
      newArtifactChanges: undefined,
      version: 1,
      storedHistoryLength: 0,
      newHistory: history,
      statusChanged: true,
      artifactsChanged: true,
      push: undefined,
      newEvents: undefined,
    });
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
      const scopeId = this.scopeId(scope, false);
      if (scopeId === undefined) return undefined;
      const row = this.s.selectTask.get(taskId) as TaskRow | undefined;
      if (row === undefined || row.scope_id !== scopeId) return undefined;
      return { task: this.assemble(row, options?.historyLength, true), version: row.version };
    });
  }

  /** `update` within the call: checked, applied and staged in the open batch; throws when refused. */
  private stageChange(scope: TaskScope, taskId: string, expectedVersion: number, change: TaskChange): number {
    this.makeRoom();
    const scopeId = this.scopeId(scope, false);
    const known = this.staged.get(taskId);
    const staged = known ?? this.takeKept(taskId) ?? this.guarded(() => this.load(taskId));
    if (staged === undefined || scopeId === undefined || staged.scopeId !== scopeId) throw new TaskNotFoundError(taskId);
    if (staged.version !== expectedVersion) throw new VersionConflictError(taskId, expectedVersion, staged.version);
    const task = staged.task;
    if (change.kind === "artifact" && !staged.artifactsDecoded) {
      this.guarded(() => this.readArtifacts(task, { pk: staged.pk!, artifacts: staged.storedArtifacts, tail_bytes: staged.tailBytes }));
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
    if (this.eventLog !== undefined) {
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

  readonly afterCommit = (callback: CommitCallback): void => {
    if (this.batchCallbacks === undefined)
      callback(undefined); // nothing waits for a commit
    else this.batchCallbacks.push(callback);
  };

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
          task: { task: this.assemble(row, undefined, true), version: row.version },
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
      clearTimeout(this.commitTimer);
      this.push.flushRemovals();
      this.kept.clear();
      this.db.close();
    }
    this.lock?.release();
  }

  /** A task not staged yet, as its row holds it; undefined if there is no such row. */
  private load(taskId: string): StagedTask | undefined {
    const row = this.s.selectTask.get(taskId) as TaskRow | undefined;
    if (row === undefined) return undefined;
    return {
      scopeId: row.scope_id,
      pk: row.pk,
      task: decodeTaskCore(row.task), // without history: the guard only appends to it
      storedArtifacts: row.artifacts,
      artifactsDecoded: false,
      artifactsInline: row.inline === 1,
      artifactBytes: row.artifacts?.length ?? 0,
      tailBytes: row.tail_bytes,
      newArtifactChanges: undefined,
      version: row.version,
      storedHistoryLength: row.history_len,
      newHistory: [],
      statusChanged: false,
      artifactsChanged: false,
      push: this.push.loadStaged(row.pk),
      newEvents: undefined,
    };
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
    if (this.batchCallbacks === undefined) {
      this.batchCallbacks = [];
      if (!this.commitScheduled) this.scheduleCommit();
    }
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

  /** The kept task, as a new staged entry for this batch (its row's state: the last commit wrote it). */
  private takeKept(taskId: string): StagedTask | undefined {
    const k = this.kept.get(taskId);
    if (k === undefined) return undefined;
    this.kept.delete(taskId);
    return {
      scopeId: k.scopeId,
      pk: k.pk,
      task: k.task,
      storedArtifacts: k.storedArtifacts,
      artifactsDecoded: k.artifactsDecoded,
      artifactsInline: k.artifactsInline,
      artifactBytes: k.artifactBytes,
      tailBytes: k.tailBytes,
      newArtifactChanges: undefined,
      version: k.version,
      storedHistoryLength: k.storedHistoryLength + k.newHistory.length,
      newHistory: [],
      statusChanged: false,
      artifactsChanged: false,
      push: this.guarded(() => this.push.loadStaged(k.pk!)),
      newEvents: undefined,
    };
  }

  /**
   * At the end of this turn, unless the last commit ended less than the commit window ago: then
   * once the window is over (a timer; Node rounds it up to whole milliseconds), so the writes of
   * the turns in between share the commit. A write that finds the store idle is not delayed.
   */
  private scheduleCommit(): void {
    this.commitScheduled = true;
    const wait = this.lastCommitEnd + this.commitWindowMs - performance.now();
    if (wait > 0) this.commitTimer = setTimeout(this.commitAtTurnEnd, wait);
    else setImmediate(this.commitAtTurnEnd);
  }

  private readonly commitAtTurnEnd = (): void => {
    this.commitScheduled = false;
    this.commitTimer = undefined;
    this.commit();
  };

  /**
   * Writes the open batch in one IMMEDIATE transaction and tells everyone who waits for it.
   * Any failure (the write lock not had, disk full, I/O error) rolls all of it back: the batch
   * is lost, whole.
   */
  private commit(): void {
    const callbacks = this.batchCallbacks;
    if (callbacks === undefined || !this.db.open) return;
    const observedAt = storeCommitChannel.hasSubscribers ? performance.now() : undefined;
    let failure: unknown;
    try {
      this.tx.batch.immediate();
    } catch (error) {
      failure = isBadDataError(error) ? badData(this.file, error) : error;
    }
    this.push.batchEnded(failure === undefined);
    if (this.commitWindowMs > 0) this.lastCommitEnd = performance.now();
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
    this.batchCallbacks = undefined;
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
    if (this.scopeId(scope, false) !== written.scopeId) return undefined;
    const added = written.newHistory;
    let history: Message[];
    if (historyLength !== undefined && historyLength <= 0) history = [];
    else if (written.storedHistoryLength === 0) history = historyLength === undefined || historyLength >= added.length ? added : added.slice(-historyLength);
    else if (historyLength !== undefined && historyLength <= added.length) history = added.slice(-historyLength);
    else return undefined; // earlier messages are only in their rows
    this.justCommitted!.delete(written.task.id);
    this.kept.delete(written.task.id); // the reader owns the object now
    const task = written.task;
    if (!written.artifactsDecoded) this.readArtifacts(task, { pk: written.pk!, artifacts: written.storedArtifacts, tail_bytes: written.tailBytes });
    task.history = history;
    // The guard put the status message into history as the same object; a decoded row has two.
    // A new status object too: the stored one may be the run's own (a fresh change), shared with its event.
    const status = task.status;
    if (status?.message !== undefined && status.message === added[added.length - 1]) task.status = { ...status, message: cloneMessage(status.message) };
    return { task, version: written.version };
  }

  /** One staged task to its row: inserted if new, else only the columns its writes changed; then its new messages. */
  private writeStaged(staged: StagedTask): void {
    const task = staged.task;
    const historyLen = staged.storedHistoryLength + staged.newHistory.length;
    let pk = staged.pk;
    let artifacts: Uint8Array | null;
    let changesBody: Uint8Array | undefined;
    let inTail = false; // whether this batch's artifact changes went to a tail row (as changesBody)
    if (pk === undefined) {
      pk = Number(
        this.s.insertTask.run({
          id: task.id,
          scopeId: staged.scopeId,
          contextId: task.contextId,
          state: task.status!.state,
          statusMicros: statusMicros(task),
          version: staged.version,
          historyLen,
          task: encodeTaskCore(task),
          artifacts: (artifacts = encodeArtifacts(task.artifacts)),
        }).lastInsertRowid,
      );
      staged.pk = pk;
      staged.storedArtifacts = artifacts;
      staged.artifactBytes = artifacts?.length ?? 0;
      staged.artifactsInline = artifacts !== null;
    } else {
      const version = staged.version;
      if (staged.statusChanged) {
        this.s.updateStatus.run({ pk, state: task.status!.state, statusMicros: statusMicros(task), version, historyLen, task: encodeTaskCore(task) });
      }
      // This batch's artifact changes, framed once: for the tail row, the blob rewrite and the event row.
      if (staged.newArtifactChanges !== undefined) changesBody = encodeArtifactChanges(staged.newArtifactChanges);
      inTail = staged.artifactsChanged && this.appendToTail(staged, pk, historyLen, changesBody);
      if (!inTail) {
        if (staged.artifactsChanged) {
          const artifacts = this.rewrittenArtifacts(staged, pk, changesBody);
          this.s.updateArtifacts.run({ pk, version, historyLen });
          this.s.putArtifacts.run(pk, artifacts);
          staged.artifactsInline = false;
          if (staged.tailBytes > 0) {
            this.s.eventBodiesOutOfTail.run(pk); // the events kept for resuming keep their bodies
            this.s.clearTail.run(pk);
          }
          staged.storedArtifacts = artifacts;
          staged.artifactBytes = artifacts?.length ?? 0;
          staged.tailBytes = 0;
        } else if (!staged.statusChanged) this.s.updateVersion.run({ pk, version, historyLen });
      }
    }
    for (let i = 0; i < staged.newHistory.length; i++) {
      this.s.insertHistory.run(pk, staged.storedHistoryLength + i, encodeMessage(staged.newHistory[i]!));
    }
    if (staged.push !== undefined) this.push.writeStaged(pk, staged.push);
    const events = staged.newEvents;
    if (events !== undefined) {
      const at = Date.now() * 1000;
      if (events.length === 1) this.s.insertEvent.run(pk, events[0]!.version, at, ...encodeEvent(events[0]!));
      else {
        // A commit of artifact changes only: the event row's body is the tail row's, byte for byte
        // (both frame the same artifact changes in order), so it is encoded once, and written
        // once when that tail row holds it.
        const same = changesBody !== undefined && events.length === staged.newArtifactChanges!.length && events.every((e) => e.kind === "artifact");
        const last = events[events.length - 1]!.version;
        if (same && inTail) this.s.insertEventsInTail.run(pk, last, events[0]!.version, at);
        else this.s.insertEvents.run(pk, last, events[0]!.version, at, same ? changesBody : encodeEventBatch(events));
      }
    }
  }

  /**
   * Writes this batch's artifact changes of a task that has a row as one `artifact_tail` row,
   * unless the tail would outgrow the blob (or the task is finished): then the caller rewrites
   * the blob. Rewriting only when the tail is as large as the blob keeps the bytes written
   * linear in the artifact's size however many commits it takes. `body`: the changes, framed.
   * Whether it wrote them.
   */
  private appendToTail(staged: StagedTask, pk: number, historyLen: number, body: Uint8Array | undefined): boolean {
    if (body === undefined || isTerminal(staged.task.status!.state)) return false;
    if (staged.tailBytes + body.length > Math.max(staged.artifactBytes * TAIL_PER_BLOB, MIN_TAIL_BYTES)) return false;
    if (staged.artifactsInline) {
      // Out of the task's row first: every later update of the row would rewrite it.
      this.s.moveArtifacts.run(pk);
      this.s.clearInline.run(pk);
      staged.artifactsInline = false;
    }
    this.s.insertTail.run(pk, staged.version, body);
    staged.tailBytes += body.length;
    this.s.updateTail.run({ pk, version: staged.version, historyLen, tailBytes: staged.tailBytes });
    return true;
  }

  /**
   * The task's artifacts blob after this batch: joined from the bytes of the stored blob, its tail
   * rows and this batch's changes (`body`) when all of them are at hand as bytes, so no chunk
   * is encoded again; else (a task created in this batch, bytes artifacts-blob.ts cannot take
   * apart) encoded from `task.artifacts`.
   */
  private rewrittenArtifacts(staged: StagedTask, pk: number, body: Uint8Array | undefined): Uint8Array | null {
    const task = staged.task;
    if (body === undefined) return encodeArtifacts(task.artifacts);
    const bodies = staged.tailBytes > 0 ? (this.s.tailOf.all(pk) as Uint8Array[]) : [];
    bodies.push(body);
    return mergeArtifactsBlob(staged.storedArtifacts, bodies, task.artifacts) ?? encodeArtifacts(task.artifacts);
  }

  /**
   * `task.artifacts` as the row holds them: the blob, then the changes kept after it, applied in
   * order; joined as bytes and decoded once (artifacts-blob.ts), else (bytes it cannot take
   * apart) each change decoded and merged.
   */
  private readArtifacts(task: Task, row: ArtifactsRow): void {
    if (row.tail_bytes === 0) {
      task.artifacts = decodeArtifacts(row.artifacts);
      return;
    }
    const tail = this.s.tailOf.all(row.pk) as Uint8Array[];
    const joined = mergeArtifactsBlob(row.artifacts, tail);
    task.artifacts = decodeArtifacts(joined ?? row.artifacts);
    if (joined !== undefined) return;
    for (const body of tail) for (const change of decodeArtifactChanges(body)) mergeArtifact(task, change.artifact, change.append);
  }

  /**
   * Events after `afterVersion`, from committed rows (a staged write of the task is committed
   * first, so its events are published before this returns and a stream waiting on this read
   * holds them).
   */
  private async readEventsAfter(scope: TaskScope, taskId: string, afterVersion: number): Promise<EventLogRead> {
    if (this.staged.has(taskId)) this.commit();
    return this.guarded(() => {
      const scopeId = this.scopeId(scope, false);
      const row = this.s.taskHead.get(taskId) as { pk: number; scope_id: number; version: number; state: number; context_id: string } | undefined;
      if (row === undefined || scopeId === undefined || row.scope_id !== scopeId) return { kind: "not-found" } as const;
      if (afterVersion > row.version || afterVersion < 0) return { kind: "expired" } as const;
      if (afterVersion === row.version) return { kind: "events", events: [], state: row.state } as const;
      const rows = this.s.eventsAfter.all(row.pk, afterVersion) as EventRow[];
      const first = rows[0];
      const oldest = (Date.now() - this.eventLog!.retentionMs) * 1000;
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

  /** Drops events past the retention window, at most once a second, inside the batch transaction. */
  private trimEvents(): void {
    const log = this.eventLog;
    if (log === undefined) return;
    const now = Date.now();
    if (now - this.lastTrim < 1000) return;
    this.lastTrim = now;
    this.s.trimEvents.run((now - log.retentionMs) * 1000);
  }

  private readPage(scope: TaskScope, query: TaskQuery): TaskPage {
    const scopeId = this.scopeId(scope, false);
    if (scopeId === undefined) return { tasks: [], totalSize: 0 };
    const filter = stripUndefined({ scopeId, contextId: query.contextId, state: query.state, atLeast: query.statusMicrosAtLeast });
    const rows = this.pageStatement(query).all({
      ...filter,
      ...(query.after ? { afterMicros: query.after.statusMicros, afterId: query.after.taskId } : {}),
      limit: query.pageSize + 1,
    }) as ListRow[];
    const more = rows.length > query.pageSize;
    if (more) rows.length = query.pageSize;
    const totalSize = Number(this.countStatement(query).get(filter) ?? 0);
    const tasks = rows.map((row) => this.assemble(row, query.historyLength, query.includeArtifacts));
    const last = rows[rows.length - 1];
    return more && last ? { tasks, next: { statusMicros: last.status_micros, taskId: last.id }, totalSize } : { tasks, totalSize };
  }

  private assemble(row: ArtifactsRow & { task: Uint8Array }, historyLength: number | undefined, withArtifacts: boolean): Task {
    const task = decodeTaskCore(row.task);
    if (withArtifacts) this.readArtifacts(task, row);
    if (historyLength === undefined) {
      task.history = (this.s.allHistory.all(row.pk) as Uint8Array[]).map(decodeMessage);
    } else if (historyLength > 0) {
      task.history = (this.s.lastHistory.all(row.pk, historyLength) as Uint8Array[]).reverse().map(decodeMessage);
    }
    return task;
  }

  /** Scope ids are interned; a scope that has never stored a task has no id and no tasks. */
  private scopeId(scope: TaskScope, createIfMissing: boolean): number | undefined {
    return this.knownScopeId(scope) ?? (createIfMissing ? this.addScope(scope) : this.findScope(scope));
  }

  private knownScopeId(scope: TaskScope): number | undefined {
    return this.scopeIds.get(scope.tenant)?.get(scope.principal);
  }

  /**
   * Stores the scope row at once, in a transaction of its own (the batch is written only at
   * commit), so the cached id never points at a row that a lost batch took with it.
   */
  private addScope(scope: TaskScope): number {
    return this.guarded(() => {
      this.s.addScope.run(scope.tenant, scope.principal);
      return this.findScope(scope)!;
    });
  }

  private findScope(scope: TaskScope): number | undefined {
    const id = this.s.findScope.get(scope.tenant, scope.principal) as number | undefined;
    if (id !== undefined) {
      if (this.scopeIdCount >= SCOPE_CACHE_LIMIT) {
        this.scopeIds.clear();
        this.scopeIdCount = 0;
      }
      let byPrincipal = this.scopeIds.get(scope.tenant);
      if (byPrincipal === undefined) this.scopeIds.set(scope.tenant, (byPrincipal = new Map()));
      if (!byPrincipal.has(scope.principal)) this.scopeIdCount++;
      byPrincipal.set(scope.principal, id);
    }
    return id;
  }

  /**
   * One statement per combination of filters, each pinned to the index made for it, so a
   * page is a range scan of at most pageSize+1 entries whatever the number of tasks.
   */
  private pageStatement(q: TaskQuery): Statement {
    const key = `${+(q.contextId !== undefined)}${+(q.state !== undefined)}${+(q.statusMicrosAtLeast !== undefined)}${+(q.after !== undefined)}${+q.includeArtifacts}`;
    let stmt = this.pageStatements.get(key);
    if (stmt === undefined) {
      const where = filters(q);
      if (q.after !== undefined) where.push("(status_micros, id) < (@afterMicros, @afterId)");
      stmt = this.db.prepare(
        `SELECT pk, id, status_micros, task, ${q.includeArtifacts ? `${ARTIFACTS_OF("tasks")} AS artifacts, tail_bytes` : "NULL AS artifacts, 0 AS tail_bytes"}
         FROM tasks INDEXED BY ${indexFor(q)} WHERE ${where.join(" AND ")}
         ORDER BY status_micros DESC, id DESC LIMIT @limit`,
      );
      this.pageStatements.set(key, stmt);
    }
    return stmt;
  }

  /**
   * total_size: a counter lookup (kept by triggers) unless a timestamp filter is given, in
   * which case a COUNT over that index range (its cost grows with the matches, not the store).
   */
  private countStatement(q: TaskQuery): Statement {
    const key = `${+(q.contextId !== undefined)}${+(q.state !== undefined)}${+(q.statusMicrosAtLeast !== undefined)}`;
    let stmt = this.countStatements.get(key);
    if (stmt === undefined) {
      const where = filters(q);
      const sql =
        q.statusMicrosAtLeast !== undefined
          ? `SELECT count(*) FROM tasks INDEXED BY ${indexFor(q)} WHERE ${where.join(" AND ")}`
          : `SELECT coalesce(sum(n), 0) FROM ${q.contextId !== undefined ? "context_counts" : "scope_counts"} WHERE ${where.join(" AND ")}`;
      stmt = this.db.prepare(sql).pluck();
      this.countStatements.set(key, stmt);
    }
    return stmt;
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

function filters(q: TaskQuery): string[] {
  const where = ["scope_id = @scopeId"];
  if (q.contextId !== undefined) where.push("context_id = @contextId");
  if (q.state !== undefined) where.push("state = @state");
  if (q.statusMicrosAtLeast !== undefined) where.push("status_micros >= @atLeast");
  return where;
}

function indexFor(q: TaskQuery): string {
  if (q.contextId !== undefined) return "tasks_by_context";
  if (q.state !== undefined) return "tasks_by_state";
  return "tasks_by_status";
}

/** Filters left unset are dropped, not bound (better-sqlite3 ignores named values a statement does not use). */
function stripUndefined(params: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(params).filter(([, v]) => v !== undefined));
}
