import { resolve } from "node:path";
import Database, { type Database as Db } from "better-sqlite3";
import type { EventLogOptions } from "../../lifecycle/index.js";
import { checkDatabaseFile } from "./check-database-file.js";
import { preparePrivateDataFiles } from "./private-data-files.js";
import { lockDataFile, type DataFileLock } from "./data-file-lock.js";
import { checkSchema, migrate } from "./migrations.js";
import { SqliteTaskRepository } from "./sqlite-task-store.js";
import { SqliteStoreError, badData, isBadDataError } from "./sqlite-store-error.js";

export { SqliteTaskRepository } from "./sqlite-task-store.js";

/*
 * The SQLite task store, opened. What it is made of, one concept per file: sqlite-task-store.ts (the
 * TaskRepository: writes staged per turn, reads), commit-schedule.ts (when a batch commits),
 * staged-task.ts (a task in the open batch), task-row-writes.ts (a staged task to its rows),
 * task-reads.ts (rows to tasks, ListTasks pages), scope-ids.ts, sqlite-event-log.ts,
 * sqlite-push-store.ts, task-statements.ts (the SQL).
 */

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
  /** Keep every change in `task_events` for resuming streams, this long. Absent: no log is written. */
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
    preparePrivateDataFiles(file);
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
