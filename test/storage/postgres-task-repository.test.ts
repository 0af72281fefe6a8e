import { openPostgresStore, type PostgresStore } from "../../src/storage/postgres/postgres-store.js";
import { createTestDatabase, type TestDatabase } from "../support/postgres/database.js";
import { describeTaskRepositoryContract } from "./task-repository.contract.js";

/**
 * The shared repository contract on PostgreSQL (the run's throwaway server, a database for this
 * suite, emptied before each test).
 */
let db: TestDatabase;
let store: PostgresStore;

beforeAll(async () => {
  db = await createTestDatabase("contract");
  store = await openPostgresStore({ url: db.url, poolSize: 4 });
});
afterAll(async () => {
  await store.close();
  await db.drop();
});

describeTaskRepositoryContract("PostgresTaskRepository", async () => {
  await store.pool.query("TRUNCATE a2a_tasks CASCADE"); // with every table that refers to it
  const { repository } = store;
  return { repo: repository, cleanup: () => repository.close() };
});
