import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TaskRepository } from "../../src/lifecycle/ports/task-repository.js";
import { MemoryTaskRepository } from "../../src/storage/memory/memory-task-repository.js";
import { openPostgresStore, type PostgresStore } from "../../src/storage/postgres/postgres-store.js";
import { openSqliteTaskRepository } from "../../src/storage/sqlite/sqlite-task-repository.js";
import { createTestDatabase } from "../support/postgres/database.js";
import { describeEventLogContract } from "./event-log.contract.js";

/** The resume event log's contract on the three stores (PostgreSQL: the run's throwaway server). */

describeEventLogContract("memory", async (retentionMs) => {
  const repo = new MemoryTaskRepository({ eventLog: { retentionMs } });
  return { repo, cleanup: () => repo.close() };
});

describeEventLogContract("SQLite", async (retentionMs) => {
  const dir = mkdtempSync(join(tmpdir(), "a2a-event-log-"));
  const open = () => openSqliteTaskRepository({ file: join(dir, "tasks.sqlite"), eventLog: { retentionMs } });
  let current: TaskRepository = open();
  return {
    repo: current,
    async reopen() {
      await current.close(); // one process per file: the restarted one opens it after
      current = open();
      return current;
    },
    async cleanup() {
      await current.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

describeEventLogContract("PostgreSQL", async (retentionMs) => {
  const db = await createTestDatabase("eventlog");
  const open = () => openPostgresStore({ url: db.url, poolSize: 2, eventLog: { retentionMs } });
  const stores: PostgresStore[] = [await open()];
  return {
    repo: stores[0]!.repository,
    async reopen() {
      const other = await open(); // a second replica on the same database: no memory of the first's writes
      stores.push(other);
      return other.repository;
    },
    async cleanup() {
      for (const store of stores) await store.close();
      await db.drop();
    },
  };
});
