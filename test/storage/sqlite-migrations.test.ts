import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { TaskState } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION, migrate } from "../../src/storage/sqlite/migrations.js";
import { SqliteStoreError } from "../../src/storage/sqlite/sqlite-store-error.js";
import { openSqliteTaskRepository } from "../../src/storage/sqlite/sqlite-task-repository.js";
import { encodeMessage, encodeTaskCore } from "../../src/storage/sqlite/task-row-codec.js";
import { Clock, newTask, scopeOf, statusChange } from "../support/tasks.js";

/** Issue 5: schema migrations are versioned, run at start-up, upgrade older files and refuse newer ones. */
let dir: string;
let file: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "a2a-sqlite-mig-"));
  file = join(dir, "tasks.db");
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const alice = scopeOf("t1", "alice");

test("a fresh file is created at the newest schema version, marked as a task store", async () => {
  const repo = openSqliteTaskRepository({ file });
  expect(repo.schema).toEqual({ from: 0, to: SCHEMA_VERSION });
  await repo.close();
  const db = new Database(file, { readonly: true });
  expect(db.pragma("user_version", { simple: true })).toBe(SCHEMA_VERSION);
  expect(db.pragma("application_id", { simple: true })).toBe(APPLICATION_ID);
  expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
  db.close();
});

test("migrations are numbered 1..N without gaps", () => {
  expect(MIGRATIONS.map((m) => m.version)).toEqual(MIGRATIONS.map((_, i) => i + 1));
});

test("a version-1 database with tasks is upgraded at open; its tasks keep working and are counted", async () => {
  // Build a v1 file as the first release would have left it: schema step 1 only, rows written by hand.
  const clock = new Clock();
  const task = newTask({ micros: clock.next(), text: "from v1", contextId: "ctx" });
  const v1 = new Database(file);
  v1.pragma("journal_mode = WAL");
  migrate(v1, file, 1);
  expect(v1.pragma("user_version", { simple: true })).toBe(1);
  v1.prepare("INSERT INTO scopes (tenant, principal) VALUES (?, ?)").run(alice.tenant, alice.principal);
  const pk = v1
    .prepare(
      `INSERT INTO tasks (id, scope_id, context_id, state, status_micros, version, history_len, task, artifacts)
       VALUES (?, 1, 'ctx', ?, ?, 1, 1, ?, NULL)`,
    )
    .run(task.id, TaskState.SUBMITTED, clock.next(), encodeTaskCore(task)).lastInsertRowid;
  v1.prepare("INSERT INTO history (task_pk, seq, message) VALUES (?, 0, ?)").run(pk, encodeMessage(task.history[0]!));
  v1.close();

  const repo = openSqliteTaskRepository({ file });
  try {
    expect(repo.schema).toEqual({ from: 1, to: SCHEMA_VERSION });
    expect((await repo.get(alice, task.id))?.task.history).toHaveLength(1);
    // The counters added by step 2 were filled from the rows already there.
    expect((await repo.list(alice, { pageSize: 5, includeArtifacts: false })).totalSize).toBe(1);
    expect((await repo.list(alice, { pageSize: 5, contextId: "ctx", includeArtifacts: false })).totalSize).toBe(1);
    await repo.update(alice, task.id, 1, statusChange(TaskState.WORKING, clock.next()));
    expect((await repo.list(alice, { pageSize: 5, state: TaskState.WORKING, includeArtifacts: false })).totalSize).toBe(1);
    expect((await repo.list(alice, { pageSize: 5, state: TaskState.SUBMITTED, includeArtifacts: false })).totalSize).toBe(0);
    await repo.setMeta("k", "v");
  } finally {
    await repo.close();
  }
});

test("a database from a newer schema is refused, naming the file and both versions, and left unmodified", async () => {
  const repo = openSqliteTaskRepository({ file });
  await repo.close();
  const db = new Database(file);
  db.pragma(`user_version = ${SCHEMA_VERSION + 7}`);
  db.close();
  const before = readFileSync(file);

  let error: unknown;
  try {
    openSqliteTaskRepository({ file });
  } catch (err) {
    error = err;
  }
  expect(error).toBeInstanceOf(SqliteStoreError);
  const message = (error as Error).message;
  expect(message).toContain(file);
  expect(message).toContain(`schema version ${SCHEMA_VERSION + 7}`);
  expect(message).toContain(`(${SCHEMA_VERSION})`);
  expect(message).toContain("not modified");
  expect(readFileSync(file).equals(before)).toBe(true);
});

test("another application's SQLite file is refused, never given our tables", () => {
  const db = new Database(file);
  db.exec("CREATE TABLE invoices (id INTEGER PRIMARY KEY)");
  db.close();
  const before = readFileSync(file);
  expect(() => openSqliteTaskRepository({ file })).toThrow(/not ours.*not modified/);
  expect(readFileSync(file).equals(before)).toBe(true);

  const other = join(dir, "other.db");
  const db2 = new Database(other);
  db2.pragma("application_id = 1234");
  db2.close();
  expect(() => openSqliteTaskRepository({ file: other })).toThrow(/another application \(application_id 1234\)/);
});
