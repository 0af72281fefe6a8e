import { describe, expect, it } from "@jest/globals";
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { ArtifactSchema, PartSchema, TaskSchema, TaskState, TaskStatusSchema } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { MemoryTaskRepository } from "../../src/storage/memory/memory-task-repository.js";
import { describeTaskRepositoryContract } from "./task-repository.contract.js";

describeTaskRepositoryContract("MemoryTaskRepository", async () => {
  const repo = new MemoryTaskRepository();
  return { repo, cleanup: () => repo.close() };
});

describe("MemoryTaskRepository: settled tasks in off-heap slabs", () => {
  const scope = { tenant: "", principal: "anonymous" };
  const at = (ms: number) => timestampFromMs(Date.UTC(2025, 0, 1) + ms);

  async function completedTask(repo: MemoryTaskRepository, i: number, bigText: string): Promise<void> {
    const id = `task-${i}`;
    const status = (state: TaskState, ms: number) => create(TaskStatusSchema, { state, timestamp: at(ms) });
    await repo.create(scope, create(TaskSchema, { id, contextId: `ctx-${i}`, status: status(TaskState.SUBMITTED, i) }));
    const artifact = create(ArtifactSchema, { artifactId: "a", parts: [create(PartSchema, { content: { case: "text", value: bigText } })] });
    await repo.update(scope, id, 1, { kind: "status", status: status(TaskState.WORKING, i) });
    await repo.update(scope, id, 2, { kind: "artifact", artifact, append: false, lastChunk: true });
    await repo.update(scope, id, 3, { kind: "status", status: status(TaskState.COMPLETED, i) });
  }

  it("R-TASK: purging settled tasks gives their slabs back, and what stays reads back intact", async () => {
    const repo = new MemoryTaskRepository();
    const text = "x".repeat(4096);
    for (let i = 0; i < 1000; i++) await completedTask(repo, i, text);
    expect(repo.packedFootprint.slabs).toBeGreaterThanOrEqual(4); // ~4 MB of packed tasks
    expect(await repo.purgeTerminalBefore((Date.UTC(2025, 0, 1) + 900) * 1000)).toBe(900);
    expect(repo.packedFootprint.slabs).toBeLessThanOrEqual(2); // the slab being filled, and the one holding tasks 900..999
    const kept = await repo.get(scope, "task-950");
    expect(kept?.task.artifacts[0]?.parts[0]?.content.value).toBe(text);
    expect(kept?.task.status?.state).toBe(TaskState.COMPLETED);
    expect(await repo.get(scope, "task-10")).toBeUndefined();
    await repo.close();
  });

  it("R-TASK: an interrupted task that resumes releases its packed bytes", async () => {
    const repo = new MemoryTaskRepository();
    const big = "y".repeat(300 * 1024);
    const status = (state: TaskState, ms: number) => create(TaskStatusSchema, { state, timestamp: at(ms) });
    await repo.create(scope, create(TaskSchema, { id: "t", contextId: "c", status: status(TaskState.SUBMITTED, 1) }));
    let v = await repo.update(scope, "t", 1, { kind: "status", status: status(TaskState.WORKING, 2) });
    for (let round = 0; round < 12; round++) {
      const artifact = create(ArtifactSchema, { artifactId: `a${round}`, parts: [create(PartSchema, { content: { case: "text", value: big } })] });
      v = await repo.update(scope, "t", v, { kind: "artifact", artifact, append: false, lastChunk: true });
      v = await repo.update(scope, "t", v, { kind: "status", status: status(TaskState.INPUT_REQUIRED, 10 + round) }); // packed
      v = await repo.update(scope, "t", v, { kind: "status", status: status(TaskState.WORKING, 20 + round) }); // live again
    }
    // 12 rounds packed up to ~23 MB in total; only what is still held may stay reserved.
    expect(repo.packedFootprint.bytes).toBeLessThan(8 * 1024 * 1024);
    expect((await repo.get(scope, "t"))?.task.artifacts).toHaveLength(12);
    await repo.close();
  });

  it("R-TASK: only tasks in progress keep a heap entry for fast lookup; settling drops it, resuming brings it back", async () => {
    const repo = new MemoryTaskRepository();
    for (let i = 0; i < 50; i++) await completedTask(repo, i, "done");
    const status = (state: TaskState, ms: number) => create(TaskStatusSchema, { state, timestamp: at(ms) });
    await repo.create(scope, create(TaskSchema, { id: "asks", contextId: "c", status: status(TaskState.SUBMITTED, 100) }));
    expect(repo.tasksInProgress).toBe(1);
    let v = await repo.update(scope, "asks", 1, { kind: "status", status: status(TaskState.WORKING, 101) });
    expect(repo.tasksInProgress).toBe(1);
    v = await repo.update(scope, "asks", v, { kind: "status", status: status(TaskState.INPUT_REQUIRED, 101) });
    expect(repo.tasksInProgress).toBe(0);
    v = await repo.update(scope, "asks", v, { kind: "status", status: status(TaskState.WORKING, 102) });
    expect(repo.tasksInProgress).toBe(1);
    v = await repo.update(scope, "asks", v, { kind: "status", status: status(TaskState.COMPLETED, 103) });
    expect(repo.tasksInProgress).toBe(0);
    expect((await repo.get(scope, "asks"))?.version).toBe(v);
    expect((await repo.get(scope, "task-7"))?.task.status?.state).toBe(TaskState.COMPLETED);
    await repo.close();
  });

  it("A-22: a scope emptied by a purge and used again afterwards holds the new task, in lookups and lists", async () => {
    // The store keeps the last scope it looked up at hand; a purge that drops the scope must not leave it there.
    const repo = new MemoryTaskRepository();
    const status = (state: TaskState, ms: number) => create(TaskStatusSchema, { state, timestamp: at(ms) });
    repo.createNow(scope, create(TaskSchema, { id: "old", contextId: "c", status: status(TaskState.SUBMITTED, 1) }));
    repo.updateNow(scope, "old", 1, { kind: "status", status: status(TaskState.REJECTED, 2) });
    expect(await repo.purgeTerminalBefore((Date.UTC(2025, 0, 1) + 10) * 1000)).toBe(1);
    repo.createNow(scope, create(TaskSchema, { id: "new", contextId: "c", status: status(TaskState.SUBMITTED, 20) }));
    expect(repo.getNow(scope, "new")?.version).toBe(1);
    expect(repo.getNow(scope, "old")).toBeUndefined();
    const page = await repo.list(scope, { pageSize: 10, includeArtifacts: true });
    expect(page.tasks.map((t) => t.id)).toEqual(["new"]);
    expect(page.totalSize).toBe(1);
    expect(repo.tasksInProgress).toBe(1);
  });

  it("A-22: a task read right after it settles is its own scope's, when another scope settled a task with the same id in the same turn", () => {
    // Within one turn the store hands the just-settled object over instead of decoding it; the
    // hand-over is keyed by id, so it must check the scope. Synchronous calls keep it one turn.
    const repo = new MemoryTaskRepository();
    const other = { tenant: "", principal: "someone-else" };
    const status = (state: TaskState, ms: number) => create(TaskStatusSchema, { state, timestamp: at(ms) });
    for (const [who, state] of [
      [scope, TaskState.COMPLETED],
      [other, TaskState.FAILED],
    ] as const) {
      repo.createNow(who, create(TaskSchema, { id: "same", contextId: `c-${who.principal}`, status: status(TaskState.SUBMITTED, 1) }));
      repo.updateNow(who, "same", 1, { kind: "status", status: status(TaskState.WORKING, 2) });
      repo.updateNow(who, "same", 2, { kind: "status", status: status(state, 3) });
    }
    // The hand-over now holds the other scope's task (set last): reading ours first must not get it.
    const mine = repo.getNow(scope, "same");
    expect(mine?.task.status?.state).toBe(TaskState.COMPLETED);
    expect(mine?.task.contextId).toBe("c-anonymous");
    expect(mine?.version).toBe(3);
    expect(repo.getNow(other, "same")?.task.status?.state).toBe(TaskState.FAILED);
    expect(repo.getNow(other, "same")?.task.contextId).toBe("c-someone-else"); // handed over once, then decoded
    // A task removed in the same turn is gone, hand-over or not.
    repo.createNow(scope, create(TaskSchema, { id: "purged", contextId: "c", status: status(TaskState.SUBMITTED, 4) }));
    repo.updateNow(scope, "purged", 1, { kind: "status", status: status(TaskState.CANCELED, 5) });
    return repo.purgeTerminalBefore((Date.UTC(2025, 0, 1) + 6) * 1000).then((purged) => {
      expect(purged).toBe(3);
      expect(repo.getNow(scope, "purged")).toBeUndefined();
      expect(repo.getNow(scope, "same")).toBeUndefined();
    });
  });
});
