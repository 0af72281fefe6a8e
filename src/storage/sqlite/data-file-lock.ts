import Database from "better-sqlite3";
import { SqliteStoreError } from "./sqlite-store-error.js";

export interface DataFileLock {
  release(): void;
}

/**
 * One server process per database file. Start-up settles the tasks a previous process left
 * running; a second process on the same file would fail the first one's live tasks. The
 * lock is an exclusive SQLite lock on a side file (`<file>.lock`) held for the life of the
 * process: the OS drops it when the process dies, even by SIGKILL, so a crash never leaves
 * a stale lock. The database itself stays open to outside readers (backups, inspection).
 */
export function lockDataFile(file: string): DataFileLock {
  const lockFile = `${file}.lock`;
  const db = new Database(lockFile, { timeout: 0 });
  try {
    db.pragma("locking_mode = EXCLUSIVE");
    db.exec("CREATE TABLE IF NOT EXISTS holder (pid INTEGER NOT NULL)");
    db.exec("DELETE FROM holder");
    db.prepare("INSERT INTO holder (pid) VALUES (?)").run(process.pid);
  } catch (err) {
    db.close();
    if ((err as { code?: string }).code === "SQLITE_BUSY") {
      throw new SqliteStoreError(
        file,
        `is in use by another server process (it holds ${lockFile}); stop that process, or give this one another data directory`,
        { cause: err },
      );
    }
    throw new SqliteStoreError(file, `cannot be locked through ${lockFile} (${(err as Error).message})`, { cause: err });
  }
  return { release: () => db.open && db.close() };
}
