import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { TaskState } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { DuplicateTaskError, IllegalTransitionError, type StoredTask, VersionConflictError } from "../../src/lifecycle/ports/task-repository.js";
import { openSqliteTaskRepository, type SqliteTaskRepository } from "../../src/storage/sqlite/sqlite-task-repository.js";
import { artifactChange, artifactTexts, Clock, newTask, scopeOf, statusChange, textArtifact } from "../support/tasks.js";
import { ackedOnCommit, answered, committed, type Acked } from "../support/answered.js";

/**
 * Group commit in the SQLite store: the writes of one event-loop turn share one transaction,
 * each in its own savepoint. What must hold whatever the batching: a write is acknowledged
 * only once committed, a refused write undoes nothing else, and reads never see a write that
 * is not committed yet.
 */
const S = TaskState;
const alice = scopeOf("t1", "alice");
const clock = new Clock();

let dir: string;
let file: string;
let repo: Acked<SqliteTaskRepository>;
/** Another connection on the file, read-only: what another process would see. */
let reader: Database.Database;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "a2a-sqlite-group-"));
  file = join(dir, "tasks.db");
  repo = ackedOnCommit(openSqliteTaskRepository({ file, busyTimeoutMs: 0 }));
  reader = new Database(file, { readonly: true });
});
afterEach(async () => {
  reader.close();
  await repo.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Version of a task as another connection (another process would be the same) sees it now. */
function committedVersion(reader: Database.Database, id: string): number | undefined {
  return reader.prepare("SELECT version FROM tasks WHERE id = ?").pluck().get(id) as number | undefined;
}

async function created(n: number): Promise<string[]> {
  const tasks = Array.from({ length: n }, () => newTask({ micros: clock.next(), text: "q" }));
  await Promise.all(tasks.map((t) => repo.create(alice, t)));
  return tasks.map((t) => t.id);
}

test("issue 5 §3 (ack after commit): each of many concurrent writes is visible to another connection the moment afterCommit tells so", async () => {
  const ids = await created(40);
  await committed(repo);
  for (const id of ids) expect(committedVersion(reader, id)).toBe(1);
  const seenAtAck = await Promise.all(
    ids.map((id) => {
      const v = answered(repo.now.update(alice, id, 1, statusChange(S.WORKING, clock.next())));
      return committed(repo).then(() => ({ v, seen: committedVersion(reader, id) }));
    }),
  );
  expect(seenAtAck).toEqual(ids.map(() => ({ v: 2, seen: 2 })));
});

test("R-TASK-2/R-TASK-3: refused writes in the same turn as accepted ones reject alone; every accepted one is stored", async () => {
  const [a, b, c] = await created(3);
  await repo.update(alice, c!, 1, statusChange(S.WORKING, clock.next()));
  await repo.update(alice, c!, 2, statusChange(S.COMPLETED, clock.next()));
  const results = await Promise.allSettled([
    repo.update(alice, a!, 1, statusChange(S.WORKING, clock.next(), "a works")),
    repo.update(alice, b!, 7, statusChange(S.WORKING, clock.next(), "stale")), // wrong version
    repo.update(alice, c!, 3, statusChange(S.WORKING, clock.next(), "after the end")), // terminal
    repo.update(alice, b!, 1, statusChange(S.WORKING, clock.next(), "b works")),
    repo.update(alice, a!, 2, statusChange(S.COMPLETED, clock.next(), "a done")), // sees the first write of the turn
  ]);
  expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "rejected", "fulfilled", "fulfilled"]);
  expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(VersionConflictError);
  expect((results[2] as PromiseRejectedResult).reason).toBeInstanceOf(IllegalTransitionError);
  const texts = async (id: string) => (await repo.get(alice, id))!.task.history.map((m) => m.parts[0]!.content.value);
  expect(await texts(a!)).toEqual(["q", "a works", "a done"]);
  expect(await texts(b!)).toEqual(["q", "b works"]);
  expect((await repo.get(alice, c!))!.version).toBe(3);
});

test("issue 5 §3: a read never sees a write that is not committed: it commits what was applied first", async () => {
  const [id] = await created(1);
  const pending = repo.update(alice, id!, 1, statusChange(S.WORKING, clock.next()));
  expect(committedVersion(reader, id!)).toBe(1); // applied, not committed
  const read = await repo.get(alice, id!);
  expect({ version: read!.version, state: read!.task.status!.state }).toEqual({ version: 2, state: S.WORKING });
  expect(committedVersion(reader, id!)).toBe(2); // what the read returned is on disk
  expect(await pending).toBe(2);
});

test("issue 5 §3: a page of ListTasks shows the writes applied so far, committed first; a read of another task commits nothing", async () => {
  const [a, b] = await created(2);
  expect(answered(repo.now.update(alice, a!, 1, statusChange(S.WORKING, clock.next())))).toBe(2);
  expect((await repo.get(alice, b!))!.version).toBe(1);
  expect(committedVersion(reader, a!)).toBe(1); // b's read left a's write staged
  const page = await repo.list(alice, { pageSize: 10, includeArtifacts: false });
  expect(page.tasks.find((t) => t.id === a)!.status!.state).toBe(S.WORKING);
  expect(committedVersion(reader, a!)).toBe(2);
});

test("issue 5 §3 (synchronous face): a write is applied and answered at once, and told of its commit at the end of the turn", async () => {
  const [a, b] = await created(2);
  const store = repo.now;
  const told: string[] = [];
  expect(answered(store.update(alice, a!, 1, statusChange(S.WORKING, clock.next())))).toBe(2);
  store.afterCommit!((error) => told.push(`a ${String(error)} ${committedVersion(reader, a!)}`));
  expect(answered(store.update(alice, a!, 2, statusChange(S.COMPLETED, clock.next())))).toBe(3); // guarded against the applied write
  const conflict = store.update(alice, b!, 5, statusChange(S.WORKING, clock.next()));
  const illegal = store.update(alice, a!, 3, statusChange(S.WORKING, clock.next()));
  await expect(conflict).rejects.toBeInstanceOf(VersionConflictError);
  await expect(illegal).rejects.toBeInstanceOf(IllegalTransitionError);
  store.afterCommit!((error) => told.push(`b ${String(error)} ${committedVersion(reader, a!)}`));
  expect(told).toEqual([]);
  expect(committedVersion(reader, a!)).toBe(1);
  await new Promise((resolve) => setImmediate(resolve));
  expect(told).toEqual(["a undefined 3", "b undefined 3"]); // in order, once the commit is on disk
  expect(committedVersion(reader, b!)).toBe(1); // the refused write undid nothing and stored nothing
  const later: unknown[] = [];
  store.afterCommit!((error) => later.push(error));
  expect(later).toEqual([undefined]); // nothing waits for a commit: told at once
});

test("issue 15 item 5: a read in the commit's callback (a blocking reply) gets the task as its row holds it, handed over once, for any history length", async () => {
  // One task made in the turn (all its history in memory), one that had rows before (history on disk).
  const [old] = await created(1);
  await repo.update(alice, old!, 1, statusChange(S.WORKING, clock.next(), "working"));
  const store = repo.now;
  const fresh = newTask({ micros: clock.next(), text: "q" });
  answered(store.create(alice, fresh));
  answered(store.update(alice, fresh.id, 1, statusChange(S.WORKING, clock.next(), "w")));
  answered(store.update(alice, fresh.id, 2, artifactChange(textArtifact("a1", "one"))));
  answered(store.update(alice, fresh.id, 3, statusChange(S.COMPLETED, clock.next(), "done")));
  answered(store.update(alice, old!, 2, statusChange(S.COMPLETED, clock.next(), "old done")));
  const inCallback: Array<StoredTask | undefined> = [];
  const lengths = [undefined, 0, 1, 2, 5];
  store.afterCommit!(() => {
    for (const historyLength of lengths) {
      for (const id of [fresh.id, old!]) inCallback.push(answered(store.get(alice, id, { historyLength })));
    }
    const handed = inCallback[0]!.task;
    handed.history.length = 0; // the reader owns what it was handed: this must not reach later reads
    handed.artifacts.length = 0;
    inCallback.push(answered(store.get(scopeOf("t1", "mallory"), fresh.id))); // another principal's task stays invisible
  });
  await new Promise((resolve) => setImmediate(resolve));
  expect(inCallback.at(-1)).toBeUndefined();
  let i = 0;
  for (const historyLength of lengths) {
    for (const id of [fresh.id, old!]) {
      const fromRow = await repo.get(alice, id, { historyLength });
      if (i === 0) expect(inCallback[i]!.version).toBe(fromRow!.version);
      else expect(inCallback[i]).toEqual(fromRow);
      i++;
    }
  }
  const stored = (await repo.get(alice, fresh.id))!;
  expect(stored.version).toBe(4);
  expect(stored.task.history.map((m) => m.parts[0]!.content.value)).toEqual(["q", "w", "done"]);
  expect(artifactTexts(stored.task.artifacts[0])).toEqual(["one"]);
});

test("issue 5 §3: a batch that fails half-written is rolled back whole, everyone who waits hears why, and the store keeps working", async () => {
  const [a, b] = await created(2);
  const db = (repo as unknown as { db: Database.Database }).db;
  // A real SQLite failure in the middle of the batch: b's row write aborts (a may be written before it).
  db.exec(`CREATE TEMP TRIGGER fail_b BEFORE UPDATE ON tasks WHEN new.id = '${b}' BEGIN SELECT RAISE(ABORT, 'injected failure'); END`);
  const store = repo.now;
  const told: unknown[] = [];
  expect(answered(store.update(alice, a!, 1, statusChange(S.WORKING, clock.next())))).toBe(2);
  store.afterCommit!((error) => told.push(error));
  const asyncWrite = repo.update(alice, b!, 1, statusChange(S.WORKING, clock.next()));
  // (Matched by its message, not toThrow: better-sqlite3's error class may come from another Jest module registry.)
  await expect(asyncWrite).rejects.toMatchObject({ message: "injected failure" });
  expect(told).toHaveLength(1);
  expect(String(told[0])).toContain("injected failure");
  expect((await repo.get(alice, a!))!.version).toBe(1);
  expect((await repo.get(alice, b!))!.version).toBe(1);
  db.exec("DROP TRIGGER fail_b");
  expect(await repo.update(alice, a!, 1, statusChange(S.WORKING, clock.next()))).toBe(2);
  expect(await repo.update(alice, b!, 1, statusChange(S.WORKING, clock.next()))).toBe(2);
});

test("issue 5 §3: when the transaction cannot be had, every write of the turn is refused, none is stored, and the store keeps working", async () => {
  const ids = await created(5);
  const other = new Database(file);
  other.exec("BEGIN IMMEDIATE"); // another writer holds the write lock (busy timeout 0)
  let results: PromiseSettledResult<number>[];
  try {
    results = await Promise.allSettled(ids.map((id) => repo.update(alice, id, 1, statusChange(S.WORKING, clock.next()))));
  } finally {
    other.exec("ROLLBACK");
    other.close();
  }
  expect(results.map((r) => r.status)).toEqual(ids.map(() => "rejected"));
  expect((results[0] as PromiseRejectedResult).reason).toMatchObject({ code: "SQLITE_BUSY" });
  for (const id of ids) expect((await repo.get(alice, id))!.version).toBe(1);
  expect(await Promise.all(ids.map((id) => repo.update(alice, id, 1, statusChange(S.WORKING, clock.next()))))).toEqual(ids.map(() => 2));
});

test("issue 5 §3: close() commits the writes still queued and resolves them", async () => {
  const [id] = await created(1);
  const pending = repo.update(alice, id!, 1, statusChange(S.WORKING, clock.next()));
  await repo.close();
  expect(await pending).toBe(2);
  repo = ackedOnCommit(openSqliteTaskRepository({ file }));
  expect((await repo.get(alice, id!))!.version).toBe(2);
});

test("R-TASK-2 / issue 15 item 5: a task id already stored is refused after a reopen, whether above or below the ids the server makes", async () => {
  const made = await created(2); // time-ordered ids, as the server makes them
  const low = newTask({ id: "0-client-chosen", micros: clock.next(), text: "q" });
  const wide = newTask({ id: "\u00e9t\u00e9-\u{1f600}", micros: clock.next(), text: "q" });
  await repo.create(alice, low);
  await repo.create(alice, wide);
  await repo.close();
  for (const id of [made[1]!, low.id, wide.id]) {
    repo = ackedOnCommit(openSqliteTaskRepository({ file, busyTimeoutMs: 0 }));
    await expect(repo.create(alice, newTask({ id, micros: clock.next() }))).rejects.toBeInstanceOf(DuplicateTaskError);
    const fresh = newTask({ micros: clock.next() });
    await expect(repo.create(alice, fresh)).resolves.toMatchObject({ version: 1 });
    await expect(repo.create(alice, newTask({ id: fresh.id, micros: clock.next() }))).rejects.toBeInstanceOf(DuplicateTaskError);
    await repo.close();
  }
  repo = ackedOnCommit(openSqliteTaskRepository({ file, busyTimeoutMs: 0 }));
});
