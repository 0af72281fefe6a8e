import { MemoryTaskRepository } from "../../src/storage/memory/memory-task-repository.js";
import { describeTaskRepositoryContract } from "./task-repository.contract.js";

describeTaskRepositoryContract("MemoryTaskRepository", async () => {
  const repo = new MemoryTaskRepository();
  return { repo, cleanup: () => repo.close() };
});
