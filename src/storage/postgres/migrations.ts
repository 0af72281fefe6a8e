import type pg from "pg";
import { migrationOwnerPrefixInUse } from "../../auth/identity.js";
import { PostgresStoreError } from "./postgres-store-error.js";

/**
 * Schema migrations of the PostgreSQL store, a numbered list like SQLite's. The version lives in
 * `a2a_schema`; each step runs in one transaction with its version bump. Replicas starting at
 * once take turns through a session advisory lock, so a step runs once, by one replica, and the
 * others find it done. A database whose version is newer than this code is refused untouched.
 * Never edit a released step: add a new one.
 *
 * Design:
 * - `a2a_tasks`: one row per task with the columns ListTasks filters and sorts on; the task is a
 *   protobuf blob without history and artifacts (a status write rewrites a small blob; a page
 *   without artifacts never decodes them). Ids compare bytewise (COLLATE "C"), as the other
 *   stores and the page cursor do.
 * - `a2a_history`: a row per message, so history_length = N reads only the last N.
 * - One B-tree per ListTasks access path ending in (status_micros, id): a page is a keyset
 *   range scan read backwards (newest first). Partial indexes find active tasks (restart,
 *   leases) and old terminal tasks (retention).
 * - (v2) Replicas: `owner`/`lease_until` say which replica runs a task and until when its
 *   lease holds; `a2a_task_events` keeps each write's event, keyed by (task, version), so any
 *   replica can read a task's events after a version (the cursor), in order, with no gap.
 * - (v3) Push: `a2a_push_configs` (a task's webhook configs, removed with it), the delivery
 *   outbox `a2a_push_outbox` (a row per event and config, written by the task write itself, so
 *   in its transaction: A-29; removed with its config) and `a2a_push_lanes`, the claims that
 *   give each (task, config) to one replica at a time (see push-store.ts). `a2a_push_owe` adds
 *   a write's outbox rows: a function, because its queries then see the configs committed up to
 *   the moment the write holds the task's row lock, not those of the statement's start.
 * - (v4) The resume event log is `a2a_task_events` itself, kept for the resume window;
 *   a BRIN index on `written_at` lets every replica prune it without scanning the whole table.
 * - (v5) `a2a_tasks.push_configs`: whether the task has ever had a push config, set by a trigger
 *   on every config insert, so in the put's transaction, under the task's row lock, whichever
 *   replica (of whichever release) made it. A task write reads it from the row it updates (after
 *   waiting for that lock, so a put committed before the write holds the row is seen) and calls
 *   `a2a_push_owe` only when it is set: a task without configs, the usual one, owes nothing and
 *   pays for no function call. Never cleared (a deleted last config leaves only that call).
 * - (v6) Owners name their scheme (A-31, issue 33 #2): `a2a_tasks.principal` was the bare name, so
 *   an API key and a JWT subject of the same name shared tasks. Every owner but `anonymous` gets
 *   the prefix the configuration at migration time gives (src/auth/identity.ts legacyOwnerPrefix).
 * - (v7) `a2a_push_configs.protocol_version`: the A2A generation of the call that made the config (R-V03-70).
 *
 * State numbers are the proto's TaskState values, written out so a step keeps its meaning if the
 * generated code changes: SUBMITTED=1 WORKING=2 COMPLETED=3 FAILED=4 CANCELED=5 REJECTED=7.
 */
export interface Migration {
  readonly version: number;
  readonly description: string;
  readonly sql: string;
  /** Runs after `sql`, in its transaction, for a step that needs what only the configuration knows. */
  readonly apply?: (client: pg.ClientBase, context: MigrationContext) => Promise<unknown>;
}

/** What the server's configuration tells the migrations. */
export interface MigrationContext {
  /** Put before every owner stored without a scheme (anonymous aside): see legacyOwnerPrefix. */
  readonly legacyOwnerPrefix: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: "tasks and history with the ListTasks indexes; meta",
    sql: `
      CREATE TABLE a2a_tasks (
        id            text COLLATE "C" PRIMARY KEY,
        tenant        text NOT NULL,
        principal     text NOT NULL,
        context_id    text COLLATE "C" NOT NULL,
        state         smallint NOT NULL,
        status_micros bigint NOT NULL,
        version       integer NOT NULL,
        history_len   integer NOT NULL,
        task          bytea NOT NULL, -- lf.a2a.v1.Task without history and artifacts
        artifacts     bytea           -- lf.a2a.v1.Task holding only the artifacts; NULL = none
      );
      CREATE INDEX a2a_tasks_by_status  ON a2a_tasks (tenant, principal, status_micros, id);
      CREATE INDEX a2a_tasks_by_context ON a2a_tasks (tenant, principal, context_id, status_micros, id);
      CREATE INDEX a2a_tasks_by_state   ON a2a_tasks (tenant, principal, state, status_micros, id);
      CREATE INDEX a2a_tasks_terminal   ON a2a_tasks (status_micros) WHERE state IN (3, 4, 5, 7);
      CREATE TABLE a2a_history (
        task_id text COLLATE "C" NOT NULL REFERENCES a2a_tasks (id) ON DELETE CASCADE,
        seq     integer NOT NULL,
        message bytea NOT NULL, -- lf.a2a.v1.Message
        PRIMARY KEY (task_id, seq)
      );
      CREATE TABLE a2a_meta (
        key   text PRIMARY KEY,
        value text NOT NULL
      );
    `,
  },
  {
    version: 2,
    description: "replicas: run leases and the task event table",
    sql: `
      ALTER TABLE a2a_tasks ADD COLUMN owner text, ADD COLUMN lease_until timestamptz;
      CREATE INDEX a2a_tasks_active ON a2a_tasks (lease_until) WHERE state IN (1, 2);
      CREATE TABLE a2a_task_events (
        task_id    text COLLATE "C" NOT NULL REFERENCES a2a_tasks (id) ON DELETE CASCADE,
        version    integer NOT NULL,
        kind       smallint NOT NULL, -- 1 created (Task), 2 status, 3 artifact, 4 history (see event-rows.ts)
        body       bytea NOT NULL,
        written_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (task_id, version)
      );
    `,
  },
  {
    version: 3,
    description: "push configs, their delivery outbox and the lane claims of replicas",
    sql: `
      CREATE TABLE a2a_push_configs (
        task_id text COLLATE "C" NOT NULL REFERENCES a2a_tasks (id) ON DELETE CASCADE,
        id      text COLLATE "C" NOT NULL,
        config  bytea NOT NULL, -- lf.a2a.v1.TaskPushNotificationConfig
        PRIMARY KEY (task_id, id)
      );
      CREATE TABLE a2a_push_outbox (
        seq           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        task_id       text COLLATE "C" NOT NULL,
        config_id     text COLLATE "C" NOT NULL,
        created_ms    bigint NOT NULL,
        kind          smallint NOT NULL, -- as in a2a_task_events: 1 the task (a snapshot), 2 status, 3 artifact
        body          bytea NOT NULL,
        trace_context text,              -- W3C traceparent of the write, when it was traced
        FOREIGN KEY (task_id, config_id) REFERENCES a2a_push_configs (task_id, id) ON DELETE CASCADE
      );
      CREATE INDEX a2a_push_outbox_lane ON a2a_push_outbox (task_id, config_id, seq);
      CREATE TABLE a2a_push_lanes (
        task_id     text COLLATE "C" NOT NULL REFERENCES a2a_tasks (id) ON DELETE CASCADE,
        config_id   text COLLATE "C" NOT NULL,
        owner       text NOT NULL,
        lease_until timestamptz NOT NULL,
        PRIMARY KEY (task_id, config_id)
      );
      CREATE INDEX a2a_push_lanes_owner ON a2a_push_lanes (owner);
      -- One outbox row per config of the task, then a wake-up for every replica; returns how many.
      -- Called by a task write once it holds the task's row (VOLATILE: fresh snapshot per query).
      CREATE FUNCTION a2a_push_owe(p_task text, p_kind smallint, p_body bytea, p_writer text, p_trace text) RETURNS integer
      LANGUAGE plpgsql VOLATILE AS $$
      DECLARE
        owed integer;
      BEGIN
        INSERT INTO a2a_push_outbox (task_id, config_id, created_ms, kind, body, trace_context)
          SELECT p_task, c.id, (extract(epoch FROM clock_timestamp()) * 1000)::bigint, p_kind, p_body, p_trace
          FROM a2a_push_configs c WHERE c.task_id = p_task ORDER BY c.id;
        GET DIAGNOSTICS owed = ROW_COUNT;
        IF owed > 0 THEN
          PERFORM pg_notify('a2a_task_events', 'push ' || owed || ' ' || p_writer);
        END IF;
        RETURN owed;
      END
      $$;
    `,
  },
  {
    version: 4,
    description: "the resume event log: prune the task event table by age",
    // BRIN, not a B-tree: rows arrive in time order, so a block range summary finds the old ones,
    // and it costs an insert next to nothing (a B-tree would add an entry to every write).
    sql: "CREATE INDEX a2a_task_events_by_time ON a2a_task_events USING brin (written_at);",
  },
  {
    version: 5,
    description: "the push_configs flag on tasks, so a write of a task without configs skips a2a_push_owe",
    // ADD COLUMN with a constant default rewrites nothing. Not indexed, so setting it is a HOT update.
    sql: `
      ALTER TABLE a2a_tasks ADD COLUMN push_configs boolean NOT NULL DEFAULT false;
      UPDATE a2a_tasks t SET push_configs = true WHERE EXISTS (SELECT 1 FROM a2a_push_configs c WHERE c.task_id = t.id);
      CREATE FUNCTION a2a_push_configured() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE a2a_tasks SET push_configs = true WHERE id = NEW.task_id AND NOT push_configs;
        RETURN NULL;
      END
      $$;
      CREATE TRIGGER a2a_push_configured AFTER INSERT ON a2a_push_configs FOR EACH ROW EXECUTE FUNCTION a2a_push_configured();
    `,
  },
  {
    version: 6,
    description: "owners name their scheme: the principal of every task but anonymous ones gets the configured scheme's prefix",
    sql: "SELECT 1;",
    // One statement: no unique index holds the principal, so no row can collide halfway.
    apply: (client, { legacyOwnerPrefix }) =>
      client.query({ text: "UPDATE a2a_tasks SET principal = $1 || principal WHERE principal <> 'anonymous'", values: [legacyOwnerPrefix] }),
  },
  {
    version: 7,
    description: "a push config remembers the A2A generation of the call that made it (R-V03-70): its webhooks' shape",
    // A constant default rewrites nothing; configs made before were made by 1.0 calls, the only ones served then.
    sql: "ALTER TABLE a2a_push_configs ADD COLUMN protocol_version text NOT NULL DEFAULT '1.0';",
  },
];

/** The schema version this code writes and understands. */
export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

/** Key of the session advisory lock that migrations run under ("A2AT"). */
export const MIGRATION_LOCK_KEY = 0x41324154;

/**
 * Brings the schema to `target` (default: the newest), one replica at a time. Refuses, before
 * writing anything, a schema newer than this code. Returns the version found and the one left.
 */
export async function migrate(
  client: pg.ClientBase,
  target = SCHEMA_VERSION,
  context: MigrationContext = { legacyOwnerPrefix: migrationOwnerPrefixInUse() },
): Promise<{ from: number; to: number }> {
  await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK_KEY]);
  try {
    await client.query("CREATE TABLE IF NOT EXISTS a2a_schema (version integer NOT NULL)");
    const from = await schemaVersion(client);
    if (from > SCHEMA_VERSION) {
      throw new PostgresStoreError(
        `the database's task-store schema is version ${from}, newer than this server understands (version ${SCHEMA_VERSION}); ` +
          "run a newer server, or restore a backup; nothing was changed",
      );
    }
    let current = from;
    for (const step of MIGRATIONS) {
      if (step.version <= current || step.version > target) continue;
      await client.query("BEGIN");
      try {
        await client.query(step.sql);
        await step.apply?.(client, context);
        await client.query("DELETE FROM a2a_schema");
        await client.query("INSERT INTO a2a_schema (version) VALUES ($1)", [step.version]);
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK");
        throw new PostgresStoreError(`schema step ${step.version} (${step.description}) failed: ${(error as Error).message}`, { cause: error });
      }
      current = step.version;
    }
    return { from, to: current };
  } finally {
    await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK_KEY]);
  }
}

async function schemaVersion(client: pg.ClientBase): Promise<number> {
  const { rows } = await client.query<{ version: number }>("SELECT version FROM a2a_schema");
  return rows[0]?.version ?? 0;
}
