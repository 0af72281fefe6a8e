import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { SqliteStoreError } from "../../src/storage/sqlite/sqlite-store-error.js";
import { openSqliteTaskRepository } from "../../src/storage/sqlite/sqlite-task-repository.js";
import { Clock, newTask, scopeOf } from "../support/tasks.js";

/**
 * Issue 5 §6: a corrupt or unreadable database stops start-up with a message naming the
 * file; the file is never replaced, repaired or deleted.
 */
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "a2a-sqlite-bad-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const alice = scopeOf("t1", "alice");

function refusal(file: string, options: { integrityCheck?: "quick" | "off" | "auto" } = {}): SqliteStoreError {
  try {
    openSqliteTaskRepository({ file, ...options });
  } catch (err) {
    expect(err).toBeInstanceOf(SqliteStoreError);
    return err as SqliteStoreError;
  }
  throw new Error(`opening ${file} succeeded`);
}

/** A real, closed task database with enough rows to span many pages. */
async function realDatabase(file: string, tasks = 300): Promise<void> {
  const repo = openSqliteTaskRepository({ file });
  const clock = new Clock();
  for (let i = 0; i < tasks; i++) await repo.create(alice, newTask({ micros: clock.next(), text: "x".repeat(200) }));
  await repo.close();
}

test.each([
  ["random bytes", () => randomBytes(64 * 1024), /not a SQLite database/],
  ["a text file", () => Buffer.from("name,age\nada,36\n".repeat(100)), /not a SQLite database/],
  ["a file shorter than the SQLite header", () => Buffer.from("SQLite format 3\0"), /not a SQLite database/],
])("%s is refused with the file named, and left byte-for-byte unchanged", (_what, bytes, reason) => {
  const file = join(dir, "tasks.db");
  const content = bytes();
  writeFileSync(file, content);
  const error = refusal(file);
  expect(error.message).toContain(file);
  expect(error.message).toMatch(reason);
  expect(error.message).toContain("not modified");
  expect(readFileSync(file).equals(content)).toBe(true);
  expect(readdirSync(dir).filter((name) => !name.endsWith(".lock"))).toEqual(["tasks.db"]); // the lock side file is allowed
});

test("a truncated real database is refused without being touched", async () => {
  const file = join(dir, "tasks.db");
  await realDatabase(file);
  truncateSync(file, Math.floor(statSync(file).size / 2));
  const before = readFileSync(file);
  const error = refusal(file);
  expect(error.message).toContain(file);
  expect(error.message).toMatch(/truncated/);
  expect(readFileSync(file).equals(before)).toBe(true);
});

test("a database with damaged pages is refused by quick_check at open", async () => {
  const file = join(dir, "tasks.db");
  await realDatabase(file);
  const bytes = readFileSync(file);
  // Overwrite pages in the middle of the file (not the header page) with garbage.
  randomBytes(8192).copy(bytes, 4096 * 3);
  writeFileSync(file, bytes);
  const error = refusal(file, { integrityCheck: "quick" });
  expect(error.message).toContain(file);
  expect(error.message).toMatch(/corrupt/);
  expect(readFileSync(file).equals(bytes)).toBe(true);
});

test("with quick_check off, damage met by a read is still reported as a SqliteStoreError naming the file", async () => {
  const file = join(dir, "tasks.db");
  await realDatabase(file);
  const db = new Database(file, { readonly: true });
  const rootPage = db.prepare("SELECT rootpage FROM sqlite_schema WHERE name = 'history'").pluck().get() as number;
  const pageSize = db.pragma("page_size", { simple: true }) as number;
  db.close();
  const bytes = readFileSync(file);
  bytes.fill(0xff, (rootPage - 1) * pageSize, rootPage * pageSize);
  writeFileSync(file, bytes);

  const repo = openSqliteTaskRepository({ file, integrityCheck: "off" });
  try {
    const first = (await repo.list(alice, { pageSize: 1, includeArtifacts: false, historyLength: 0 })).tasks[0]!;
    const error = await Promise.resolve(repo.get(alice, first.id)).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(SqliteStoreError);
    expect((error as Error).message).toContain(file);
  } finally {
    await repo.close();
  }
});

test("a directory where the database file should be is refused with its name", () => {
  const file = join(dir, "tasks.db");
  mkdirSync(file);
  const error = refusal(file);
  expect(error.message).toContain(file);
  expect(error.message).toMatch(/is a directory/);
});
