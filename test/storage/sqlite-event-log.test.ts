import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { TaskState } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { LoggedEvent } from "../../src/lifecycle/ports/event-log.js";
import { openSqliteTaskRepository, type SqliteTaskRepository } from "../../src/storage/sqlite/sqlite-task-repository.js";
import { Clock, artifactChange, artifactTexts, historyChange, newTask, scopeOf, statusChange, textArtifact } from "../support/tasks.js";
import { ackedOnCommit, answered, type Acked } from "../support/answered.js";

/**
 * The SQLite store's event log for resuming streams (A-33), read at the store: the events a
 * commit makes to one task share one `task_events` row (issue 15 item 5), and a read from any
 * cursor gives exactly the events after it, from such rows, from single-event rows, and after
 * a reopen.
 */
const S = TaskState;
const alice = scopeOf("t1", "alice");
const clock = new Clock();
const HOUR = 3_600_000;
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

let dir: string;
let file: string;
let repo: Acked<SqliteTaskRepository>;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "a2a-sqlite-events-"));
  file = join(dir, "tasks.db");
  repo = ackedOnCommit(openSqliteTaskRepository({ file, eventLog: { retentionMs: HOUR } }));
});
afterEach(async () => {
  await repo.close();
  rmSync(dir, { recursive: true, force: true });
});

/** What a logged event says, in a form to compare. */
function describe(e: LoggedEvent): string {
  if (e.kind === "status") return `${e.version} status ${e.status.state}${e.status.message ? ` ${e.status.message.parts[0]!.content.value}` : ""}`;
  if (e.kind === "artifact")
    return `${e.version} artifact ${e.artifact.artifactId} ${artifactTexts(e.artifact).join("+")}${e.append ? " append" : ""}${e.lastChunk ? " last" : ""}`;
  return `${e.version} history`;
}

/** A task whose changes come as one commit of three (versions 2–4), one of one (5), then one of three (6–8). */
async function writeTask(): Promise<{ id: string; expected: string[] }> {
  const store = repo.now;
  const task = newTask({ micros: clock.next(), text: "q" });
  await repo.create(alice, task);
  answered(store.update(alice, task.id, 1, statusChange(S.WORKING, clock.next(), "on it")));
  answered(store.update(alice, task.id, 2, artifactChange(textArtifact("a", "one"))));
  answered(store.update(alice, task.id, 3, artifactChange(textArtifact("a", "two"), true)));
  await nextTurn(); // committed
  await repo.update(alice, task.id, 4, historyChange("more"));
  answered(store.update(alice, task.id, 5, artifactChange(textArtifact("a", "three"), true, true)));
  answered(store.update(alice, task.id, 6, statusChange(S.INPUT_REQUIRED, clock.next())));
  await repo.update(alice, task.id, 7, statusChange(S.WORKING, clock.next(), "again"));
  const expected = [
    `2 status ${S.WORKING} on it`,
    "3 artifact a one",
    "4 artifact a two append",
    "5 history",
    "6 artifact a three append last",
    `7 status ${S.INPUT_REQUIRED}`,
    `8 status ${S.WORKING} again`,
  ];
  return { id: task.id, expected };
}

async function eventsAfter(id: string, after: number): Promise<string[] | string> {
  const read = await repo.eventLog!.readAfter(alice, id, after);
  return read.kind === "events" ? read.events.map(describe) : read.kind;
}

test("A-33 / issue 15 item 5: the events one commit makes to a task share one row; a read from every cursor gives exactly the events after it", async () => {
  const { id, expected } = await writeTask();
  const db = new Database(file, { readonly: true });
  const rows = db.prepare("SELECT first_version, version, kind FROM task_events ORDER BY version").all();
  db.close();
  expect(rows).toEqual([
    { first_version: 2, version: 4, kind: 4 },
    { first_version: null, version: 5, kind: 3 },
    { first_version: 6, version: 8, kind: 4 },
  ]);
  for (let after = 1; after <= 8; after++) expect(await eventsAfter(id, after)).toEqual(expected.slice(after - 1));
  const read = await repo.eventLog!.readAfter(alice, id, 3);
  expect(read.kind === "events" && read.state).toBe(S.WORKING);
  expect(await eventsAfter(id, 9)).toBe("expired"); // ahead of the task
  expect(await repo.eventLog!.readAfter(scopeOf("t1", "mallory"), id, 1)).toEqual({ kind: "not-found" });
});

test("A-33: after a reopen the same reads give the same events; a log trimmed past the cursor is expired", async () => {
  const { id, expected } = await writeTask();
  await repo.close();
  repo = ackedOnCommit(openSqliteTaskRepository({ file, eventLog: { retentionMs: HOUR } }));
  for (let after = 1; after <= 8; after++) expect(await eventsAfter(id, after)).toEqual(expected.slice(after - 1));
  await repo.close();
  const db = new Database(file);
  db.prepare("DELETE FROM task_events WHERE version <= 4").run(); // the first commit's row trimmed
  db.close();
  repo = ackedOnCommit(openSqliteTaskRepository({ file, eventLog: { retentionMs: HOUR } }));
  for (let after = 1; after <= 3; after++) expect(await eventsAfter(id, after)).toBe("expired");
  for (let after = 4; after <= 8; after++) expect(await eventsAfter(id, after)).toEqual(expected.slice(after - 1));
});

test("A-33: a gap in the log (events not kept while it was off) is expired, not skipped", async () => {
  const { id } = await writeTask();
  await repo.close();
  const db = new Database(file);
  db.prepare("DELETE FROM task_events WHERE version = 5").run();
  db.close();
  repo = ackedOnCommit(openSqliteTaskRepository({ file, eventLog: { retentionMs: HOUR } }));
  expect(await eventsAfter(id, 3)).toBe("expired");
  expect(await eventsAfter(id, 5)).toHaveLength(3);
});

test("A-33 / issue 15 item 5: a commit of appends only writes its chunks once (its event row's body is the tail row), reads back as the same events, and the task as the same artifact", async () => {
  const store = repo.now;
  const task = newTask({ micros: clock.next(), text: "q" });
  await repo.create(alice, task);
  await repo.update(alice, task.id, 1, statusChange(S.WORKING, clock.next()));
  await repo.update(alice, task.id, 2, artifactChange(textArtifact("a", "zero")));
  for (let v = 3; v < 6; v++) answered(store.update(alice, task.id, v, artifactChange(textArtifact("a", `c${v}`), true, v === 5)));
  await nextTurn(); // one commit of three appends, to a task that has a row
  const db = new Database(file, { readonly: true });
  const bodies = db
    .prepare(
      "SELECT e.body AS event, t.changes AS tail FROM task_events e JOIN artifact_tail t ON t.task_pk = e.task_pk AND t.version = e.version WHERE e.first_version = 4",
    )
    .all() as Array<{ event: Uint8Array | null; tail: Uint8Array }>;
  db.close();
  expect(bodies).toHaveLength(1);
  expect(bodies[0]!.event).toBeNull(); // the chunks are in the tail row only
  expect(bodies[0]!.tail.length).toBeGreaterThan(0);
  expect(await eventsAfter(task.id, 3)).toEqual(["4 artifact a c3 append", "5 artifact a c4 append", "6 artifact a c5 append last"]);
  const reopened = ackedOnCommit(openSqliteTaskRepository({ file, exclusive: false, eventLog: { retentionMs: HOUR } }));
  try {
    expect(artifactTexts((await reopened.get(alice, task.id))!.task.artifacts[0]!)).toEqual(["zero", "c3", "c4", "c5"]);
  } finally {
    await reopened.close();
  }
});

test("A-33 / issue 15 item 5: events whose bodies were in the tail still resume, after a reopen too, once the tail was emptied into a rewritten blob", async () => {
  const store = repo.now;
  const task = newTask({ micros: clock.next(), text: "q" });
  await repo.create(alice, task);
  await repo.update(alice, task.id, 1, statusChange(S.WORKING, clock.next()));
  await repo.update(alice, task.id, 2, artifactChange(textArtifact("a", "zero")));
  const big = (v: number) => `${v}:${"x".repeat(6000)}`; // three such commits outgrow the tail's 16 KiB: the blob is rewritten
  const expected: string[] = [];
  let version = 3;
  for (let commit = 0; commit < 4; commit++) {
    for (let i = 0; i < 2; i++, version++) {
      answered(store.update(alice, task.id, version, artifactChange(textArtifact("a", big(version)), true)));
      expected.push(`${version + 1} artifact a ${big(version)} append`);
    }
    await nextTurn();
  }
  const db = new Database(file, { readonly: true });
  const rows = db
    .prepare("SELECT e.first_version, e.version, e.body IS NULL AS inTail FROM task_events e WHERE e.first_version IS NOT NULL ORDER BY e.version")
    .all();
  const tails = db.prepare("SELECT version FROM artifact_tail ORDER BY version").pluck().all();
  db.close();
  // Commit 1 went to the tail; commit 2 outgrew it: the blob was rewritten with both, and commit 1's
  // body copied into its event row before its tail row went. Commits 3 and 4 are in the new tail only.
  expect(rows).toEqual([
    { first_version: 4, version: 5, inTail: 0 },
    { first_version: 6, version: 7, inTail: 0 },
    { first_version: 8, version: 9, inTail: 1 },
    { first_version: 10, version: 11, inTail: 1 },
  ]);
  expect(tails).toEqual([9, 11]);
  for (let after = 3; after <= 11; after++) expect(await eventsAfter(task.id, after)).toEqual(expected.slice(after - 3));
  await repo.close();
  repo = ackedOnCommit(openSqliteTaskRepository({ file, eventLog: { retentionMs: HOUR } }));
  for (let after = 3; after <= 11; after++) expect(await eventsAfter(task.id, after)).toEqual(expected.slice(after - 3));
  expect(artifactTexts((await repo.get(alice, task.id))!.task.artifacts[0]!)).toEqual(["zero", ...Array.from({ length: 8 }, (_, i) => big(i + 3))]);
});
