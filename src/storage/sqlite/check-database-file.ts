import { closeSync, openSync, readSync, statSync } from "node:fs";
import { SqliteStoreError } from "./sqlite-store-error.js";

const MAGIC = Buffer.from("SQLite format 3\0", "latin1");
const HEADER_SIZE = 100;
const NOT_MODIFIED = "the file was not modified";

/**
 * Looks at an existing database file with plain reads, before SQLite ever opens it, so
 * that a file that is not ours to write (a text file, random bytes, a truncated copy) is
 * refused without a single byte changed: SQLite would otherwise be asked to switch it to
 * WAL mode or to create tables in it. Deeper damage is found later by SQLite's own checks.
 *
 * Returns false when there is no file yet (a fresh store will be created).
 */
export function checkDatabaseFile(file: string): boolean {
  let size: number;
  try {
    const stat = statSync(file);
    if (stat.isDirectory()) throw new SqliteStoreError(file, `is a directory, not a database file; ${NOT_MODIFIED}`);
    size = stat.size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return false;
    if (err instanceof SqliteStoreError) throw err;
    throw new SqliteStoreError(file, `cannot be read (${(err as Error).message}); ${NOT_MODIFIED}`, { cause: err });
  }
  // SQLite treats an empty file as an empty database; migrations will fill it.
  if (size === 0) return true;

  const header = Buffer.alloc(HEADER_SIZE);
  let read: number;
  try {
    const fd = openSync(file, "r");
    try {
      read = readSync(fd, header, 0, HEADER_SIZE, 0);
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    throw new SqliteStoreError(file, `cannot be read (${(err as Error).message}); ${NOT_MODIFIED}`, { cause: err });
  }
  if (read < HEADER_SIZE || !header.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw new SqliteStoreError(file, `is not a SQLite database (no SQLite header); ${NOT_MODIFIED}`);
  }

  // Truncation: the header records the database size in pages when the "version-valid-for"
  // number matches the change counter. Pages may legitimately live only in the WAL (after a
  // crash, before a checkpoint), so the comparison is only made when there is no WAL content.
  const rawPageSize = header.readUInt16BE(16);
  const pageSize = rawPageSize === 1 ? 65536 : rawPageSize;
  const pages = header.readUInt32BE(28);
  const sizeIsValid = header.readUInt32BE(24) === header.readUInt32BE(92);
  if (sizeIsValid && pages > 0 && walSize(file) === 0 && size < pages * pageSize) {
    throw new SqliteStoreError(
      file,
      `is truncated: its header says ${pages} pages of ${pageSize} bytes (${pages * pageSize} bytes) but the file has ${size} bytes; ${NOT_MODIFIED}`,
    );
  }
  return true;
}

function walSize(file: string): number {
  try {
    return statSync(`${file}-wal`).size;
  } catch {
    return 0;
  }
}
