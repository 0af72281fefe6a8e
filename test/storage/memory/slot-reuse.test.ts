import { describe, expect, it } from "@jest/globals";
import { TaskState } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { MemoryTaskRepository } from "../../../src/storage/memory/memory-task-repository.js";
import { Clock, newTask, scopeOf, statusChange } from "../../support/tasks.js";

const alice = scopeOf("t", "alice");
const bob = scopeOf("t", "bob");

/** Drives a new task to COMPLETED at `micros` (all its status timestamps equal). */
async function completed(repo: MemoryTaskRepository, scope = alice, id: string, contextId: string, micros: number, text = id) {
  await repo.create(scope, newTask({ id, contextId, micros, text }));
  await repo.update(scope, id, 1, statusChange(TaskState.WORKING, micros));
  await repo.update(scope, id, 2, statusChange(TaskState.COMPLETED, micros, `answer to ${text}`));
}

async function listIds(repo: MemoryTaskRepository, scope = alice, q: { contextId?: string; state?: TaskState } = {}) {
  const page = await repo.list(scope, { pageSize: 100, includeArtifacts: true, ...q });
  return { ids: page.tasks.map((t) => t.id), total: page.totalSize };
}

describe("MemoryTaskRepository: reused task slots never bring back old tasks", () => {
  it("R-TASK-4: tasks created after a purge, with the purged ids, contexts and timestamps, are listed once and read as themselves", async () => {
    const repo = new MemoryTaskRepository();
    const clock = new Clock();
    const micros = clock.next();
    // A task that stays keeps alice's scope, and its indexes with their stale entries, alive.
    await repo.create(alice, newTask({ id: "keeper", contextId: "c0", micros: micros - 1 }));
    // 200 tasks on one timestamp: ties everywhere; enough removals that freed slots get reused.
    for (let i = 0; i < 200; i++) await completed(repo, alice, `t${i}`, `c${i % 3}`, micros, "old");
    await completed(repo, bob, "bob-task", "c0", micros);
    expect(await repo.purgeTerminalBefore(micros + 1)).toBe(201);
    expect(await listIds(repo)).toEqual({ ids: ["keeper"], total: 1 });

    for (let i = 0; i < 150; i++) await completed(repo, alice, `t${i}`, `c${i % 2}`, micros, "new");
    const all = await repo.list(alice, { pageSize: 100, includeArtifacts: true, statusMicrosAtLeast: micros });
    expect(all.totalSize).toBe(150);
    expect(new Set(all.tasks.map((t) => t.id)).size).toBe(100); // one page, no duplicates
    expect(all.tasks.every((t) => t.history[0]?.parts[0]?.content.value === "new")).toBe(true);
    const rest = await repo.list(alice, { pageSize: 100, includeArtifacts: true, after: all.next });
    expect(rest.tasks.map((t) => t.id)).toHaveLength(51); // 50 more, then the keeper
    expect(new Set([...all.tasks, ...rest.tasks].map((t) => t.id)).size).toBe(151);
    expect((await listIds(repo, alice, { contextId: "c0" })).total).toBe(76);
    expect((await listIds(repo, alice, { contextId: "c2" })).total).toBe(0);
    expect((await listIds(repo, alice, { state: TaskState.COMPLETED })).ids).toHaveLength(100);
    expect(await listIds(repo, bob)).toEqual({ ids: [], total: 0 });
    for (const i of [0, 77, 149]) {
      const read = await repo.get(alice, `t${i}`);
      expect(read?.task.history[0]?.parts[0]?.content.value).toBe("new");
      expect(read?.task.contextId).toBe(`c${i % 2}`);
      expect(read?.version).toBe(3);
    }
    expect(await repo.get(alice, "t150")).toBeUndefined();
    expect(await repo.get(bob, "bob-task")).toBeUndefined();
    await repo.close();
  });

  it("a blocking reader never gets another task's just-packed object from a reused slot", async () => {
    const repo = new MemoryTaskRepository();
    const clock = new Clock();
    const old = clock.next();
    // Settle, purge and refill within one turn of the event loop: the hand-over map is still full.
    for (let i = 0; i < 100; i++) await completed(repo, alice, `old${i}`, "c", old, "old");
    await repo.purgeTerminalBefore(old + 1);
    const now = clock.next();
    for (let i = 0; i < 100; i++) {
      await repo.create(alice, newTask({ id: `new${i}`, contextId: "d", micros: now, text: "new" }));
      await repo.update(alice, `new${i}`, 1, statusChange(TaskState.WORKING, now));
      await repo.update(alice, `new${i}`, 2, statusChange(TaskState.INPUT_REQUIRED, now)); // packed at version 3
      const read = await repo.get(alice, `new${i}`);
      expect(read?.task.id).toBe(`new${i}`);
      expect(read?.task.history[0]?.parts[0]?.content.value).toBe("new");
    }
    await repo.close();
  });

  it("a context past 32 tasks keeps its order and counts through status changes and purges", async () => {
    const repo = new MemoryTaskRepository();
    const clock = new Clock();
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) {
      const id = `t${String(i).padStart(2, "0")}`;
      ids.push(id);
      await repo.create(alice, newTask({ id, contextId: "big", micros: clock.next() }));
    }
    await repo.update(alice, "t05", 1, statusChange(TaskState.WORKING, clock.next())); // moves to the front
    await repo.update(alice, "t06", 1, statusChange(TaskState.REJECTED, clock.next()));
    const listed = await listIds(repo, alice, { contextId: "big" });
    expect(listed.ids).toEqual(["t06", "t05", ...ids.filter((id) => id !== "t05" && id !== "t06").reverse()]);
    expect(listed.total).toBe(40);
    expect((await listIds(repo, alice, { contextId: "big", state: TaskState.SUBMITTED })).total).toBe(38);
    expect(await repo.purgeTerminalBefore(clock.next())).toBe(1);
    expect((await listIds(repo, alice, { contextId: "big" })).total).toBe(39);
    expect((await listIds(repo, alice, { contextId: "big", state: TaskState.REJECTED })).total).toBe(0);
    await repo.close();
  });
});
