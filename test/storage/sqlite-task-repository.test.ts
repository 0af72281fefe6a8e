import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TaskState } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { TaskNotFoundError } from "../../src/lifecycle/model/errors.js";
import { IllegalTransitionError, VersionConflictError, type TaskRepository } from "../../src/lifecycle/ports/task-repository.js";
import { openSqliteTaskRepository, type SqliteTaskRepository } from "../../src/storage/sqlite/sqlite-task-repository.js";
import { SCHEMA_VERSION } from "../../src/storage/sqlite/migrations.js";
import { describeTaskRepositoryContract } from "./task-repository.contract.js";
import { Clock, artifactChange, artifactTexts, historyChange, newTask, scopeOf, statusChange, textArtifact } from "../support/tasks.js";
import { ackedOnCommit } from "../support/answered.js";

/**
 * Behaviour of the SQLite store that the shared contract suite does not reach: durability
 * across close/reopen, batched retention, meta; and the shared contract on both a file and
 * ":memory:".
 */
describeTaskRepositoryContract("SqliteTaskRepository (file)", async () => {
  const tmp = mkdtempSync(join(tmpdir(), "a2a-sqlite-contract-"));
  const repo = openSqliteTaskRepository({ file: join(tmp, "tasks.db") });
  return {
    repo,
    cleanup: async () => {
      await repo.close();
      rmSync(tmp, { recursive: true, force: true });
    },
  };
});

describeTaskRepositoryContract("SqliteTaskRepository (:memory:)", async () => {
  const repo = openSqliteTaskRepository({ file: ":memory:" });
  return { repo, cleanup: () => repo.close() };
});

const S = TaskState;
const alice = scopeOf("t1", "alice");
const bob = scopeOf("t1", "bob");

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "a2a-sqlite-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe.each([
  ["file", () => join(dir, "nested", "tasks.db")],
  ["memory", () => ":memory:"],
])("SqliteTaskRepository (%s)", (_name, fileOf) => {
  let repo: SqliteTaskRepository;
  const clock = new Clock();
  beforeEach(() => {
    repo = openSqliteTaskRepository({ file: fileOf() });
  });
  afterEach(async () => {
    await repo.close();
  });

  test("R-TASK-3: a write is compare-and-set on the version; a lost race writes nothing", async () => {
    const task = newTask({ micros: clock.next(), text: "hi" });
    await repo.create(alice, task);
    expect(await repo.update(alice, task.id, 1, statusChange(S.WORKING, clock.next()))).toBe(2);
    await expect(repo.update(alice, task.id, 1, statusChange(S.COMPLETED, clock.next()))).rejects.toBeInstanceOf(VersionConflictError);
    const stored = await repo.get(alice, task.id);
    expect(stored?.version).toBe(2);
    expect(stored?.task.status?.state).toBe(S.WORKING);
  });

  test("R-TASK-2: an illegal transition is refused whole: no state, history or version change", async () => {
    const task = newTask({ micros: clock.next(), text: "hi" });
    await repo.create(alice, task);
    await repo.update(alice, task.id, 1, statusChange(S.WORKING, clock.next()));
    await repo.update(alice, task.id, 2, statusChange(S.COMPLETED, clock.next(), "done"));
    await expect(repo.update(alice, task.id, 3, statusChange(S.WORKING, clock.next(), "again"))).rejects.toBeInstanceOf(IllegalTransitionError);
    await expect(repo.update(alice, task.id, 3, historyChange("more"))).rejects.toBeInstanceOf(IllegalTransitionError);
    await expect(repo.update(alice, task.id, 3, artifactChange(textArtifact("a", "x")))).rejects.toBeInstanceOf(IllegalTransitionError);
    const stored = await repo.get(alice, task.id);
    expect(stored?.version).toBe(3);
    expect(stored?.task.history).toHaveLength(2);
    expect(stored?.task.artifacts).toHaveLength(0);
  });

  test("R-HIST: history_length N returns the N most recent messages, oldest first; 0 none", async () => {
    const task = newTask({ micros: clock.next(), text: "m0" });
    await repo.create(alice, task);
    let v = await repo.update(alice, task.id, 1, statusChange(S.WORKING, clock.next(), "m1"));
    v = await repo.update(alice, task.id, v, statusChange(S.INPUT_REQUIRED, clock.next(), "m2"));
    v = await repo.update(alice, task.id, v, historyChange("m3"));
    const texts = async (n?: number) =>
      (await repo.get(alice, task.id, { historyLength: n }))!.task.history.map((m) => (m.parts[0]!.content.case === "text" ? m.parts[0]!.content.value : "?"));
    expect(await texts()).toEqual(["m0", "m1", "m2", "m3"]);
    expect(await texts(2)).toEqual(["m2", "m3"]);
    expect(await texts(0)).toEqual([]);
    expect(await texts(10)).toEqual(["m0", "m1", "m2", "m3"]);
  });

  test("A-17: artifact chunks append, a non-append update replaces; status writes keep the artifacts", async () => {
    const task = newTask({ micros: clock.next() });
    await repo.create(alice, task);
    let v = await repo.update(alice, task.id, 1, statusChange(S.WORKING, clock.next()));
    v = await repo.update(alice, task.id, v, artifactChange(textArtifact("a", "one"), true));
    v = await repo.update(alice, task.id, v, artifactChange(textArtifact("a", "two"), true, true));
    v = await repo.update(alice, task.id, v, artifactChange(textArtifact("b", "x")));
    v = await repo.update(alice, task.id, v, artifactChange(textArtifact("b", "y")));
    v = await repo.update(alice, task.id, v, statusChange(S.COMPLETED, clock.next()));
    const stored = (await repo.get(alice, task.id))!.task;
    expect(stored.artifacts.map((a) => a.artifactId)).toEqual(["a", "b"]);
    expect(artifactTexts(stored.artifacts[0])).toEqual(["one", "two"]);
    expect(artifactTexts(stored.artifacts[1])).toEqual(["y"]);
  });

  test("A-22: a task of one scope does not exist in another", async () => {
    const task = newTask({ micros: clock.next() });
    await repo.create(alice, task);
    expect(await repo.get(bob, task.id)).toBeUndefined();
    expect(await repo.get(scopeOf("t2", "alice"), task.id)).toBeUndefined();
    await expect(repo.update(bob, task.id, 1, statusChange(S.WORKING, clock.next()))).rejects.toBeInstanceOf(TaskNotFoundError);
    expect((await repo.list(bob, { pageSize: 10, includeArtifacts: false })).totalSize).toBe(0);
  });

  test("R-LIST-6/R-LIST-2: pages are newest first, keyset-continued, with total_size per filter", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      const task = newTask({ micros: clock.next(), contextId: i % 2 === 0 ? "even" : "odd" });
      await repo.create(alice, task);
      ids.push(task.id);
    }
    // Move one task forward in time and to WORKING: it becomes the newest.
    await repo.update(alice, ids[0]!, 1, statusChange(S.WORKING, clock.next()));
    const seen: string[] = [];
    let after;
    for (;;) {
      const page = await repo.list(alice, { pageSize: 3, after, includeArtifacts: false });
      expect(page.totalSize).toBe(7);
      seen.push(...page.tasks.map((t) => t.id));
      if (!page.next) break;
      after = page.next;
    }
    expect(seen).toEqual([ids[0], ...ids.slice(1).reverse()]);
    const even = await repo.list(alice, { pageSize: 10, contextId: "even", includeArtifacts: false });
    expect(even.tasks.map((t) => t.id)).toEqual([ids[0], ids[6], ids[4], ids[2]]);
    expect(even.totalSize).toBe(4);
    const working = await repo.list(alice, { pageSize: 10, state: S.WORKING, includeArtifacts: false });
    expect(working.tasks.map((t) => t.id)).toEqual([ids[0]]);
    expect(working.totalSize).toBe(1);
    const evenSubmitted = await repo.list(alice, { pageSize: 1, contextId: "even", state: S.SUBMITTED, includeArtifacts: false });
    expect(evenSubmitted.totalSize).toBe(3);
    expect(evenSubmitted.next?.taskId).toBe(ids[6]);
  });

  test("R-LIST-7: status_timestamp_after is inclusive and total_size counts only matches", async () => {
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      const micros = clock.next(10);
      times.push(micros);
      await repo.create(alice, newTask({ micros, contextId: "c" }));
    }
    const page = await repo.list(alice, { pageSize: 2, statusMicrosAtLeast: times[2], includeArtifacts: false });
    expect(page.totalSize).toBe(3);
    expect(page.tasks).toHaveLength(2);
    const rest = await repo.list(alice, { pageSize: 2, statusMicrosAtLeast: times[2], after: page.next, includeArtifacts: false });
    expect(rest.tasks).toHaveLength(1);
    expect(rest.next).toBeUndefined();
    expect((await repo.list(alice, { pageSize: 2, statusMicrosAtLeast: times[2], contextId: "c", includeArtifacts: false })).totalSize).toBe(3);
  });

  test("R-LIST-8: artifacts only when include_artifacts is set", async () => {
    const task = newTask({ micros: clock.next() });
    await repo.create(alice, task);
    const v = await repo.update(alice, task.id, 1, statusChange(S.WORKING, clock.next()));
    await repo.update(alice, task.id, v, artifactChange(textArtifact("a", "x")));
    expect((await repo.list(alice, { pageSize: 5, includeArtifacts: false })).tasks[0]!.artifacts).toHaveLength(0);
    expect((await repo.list(alice, { pageSize: 5, includeArtifacts: true })).tasks[0]!.artifacts).toHaveLength(1);
  });

  test("retention: purgeTerminalBefore removes old terminal tasks with their history, in batches", async () => {
    const small = ackedOnCommit(openSqliteTaskRepository({ file: ":memory:", purgeBatchSize: 3 }));
    try {
      const old: string[] = [];
      for (let i = 0; i < 8; i++) {
        const task = newTask({ micros: clock.next(), text: "q" });
        await small.create(alice, task);
        await small.update(alice, task.id, 1, statusChange(S.WORKING, clock.next()));
        await small.update(alice, task.id, 2, statusChange(i % 2 ? S.COMPLETED : S.FAILED, clock.next(), "a"));
        old.push(task.id);
      }
      const cutoff = clock.next();
      const live = newTask({ micros: clock.next() });
      await small.create(alice, live);
      const recent = newTask({ micros: clock.next() });
      await small.create(alice, recent);
      await small.update(alice, recent.id, 1, statusChange(S.CANCELED, clock.next()));

      expect(await small.purgeTerminalBefore(cutoff)).toBe(8);
      for (const id of old) expect(await small.get(alice, id)).toBeUndefined();
      expect(await small.get(alice, live.id)).toBeDefined();
      expect(await small.get(alice, recent.id)).toBeDefined();
      expect((await small.list(alice, { pageSize: 10, includeArtifacts: false })).totalSize).toBe(2);
      const db = (small as unknown as { db: { prepare(sql: string): { get(): unknown } } }).db;
      expect(db.prepare("SELECT count(*) AS n FROM history").get()).toEqual({ n: 0 });
    } finally {
      await small.close();
    }
  });

  test("listActive returns SUBMITTED and WORKING tasks of every scope, with their scope", async () => {
    const a = newTask({ micros: clock.next() });
    const b = newTask({ micros: clock.next() });
    const c = newTask({ micros: clock.next() });
    await repo.create(alice, a);
    await repo.create(bob, b);
    await repo.create(bob, c);
    await repo.update(bob, b.id, 1, statusChange(S.WORKING, clock.next()));
    await repo.update(bob, c.id, 1, statusChange(S.REJECTED, clock.next()));
    const active = await repo.listActive();
    expect(active.map((x) => [x.scope.principal, x.task.task.id, x.task.version]).sort()).toEqual(
      [
        ["alice", a.id, 1],
        ["bob", b.id, 2],
      ].sort(),
    );
  });

  test("meta: a value set is read back and can be replaced", async () => {
    expect(await repo.getMeta("page-token-secret")).toBeUndefined();
    await repo.setMeta("page-token-secret", "s1");
    await repo.setMeta("page-token-secret", "s2");
    expect(await repo.getMeta("page-token-secret")).toBe("s2");
  });
});

describe("SqliteTaskRepository on disk", () => {
  test("a closed and reopened store keeps tasks, versions, history, artifacts, counters and meta", async () => {
    const file = join(dir, "tasks.db");
    const clock = new Clock();
    const first: TaskRepository & { setMeta(k: string, v: string): Promise<void> } = ackedOnCommit(openSqliteTaskRepository({ file }));
    const task = newTask({ micros: clock.next(), text: "q", contextId: "ctx" });
    await first.create(alice, task);
    let v = await first.update(alice, task.id, 1, statusChange(S.WORKING, clock.next(), "thinking"));
    v = await first.update(alice, task.id, v, artifactChange(textArtifact("a", "x")));
    await first.setMeta("k", "v");
    await first.close();

    const second = ackedOnCommit(openSqliteTaskRepository({ file, durability: "power" }));
    try {
      expect(second.schema).toEqual({ from: SCHEMA_VERSION, to: SCHEMA_VERSION });
      const stored = await second.get(alice, task.id);
      expect(stored?.version).toBe(v);
      expect(stored?.task.status?.state).toBe(S.WORKING);
      expect(stored?.task.history).toHaveLength(2);
      expect(artifactTexts(stored?.task.artifacts[0])).toEqual(["x"]);
      expect((await second.list(alice, { pageSize: 1, contextId: "ctx", includeArtifacts: true })).totalSize).toBe(1);
      expect(await second.getMeta("k")).toBe("v");
      expect((await second.listActive()).map((x) => x.task.task.id)).toEqual([task.id]);
    } finally {
      await second.close();
    }
  });
});
