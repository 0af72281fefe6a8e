import { chmodSync, closeSync, constants, mkdirSync, openSync } from "node:fs";
import { dirname } from "node:path";

/** The store's files hold push tokens and credentials: only the server's own user reads them. */
export const PRIVATE_FILE_MODE = 0o600;
export const PRIVATE_DIR_MODE = 0o700;

/** The files SQLite keeps beside the database (WAL, shared memory) and the lock file (data-file-lock.ts). */
const SIDE_FILES = ["-wal", "-shm", ".lock"] as const;

/**
 * Makes the data directory (0700 when it is created here) and creates the database and its lock
 * file 0600 before SQLite opens them. Why before: SQLite creates a database file 0644 (less the
 * umask), and gives its -wal and -shm files the database file's own mode, so a database created
 * 0600 keeps all three private. Files an older version left readable by others are narrowed to
 * 0600. An existing directory keeps its mode (it may be shared, e.g. a mounted volume); the files
 * in it are private either way.
 */
export function preparePrivateDataFiles(file: string): void {
  mkdirSync(dirname(file), { recursive: true, mode: PRIVATE_DIR_MODE });
  for (const path of [file, `${file}.lock`]) createPrivately(path);
  for (const path of [file, ...SIDE_FILES.map((suffix) => `${file}${suffix}`)]) narrowMode(path);
}

/**
 * O_CREAT without O_TRUNC: an existing file is left as it is. Best effort: what cannot be created
 * here (a directory in the way, no permission) fails next with the store's own error, which says
 * what is wrong with the file.
 */
function createPrivately(path: string): void {
  try {
    closeSync(openSync(path, constants.O_RDONLY | constants.O_CREAT, PRIVATE_FILE_MODE));
  } catch {
    // reported by checkDatabaseFile, lockDataFile or the open itself
  }
}

/** A file another user owns is not ours to change (EPERM): SQLite's own open decides then. */
function narrowMode(path: string): void {
  try {
    chmodSync(path, PRIVATE_FILE_MODE);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== "ENOENT" && code !== "EPERM") throw err;
  }
}
