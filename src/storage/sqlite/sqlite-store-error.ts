/**
 * The database file cannot be used: it is corrupt, not a SQLite database, unreadable,
 * written by a newer version of this server, or belongs to another application.
 * Start-up stops with this error; the store never repairs, replaces or deletes the file,
 * so an operator can inspect it or restore a backup.
 */
export class SqliteStoreError extends Error {
  constructor(
    readonly file: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`task database ${file}: ${detail}`, options);
    this.name = "SqliteStoreError";
  }
}

/**
 * SQLite result codes (primary, or extended like SQLITE_IOERR_SHORT_READ) that mean the
 * bytes on disk are not a usable database, as opposed to a bug in a query.
 */
const BAD_DATA_CODES = ["SQLITE_CORRUPT", "SQLITE_NOTADB", "SQLITE_CANTOPEN", "SQLITE_IOERR", "SQLITE_PERM", "SQLITE_READONLY"];

export function isBadDataError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && BAD_DATA_CODES.some((c) => code === c || code.startsWith(`${c}_`));
}

/** A SqliteStoreError for damage found on disk: names the file and promises it was not modified. */
export function badData(file: string, err: unknown): SqliteStoreError {
  const code = (err as { code?: string }).code;
  return new SqliteStoreError(file, `is corrupt or unreadable (${code ? `${code}: ` : ""}${(err as Error).message}); the file was not modified`, {
    cause: err,
  });
}
