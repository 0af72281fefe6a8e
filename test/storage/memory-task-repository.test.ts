import { describe, expect, it } from "@jest/globals";
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { TaskSchema, TaskState, TaskStatusSchema } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { MemoryTaskRepository } from "../../src/storage/memory/memory-task-repository.js";
import { describeTaskRepositoryContract } from "./task-repository.contract.js";

describeTaskRepositoryContract("MemoryTaskRepository", async () => {
  const repo = new MemoryTaskRepository();
  return { repo, cleanup: () => repo.close() };
});

describe("MemoryTaskRepository: scopes", () => {
  const scope = { tenant: "", principal: "anonymous" };
  const at = (ms: number) => timestampFromMs(Date.UTC(2025, 0, 1) + ms);
  const status = (state: TaskState, ms: number) => create(TaskStatusSchema, { state, timestamp: at(ms) });

  it("A-22: a scope emptied by a purge and used again afterwards holds the new task, in lookups and lists", async () => {
    const repo = new MemoryTaskRepository();
    await repo.create(scope, create(TaskSchema, { id: "old", contextId: "c", status: status(TaskState.SUBMITTED, 1) }));
    await repo.update(scope, "old", 1, { kind: "status", status: status(TaskState.REJECTED, 2) });
    expect(await repo.purgeTerminalBefore((Date.UTC(2025, 0, 1) + 10) * 1000)).toBe(1);
    await repo.create(scope, create(TaskSchema, { id: "new", contextId: "c", status: status(TaskState.SUBMITTED, 20) }));
    expect((await repo.get(scope, "new"))?.version).toBe(1);
    expect(await repo.get(scope, "old")).toBeUndefined();
    const page = await repo.list(scope, { pageSize: 10, includeArtifacts: true });
    expect(page.tasks.map((t) => t.id)).toEqual(["new"]);
    expect(page.totalSize).toBe(1);
  });

  it("A-22: the same task id in two scopes is two tasks, each read, written and purged as its own", async () => {
    const repo = new MemoryTaskRepository();
    const other = { tenant: "", principal: "someone-else" };
    for (const [who, state] of [
      [scope, TaskState.COMPLETED],
      [other, TaskState.FAILED],
    ] as const) {
      await repo.create(who, create(TaskSchema, { id: "same", contextId: `c-${who.principal}`, status: status(TaskState.SUBMITTED, 1) }));
      await repo.update(who, "same", 1, { kind: "status", status: status(TaskState.WORKING, 2) });
      await repo.update(who, "same", 2, { kind: "status", status: status(state, 3) });
    }
    const mine = await repo.get(scope, "same");
    expect(mine?.task.status?.state).toBe(TaskState.COMPLETED);
    expect(mine?.task.contextId).toBe("c-anonymous");
    expect(mine?.version).toBe(3);
    expect((await repo.get(other, "same"))?.task.contextId).toBe("c-someone-else");
    expect(await repo.purgeTerminalBefore((Date.UTC(2025, 0, 1) + 6) * 1000)).toBe(2);
    expect(await repo.get(scope, "same")).toBeUndefined();
    expect(await repo.get(other, "same")).toBeUndefined();
  });
});
