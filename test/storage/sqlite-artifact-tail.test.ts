import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { TaskState } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { openSqliteTaskRepository, type SqliteTaskRepository } from "../../src/storage/sqlite/sqlite-task-repository.js";
import { Clock, artifactChange, artifactTexts, newTask, scopeOf, statusChange, textArtifact } from "../support/tasks.js";
import { ackedOnCommit, answered, type Acked } from "../support/answered.js";

/**
 * Issue 15 item 5: an agent that appends one chunk per event-loop turn makes one commit per
 * chunk. The SQLite store keeps those appends in `artifact_tail` rows instead of rewriting the
 * task's whole artifacts blob each commit, and rewrites the blob only once the tail is as large
 * as it (or the task finishes). Whatever the split, every read gives the artifacts as applied.
 */
const S = TaskState;
const alice = scopeOf("t1", "alice");
const clock = new Clock();
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

let dir: string;
let file: string;
let repo: Acked<SqliteTaskRepository>;
let reader: Database.Database;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "a2a-sqlite-tail-"));
  file = join(dir, "tasks.db");
  repo = ackedOnCommit(openSqliteTaskRepository({ file }));
  reader = new Database(file, { readonly: true });
});
afterEach(async () => {
  reader.close();
  await repo.close();
  rmSync(dir, { recursive: true, force: true });
});

function stored(id: string): { tailRows: number; tailBytes: number; blobBytes: number; apart: boolean } {
  const row = reader
    .prepare(
      `SELECT t.pk, t.tail_bytes, length(coalesce(a.artifacts, t.artifacts)) AS blob, a.task_pk IS NOT NULL AS apart
       FROM tasks t LEFT JOIN task_artifacts a ON a.task_pk = t.pk WHERE t.id = ?`,
    )
    .get(id) as { pk: number; tail_bytes: number; blob: number | null; apart: number };
  const tailRows = reader.prepare("SELECT count(*) FROM artifact_tail WHERE task_pk = ?").pluck().get(row.pk) as number;
  return { tailRows, tailBytes: row.tail_bytes, blobBytes: row.blob ?? 0, apart: row.apart === 1 };
}

/** A task in WORKING with a first chunk of artifact "a", committed. */
async function started(): Promise<string> {
  const task = newTask({ micros: clock.next(), text: "q" });
  await repo.create(alice, task);
  await repo.update(alice, task.id, 1, statusChange(S.WORKING, clock.next()));
  await repo.update(alice, task.id, 2, artifactChange(textArtifact("a", "chunk-0")));
  return task.id;
}

test("issue 15 item 5: appends committed one per turn go to the tail, not the blob; every read, and a reopen, gives all of them in order", async () => {
  const id = await started();
  const expected = ["chunk-0"];
  let version = 3;
  for (let i = 1; i <= 60; i++) {
    answered(repo.now.update(alice, id, version++, artifactChange(textArtifact("a", `chunk-${i}`), true)));
    expected.push(`chunk-${i}`);
    await nextTurn(); // its own commit
    if (i % 20 === 0) expect(artifactTexts((await repo.get(alice, id))!.task.artifacts[0])).toEqual(expected);
  }
  const { tailRows, blobBytes } = stored(id);
  expect(tailRows).toBe(61); // one row per commit (the first chunk's too: the task had its row), the blob untouched
  expect(blobBytes).toBe(0); // the task had no artifact when its row was written
  // A replacing write of another artifact and an append to the first, in one commit: one more row.
  answered(repo.now.update(alice, id, version++, artifactChange(textArtifact("b", "b-0"))));
  answered(repo.now.update(alice, id, version++, artifactChange(textArtifact("a", "last"), true, true)));
  await nextTurn();
  expect(stored(id).tailRows).toBe(62);
  const read = (await repo.get(alice, id))!.task;
  expect(read.artifacts.map((a) => a.artifactId)).toEqual(["a", "b"]);
  expect(artifactTexts(read.artifacts[0])).toEqual([...expected, "last"]);
  await repo.close();
  repo = ackedOnCommit(openSqliteTaskRepository({ file }));
  const reopened = (await repo.get(alice, id))!.task;
  expect(reopened.artifacts).toEqual(read.artifacts);
  // The next write after the reopen starts from the row (blob + tail).
  await repo.update(alice, id, version++, artifactChange(textArtifact("b", "b-1"), true));
  expect(artifactTexts((await repo.get(alice, id))!.task.artifacts[1])).toEqual(["b-0", "b-1"]);
});

test("issue 15 item 5: the blob is rewritten once the tail outgrows three times it, so the bytes written stay linear; a finished task keeps no tail", async () => {
  const id = await started();
  const big = "x".repeat(4096);
  let version = 3;
  let rewrites = 0;
  let lastBlob = stored(id).blobBytes;
  for (let i = 1; i <= 200; i++) {
    answered(repo.now.update(alice, id, version++, artifactChange(textArtifact("a", `${i}:${big}`), true)));
    await nextTurn();
    const now = stored(id);
    expect(now.tailBytes).toBeLessThanOrEqual(Math.max(3 * now.blobBytes, 16 * 1024)); // TAIL_PER_BLOB
    if (now.blobBytes !== lastBlob) {
      rewrites++;
      expect(now).toMatchObject({ tailRows: 0, tailBytes: 0, apart: true }); // rewritten out of the task's row
      lastBlob = now.blobBytes;
    }
  }
  // 200 chunks of 4 KiB: the blob grows fourfold at each rewrite, so a handful of rewrites, not 200.
  expect(rewrites).toBeGreaterThan(2);
  expect(rewrites).toBeLessThan(12);
  await repo.update(alice, id, version++, statusChange(S.COMPLETED, clock.next()));
  await Promise.resolve(repo.update(alice, id, version - 1, statusChange(S.COMPLETED, clock.next()))).catch(() => undefined); // refused: terminal
  const done = (await repo.get(alice, id))!.task;
  expect(done.artifacts[0]!.parts).toHaveLength(201);
  expect(
    artifactTexts(done.artifacts[0])
      .slice(1)
      .map((t) => Number(t.split(":")[0])),
  ).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
});

test("issue 15 item 5: a task finishing in the commit of its last append writes the whole blob and empties its tail", async () => {
  const id = await started();
  let version = 3;
  for (let i = 1; i <= 5; i++) {
    await repo.update(alice, id, version++, artifactChange(textArtifact("a", `chunk-${i}`), true));
  }
  expect(stored(id).tailRows).toBe(6);
  answered(repo.now.update(alice, id, version++, artifactChange(textArtifact("a", "end"), true, true)));
  answered(repo.now.update(alice, id, version++, statusChange(S.COMPLETED, clock.next())));
  await nextTurn();
  expect(stored(id)).toMatchObject({ tailRows: 0, tailBytes: 0 });
  const page = await repo.list(alice, { pageSize: 10, includeArtifacts: true });
  expect(artifactTexts(page.tasks[0]!.artifacts[0])).toEqual(["chunk-0", "chunk-1", "chunk-2", "chunk-3", "chunk-4", "chunk-5", "end"]);
});

test("issue 15 item 5: a blob written with the task's row moves out of it at the first later append; reads give it whole", async () => {
  const task = newTask({ micros: clock.next(), text: "q" });
  answered(repo.now.create(alice, task));
  answered(repo.now.update(alice, task.id, 1, statusChange(S.WORKING, clock.next())));
  answered(repo.now.update(alice, task.id, 2, artifactChange(textArtifact("a", "in-row"))));
  await nextTurn();
  expect(stored(task.id)).toMatchObject({ tailRows: 0, apart: false });
  await repo.update(alice, task.id, 3, artifactChange(textArtifact("a", "next"), true));
  expect(stored(task.id)).toMatchObject({ tailRows: 1, apart: true });
  expect(artifactTexts((await repo.get(alice, task.id))!.task.artifacts[0])).toEqual(["in-row", "next"]);
  const row = reader.prepare("SELECT artifacts FROM tasks WHERE id = ?").pluck().get(task.id);
  expect(row).toBeNull();
});
