/**
 * A-31, issue 33 finding 2: owners stored before they named their scheme keep their tasks through
 * the schema migration, on SQLite and on PostgreSQL. Each database is made by the old schema
 * (SQLite 7, PostgreSQL 5) with its rows written by hand, as the old server left them: bare owner
 * names. Then the real server starts on it:
 * - with one scheme configured (api-key), every bare owner but `anonymous` becomes that scheme's
 *   (`alice` → `apikey:alice`): the key alice finds its task, and anonymous tasks stay anonymous;
 * - with several schemes (jwt,api-key) nobody can tell which scheme made a row, so the rows get
 *   `legacy:` and no caller sees them (a wrong guess would hand them to another principal).
 * A bare name equal to another's prefixed form (`apikey:bob` beside `bob`) does not collide.
 */
import * as grpc from "@grpc/grpc-js";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { TaskState } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { STORE_FILE_NAME } from "../../src/app.js";
import { apiKeyLine, newApiKey, useMigrationOwnerPrefix } from "../../src/auth/index.js";
import { migrate as migratePostgres } from "../../src/storage/postgres/migrations.js";
import { migrate as migrateSqlite } from "../../src/storage/sqlite/migrations.js";
import { encodeTaskCore } from "../../src/storage/sqlite/task-row-codec.js";
import { expectA2AError, rpc } from "../e2e/e2e-helpers.js";
import { startA2AServer } from "../support/a2a-server.js";
import { createTestDatabase, type TestDatabase } from "../support/postgres/database.js";
import { Clock, newTask } from "../support/tasks.js";
import { makeIssuer, withAuth, type TestIssuer } from "./auth-support.js";

const OLD_OWNERS = ["alice", "anonymous", "bob", "apikey:bob"] as const;
type OldOwner = (typeof OLD_OWNERS)[number];

/** A database of the old schema holding one COMPLETED task per owner; the stored owners, read back. */
interface OldDatabase {
  readonly env: Record<string, string>;
  readonly taskIds: Record<OldOwner, string>;
  owners(): Promise<string[]>;
  drop(): Promise<void>;
}

const clock = new Clock();
function oldTasks(): Array<{ owner: OldOwner; id: string; contextId: string; core: Uint8Array; micros: number }> {
  return OLD_OWNERS.map((owner) => {
    const micros = clock.next();
    const task = newTask({ micros });
    task.status!.state = TaskState.COMPLETED;
    return { owner, id: task.id, contextId: task.contextId, core: encodeTaskCore(task), micros };
  });
}

async function oldSqlite(root: string): Promise<OldDatabase> {
  const data = join(root, `data-${clock.next()}`);
  mkdirSync(data);
  const file = join(data, STORE_FILE_NAME);
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  migrateSqlite(db, file, 7);
  const taskIds = {} as Record<OldOwner, string>;
  for (const t of oldTasks()) {
    const scope = db.prepare("INSERT INTO scopes (tenant, principal) VALUES ('', ?)").run(t.owner).lastInsertRowid;
    db.prepare("INSERT INTO tasks (id, scope_id, context_id, state, status_micros, version, history_len, task) VALUES (?, ?, ?, 3, ?, 1, 0, ?)").run(
      t.id,
      scope,
      t.contextId,
      t.micros,
      t.core,
    );
    taskIds[t.owner] = t.id;
  }
  db.close();
  return {
    env: { A2A_STORE: "sqlite", A2A_DATA_DIR: data },
    taskIds,
    owners: async () => {
      const read = new Database(file, { readonly: true });
      try {
        return (read.prepare("SELECT principal FROM scopes ORDER BY scope_id").pluck().all() as string[]).sort();
      } finally {
        read.close();
      }
    },
    drop: async () => rmSync(data, { recursive: true, force: true }),
  };
}

async function oldPostgres(): Promise<OldDatabase> {
  const database: TestDatabase = await createTestDatabase("owners");
  const query = async <T extends pg.QueryResultRow>(work: (client: pg.Client) => Promise<pg.QueryResult<T>>) => {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      return (await work(client)).rows;
    } finally {
      await client.end();
    }
  };
  const taskIds = {} as Record<OldOwner, string>;
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    await migratePostgres(client, 5);
    for (const t of oldTasks()) {
      await client.query(
        "INSERT INTO a2a_tasks (id, tenant, principal, context_id, state, status_micros, version, history_len, task) VALUES ($1, '', $2, $3, 3, $4, 1, 0, $5)",
        [t.id, t.owner, t.contextId, t.micros, Buffer.from(t.core)],
      );
      taskIds[t.owner] = t.id;
    }
  } finally {
    await client.end();
  }
  return {
    env: { A2A_STORE: "postgres", A2A_DATABASE_URL: database.url, A2A_DATABASE_POOL_SIZE: "2" },
    taskIds,
    owners: async () => (await query<{ principal: string }>((c) => c.query("SELECT principal FROM a2a_tasks"))).map((r) => r.principal).sort(),
    drop: () => database.drop(),
  };
}

const keys = { alice: newApiKey(), anonymous: newApiKey(), bob: newApiKey() };
let dir: string;
let keyFile: string;
let issuer: TestIssuer;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "a2a-owner-mig-"));
  keyFile = join(dir, "keys");
  writeFileSync(
    keyFile,
    `${Object.entries(keys)
      .map(([principal, key]) => apiKeyLine(key, { principal, tenants: undefined, scopes: [] }))
      .join("\n")}\n`,
  );
  issuer = await makeIssuer("ES256");
});
afterAll(() => {
  useMigrationOwnerPrefix(""); // the process default, for whatever runs next in this worker
  issuer.remove();
  rmSync(dir, { recursive: true, force: true });
});

const as = (who: keyof typeof keys) => withAuth({ "x-api-key": keys[who] });

describe.each([
  ["SQLite", () => oldSqlite(dir)],
  ["PostgreSQL", oldPostgres],
])("A-31: owners of a %s database made by the old schema", (_store, makeOld) => {
  test("A-31: with one scheme configured, bare owners become that scheme's and keep their tasks; anonymous stays anonymous", async () => {
    const old = await makeOld();
    try {
      const s = await startA2AServer({ env: { ...old.env, A2A_AUTH: "api-key", A2A_API_KEYS_FILE: keyFile } });
      try {
        expect(await old.owners()).toEqual(["anonymous", "apikey:alice", "apikey:apikey:bob", "apikey:bob"]);
        expect((await rpc(s).get({ id: old.taskIds.alice }, as("alice"))).response?.id).toBe(old.taskIds.alice);
        expect((await rpc(s).get({ id: old.taskIds.bob }, as("bob"))).response?.id).toBe(old.taskIds.bob);
        // The key named anonymous is apikey:anonymous, not the owner of the anonymous callers' tasks.
        expectA2AError((await rpc(s).get({ id: old.taskIds.anonymous }, as("anonymous"))).error, grpc.status.NOT_FOUND, "TASK_NOT_FOUND");
        // "apikey:bob" was some other scheme's name; bob's key does not get its task.
        expectA2AError((await rpc(s).get({ id: old.taskIds["apikey:bob"] }, as("bob"))).error, grpc.status.NOT_FOUND, "TASK_NOT_FOUND");
      } finally {
        await s.close();
      }
      const anonymous = await startA2AServer({ env: old.env });
      try {
        expect((await rpc(anonymous).get({ id: old.taskIds.anonymous })).response?.id).toBe(old.taskIds.anonymous);
      } finally {
        await anonymous.close();
      }
    } finally {
      await old.drop();
    }
  });

  test("A-31: with several schemes configured, bare owners are marked legacy: and nobody gets their tasks", async () => {
    const old = await makeOld();
    try {
      const s = await startA2AServer({ env: { ...old.env, ...issuer.env({ A2A_AUTH: "jwt,api-key", A2A_API_KEYS_FILE: keyFile }) } });
      try {
        expect(await old.owners()).toEqual(["anonymous", "legacy:alice", "legacy:apikey:bob", "legacy:bob"]);
        expectA2AError((await rpc(s).get({ id: old.taskIds.alice }, as("alice"))).error, grpc.status.NOT_FOUND, "TASK_NOT_FOUND");
        const jwtAlice = withAuth({ authorization: `Bearer ${await issuer.token({ sub: "alice" })}` });
        expectA2AError((await rpc(s).get({ id: old.taskIds.alice }, jwtAlice)).error, grpc.status.NOT_FOUND, "TASK_NOT_FOUND");
      } finally {
        await s.close();
      }
    } finally {
      await old.drop();
    }
  });
});
