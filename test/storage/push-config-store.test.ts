import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryTaskRepository } from "../../src/storage/memory/memory-task-repository.js";
import { openSqliteTaskRepository } from "../../src/storage/sqlite/sqlite-task-repository.js";
import { describePushStoreContract } from "./push-config-store.contract.js";

describePushStoreContract("memory store", async () => {
  const repo = new MemoryTaskRepository();
  return { repo, configs: repo.push, outbox: repo.push, cleanup: () => repo.close() };
});

describePushStoreContract("SQLite store (file)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "a2a-push-store-"));
  const repo = openSqliteTaskRepository({ file: join(dir, "tasks.sqlite") });
  return {
    repo,
    configs: repo.push,
    outbox: repo.push,
    cleanup: async () => {
      await repo.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
