import pg from "pg";
import { MIGRATIONS, SCHEMA_VERSION, migrate } from "../../src/storage/postgres/migrations.js";
import { openPostgresStore } from "../../src/storage/postgres/postgres-store.js";
import { PostgresStoreError } from "../../src/storage/postgres/postgres-store-error.js";
import { createTestDatabase, type TestDatabase } from "../support/postgres/database.js";
import { newTask, scopeOf } from "../support/tasks.js";

/** Versioned migrations of the PostgreSQL store: upgrade at start-up, one replica at a time; newer refused. */
let db: TestDatabase;
beforeEach(async () => {
  db = await createTestDatabase("migrations");
});
afterEach(async () => {
  await db.drop();
});

async function withClient<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

const alice = scopeOf("t1", "alice");

describe("PostgreSQL schema migrations", () => {
  it("creates the newest schema on an empty database", async () => {
    const store = await openPostgresStore({ url: db.url, poolSize: 1 });
    try {
      expect(store.schema).toEqual({ from: 0, to: SCHEMA_VERSION });
      expect(SCHEMA_VERSION).toBe(MIGRATIONS.length);
      const { rows } = await store.pool.query("SELECT version FROM a2a_schema");
      expect(rows).toEqual([{ version: SCHEMA_VERSION }]);
    } finally {
      await store.close();
    }
  });

  it("upgrades an older schema at start-up and keeps its tasks", async () => {
    await withClient(async (client) => {
      expect(await migrate(client, 1)).toEqual({ from: 0, to: 1 });
      const task = newTask({ micros: 1_700_000_000_000_000, text: "from v1" });
      await client.query(
        "INSERT INTO a2a_tasks (id, tenant, principal, context_id, state, status_micros, version, history_len, task) VALUES ($1, 't1', 'alice', $2, 2, 1, 3, 0, $3)",
        [task.id, task.contextId, Buffer.from([0x0a, task.id.length, ...Buffer.from(task.id)])],
      );
    });
    const store = await openPostgresStore({ url: db.url, poolSize: 1 });
    try {
      expect(store.schema).toEqual({ from: 1, to: SCHEMA_VERSION });
      // A v1 task has no owner: the first replica's restart pass takes it over.
      const active = await store.repository.listActive();
      expect(active).toHaveLength(1);
      expect(active[0]!.task.version).toBe(3);
      expect(active[0]!.scope).toEqual(alice);
    } finally {
      await store.close();
    }
  });

  it("replicas starting at once take turns: each step runs once, every replica opens", async () => {
    const stores = await Promise.all([1, 2, 3, 4].map(() => openPostgresStore({ url: db.url, poolSize: 1 })));
    try {
      const froms = stores.map((s) => s.schema.from).sort();
      expect(froms).toEqual([0, SCHEMA_VERSION, SCHEMA_VERSION, SCHEMA_VERSION]);
      for (const s of stores) expect(s.schema.to).toBe(SCHEMA_VERSION);
      const { rows } = await stores[0]!.pool.query("SELECT version FROM a2a_schema");
      expect(rows).toEqual([{ version: SCHEMA_VERSION }]);
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });

  it("refuses a newer schema, naming both versions, and changes nothing", async () => {
    await withClient((client) => migrate(client));
    await withClient((client) => client.query("UPDATE a2a_schema SET version = 99"));
    const opening = openPostgresStore({ url: db.url, poolSize: 1 });
    await expect(opening).rejects.toBeInstanceOf(PostgresStoreError);
    await expect(opening).rejects.toThrow(`schema is version 99, newer than this server understands (version ${SCHEMA_VERSION})`);
    const { rows } = await withClient((client) => client.query("SELECT version FROM a2a_schema"));
    expect(rows).toEqual([{ version: 99 }]);
  });

  it("a task store written at v1 can be read through the repository after the upgrade", async () => {
    await withClient((client) => migrate(client, 1));
    const store = await openPostgresStore({ url: db.url, poolSize: 1 });
    try {
      const task = newTask({ micros: 1_700_000_000_000_000, text: "q" });
      await store.repository.create(alice, task);
      expect((await store.repository.get(alice, task.id))?.task.history).toHaveLength(1);
    } finally {
      await store.close();
    }
  });
});
