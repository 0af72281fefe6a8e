import { MemoryTaskRepository } from "../../src/storage/memory/memory-task-repository.js";
import { openSqliteTaskRepository } from "../../src/storage/sqlite/sqlite-task-repository.js";
import { asyncOnly } from "../support/async-only.js";
import { describeTaskRepositoryContract } from "./task-repository.contract.js";

/*
 * The async methods are the TaskRepository contract every store keeps (src/lifecycle/task-repository.ts);
 * the synchronous `immediate` face is an optimisation a store may offer. So the contract suite also
 * runs on both stores seen through their async methods only, each answer a turn later, as a
 * store that offers nothing else (PostgreSQL) would be seen.
 */
describeTaskRepositoryContract("MemoryTaskRepository, async methods only", async () => {
  const memory = new MemoryTaskRepository();
  const repo = asyncOnly(memory);
  expect(repo.immediate).toBeUndefined();
  return { repo, cleanup: () => repo.close() };
});

describeTaskRepositoryContract("SqliteTaskRepository (:memory:), async methods only", async () => {
  const repo = asyncOnly(openSqliteTaskRepository({ file: ":memory:" }));
  return { repo, cleanup: () => repo.close() };
});
