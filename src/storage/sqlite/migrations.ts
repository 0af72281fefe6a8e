import type { Database } from "better-sqlite3";
import { migrationOwnerPrefixInUse } from "../../auth/identity.js";
import { SqliteStoreError } from "./sqlite-store-error.js";

/**
 * Schema migrations, versioned with `PRAGMA user_version`. Each step runs once, in order,
 * inside the same transaction as the version bump, so a crash mid-upgrade leaves the
 * previous version intact. Never edit a released step: add a new one.
 *
 * Design (for 1M+ tasks, nothing held in memory, ListTasks cost independent of the count):
 * - `tasks` keeps one row per task with the columns ListTasks filters and sorts on; the task
 *   itself is a protobuf blob WITHOUT history and artifacts, so a status write rewrites a
 *   small blob and a list page that leaves artifacts out never decodes them.
 * - `history` holds one row per message, so `history_length = N` reads only the last N rows
 *   and appending a message never rewrites the earlier ones.
 * - Scopes (tenant + principal) are interned in `scopes`, so every index entry carries an
 *   integer instead of two strings.
 * - One index per ListTasks access path, each ending in (status_micros, id) so that a page is
 *   a keyset range scan in ListTasks order (newest first = the index read backwards):
 *   no filter, context filter, state filter. Context + state uses the context index.
 * - Partial indexes find the active tasks (restart settlement) and old terminal tasks
 *   (retention) without scanning everything.
 * - (v2) Per-scope and per-context counters, kept by triggers in the same transaction as the
 *   write, make `total_size` a lookup instead of a COUNT over up to every task.
 * - (v3) Push configs per task, and the outbox of deliveries still owed (ruling A-29): its rows
 *   are inserted in the group commit that holds their event; `seq` (AUTOINCREMENT: never
 *   reused) is the commit order, and the lane index gives a (task, config)'s next delivery.
 *   Both go with their task (ON DELETE CASCADE: retention), and a config's pending deliveries
 *   with the config (trigger).
 * - (v4) `task_events`: each change under its version, for resuming streams (A-33), trimmed
 *   by age.
 * - (v5) `push_outbox.trace_context`: the W3C traceparent of the write a row carries, so a
 *   webhook request continues its trace (NULL when tracing was off).
 * - (v6) A `task_events` row may hold all the events one commit made to its task (versions
 *   first_version..version): one insert per task and commit instead of one per change. And
 *   `artifact_tail` keeps artifact appends apart from the artifacts blob until rewriting it
 *   is worth it, and `task_artifacts` holds a blob rewritten after the insert apart from the
 *   row, so a chunk written per commit costs the chunk.
 * - (v7) A batch `task_events` row of appends may point at its commit's `artifact_tail` row
 *   instead of holding the same bytes again (flags 1, body NULL): a burst writes its chunks once.
 * - (v8) Owners name their scheme (A-31, issue 33 #2): `scopes.principal` was the bare name, so
 *   an API key and a JWT subject of the same name shared tasks. Every owner but `anonymous` gets
 *   the prefix the configuration at migration time gives (src/auth/identity.ts legacyOwnerPrefix).
 * - (v9) A push config keeps the A2A generation of the call that made it (R-V03-70).
 *
 * State numbers are the proto's TaskState values, written out because a migration must not
 * change meaning if the generated code does: SUBMITTED=1 WORKING=2 COMPLETED=3 FAILED=4
 * CANCELED=5 REJECTED=7.
 */
export interface Migration {
  readonly version: number;
  readonly description: string;
  readonly sql: string;
  /** Runs after `sql`, in its transaction, for a step that needs what only the configuration knows. */
  readonly apply?: (db: Database, context: MigrationContext) => void;
}

/** What the server's configuration tells the migrations. */
export interface MigrationContext {
  /** Put before every owner stored without a scheme (anonymous aside): see legacyOwnerPrefix. */
  readonly legacyOwnerPrefix: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: "tasks, history and scopes with the ListTasks indexes",
    sql: `
      CREATE TABLE scopes (
        scope_id  INTEGER PRIMARY KEY,
        tenant    TEXT NOT NULL,
        principal TEXT NOT NULL,
        UNIQUE (tenant, principal)
      );
      CREATE TABLE tasks (
        pk            INTEGER PRIMARY KEY,
        id            TEXT NOT NULL UNIQUE,
        scope_id      INTEGER NOT NULL REFERENCES scopes (scope_id),
        context_id    TEXT NOT NULL,
        state         INTEGER NOT NULL,
        status_micros INTEGER NOT NULL,
        version       INTEGER NOT NULL,
        history_len   INTEGER NOT NULL,
        task          BLOB NOT NULL, -- lf.a2a.v1.Task without history and artifacts
        artifacts     BLOB           -- lf.a2a.v1.Task holding only the artifacts; NULL = none
      );
      CREATE INDEX tasks_by_status  ON tasks (scope_id, status_micros, id);
      CREATE INDEX tasks_by_context ON tasks (scope_id, context_id, status_micros, id);
      CREATE INDEX tasks_by_state   ON tasks (scope_id, state, status_micros, id);
      CREATE INDEX tasks_active     ON tasks (state) WHERE state IN (1, 2);
      CREATE INDEX tasks_terminal   ON tasks (status_micros) WHERE state IN (3, 4, 5, 7);
      -- A rowid table: messages can be kilobytes, too large for WITHOUT ROWID to pay off.
      CREATE TABLE history (
        task_pk INTEGER NOT NULL REFERENCES tasks (pk) ON DELETE CASCADE,
        seq     INTEGER NOT NULL,
        message BLOB NOT NULL, -- lf.a2a.v1.Message
        UNIQUE (task_pk, seq)
      );
    `,
  },
  {
    version: 2,
    description: "counters for ListTasks total_size, and a key/value meta table",
    sql: `
      CREATE TABLE meta (
        key   TEXT PRIMARY KEY,
        value TEXT NOT NULL
      );
      CREATE TABLE scope_counts (
        scope_id INTEGER NOT NULL,
        state    INTEGER NOT NULL,
        n        INTEGER NOT NULL,
        PRIMARY KEY (scope_id, state)
      ) WITHOUT ROWID;
      CREATE TABLE context_counts (
        scope_id   INTEGER NOT NULL,
        context_id TEXT NOT NULL,
        state      INTEGER NOT NULL,
        n          INTEGER NOT NULL,
        PRIMARY KEY (scope_id, context_id, state)
      ) WITHOUT ROWID;
      INSERT INTO scope_counts SELECT scope_id, state, count(*) FROM tasks GROUP BY scope_id, state;
      INSERT INTO context_counts SELECT scope_id, context_id, state, count(*) FROM tasks GROUP BY scope_id, context_id, state;
      CREATE TRIGGER tasks_count_insert AFTER INSERT ON tasks BEGIN
        INSERT INTO scope_counts VALUES (new.scope_id, new.state, 1)
          ON CONFLICT DO UPDATE SET n = n + 1;
        INSERT INTO context_counts VALUES (new.scope_id, new.context_id, new.state, 1)
          ON CONFLICT DO UPDATE SET n = n + 1;
      END;
      CREATE TRIGGER tasks_count_delete AFTER DELETE ON tasks BEGIN
        UPDATE scope_counts SET n = n - 1 WHERE scope_id = old.scope_id AND state = old.state;
        UPDATE context_counts SET n = n - 1
          WHERE scope_id = old.scope_id AND context_id = old.context_id AND state = old.state;
        DELETE FROM context_counts
          WHERE scope_id = old.scope_id AND context_id = old.context_id AND state = old.state AND n <= 0;
      END;
      CREATE TRIGGER tasks_count_state AFTER UPDATE OF state ON tasks WHEN old.state <> new.state BEGIN
        UPDATE scope_counts SET n = n - 1 WHERE scope_id = old.scope_id AND state = old.state;
        INSERT INTO scope_counts VALUES (new.scope_id, new.state, 1)
          ON CONFLICT DO UPDATE SET n = n + 1;
        UPDATE context_counts SET n = n - 1
          WHERE scope_id = old.scope_id AND context_id = old.context_id AND state = old.state;
        DELETE FROM context_counts
          WHERE scope_id = old.scope_id AND context_id = old.context_id AND state = old.state AND n <= 0;
        INSERT INTO context_counts VALUES (new.scope_id, new.context_id, new.state, 1)
          ON CONFLICT DO UPDATE SET n = n + 1;
      END;
    `,
  },
  {
    version: 3,
    description: "push notification configs and the outbox of pending deliveries",
    sql: `
      CREATE TABLE push_configs (
        task_pk INTEGER NOT NULL REFERENCES tasks (pk) ON DELETE CASCADE,
        id      TEXT NOT NULL,
        config  BLOB NOT NULL, -- lf.a2a.v1.TaskPushNotificationConfig
        PRIMARY KEY (task_pk, id)
      ) WITHOUT ROWID;
      CREATE TABLE push_outbox (
        seq        INTEGER PRIMARY KEY AUTOINCREMENT,
        task_pk    INTEGER NOT NULL REFERENCES tasks (pk) ON DELETE CASCADE,
        config_id  TEXT NOT NULL,
        created_ms INTEGER NOT NULL,
        event      BLOB NOT NULL -- lf.a2a.v1.StreamResponse
      );
      CREATE INDEX push_outbox_lane ON push_outbox (task_pk, config_id, seq);
      CREATE TRIGGER push_configs_delete AFTER DELETE ON push_configs BEGIN
        DELETE FROM push_outbox WHERE task_pk = old.task_pk AND config_id = old.id;
      END;
    `,
  },
  {
    version: 4,
    description: "the event log for resuming streams (A-33)",
    // One row per accepted change after "created", written in the commit of the change itself.
    // kind: 1 status, 2 artifact, 3 history (no body: it has no stream event, but keeps the
    // versions gapless so a read can tell a trimmed log from a complete one). flags: bit 0
    // append, bit 1 last_chunk. body: a Task holding only the status or the one artifact.
    sql: `
      CREATE TABLE task_events (
        task_pk   INTEGER NOT NULL REFERENCES tasks (pk) ON DELETE CASCADE,
        version   INTEGER NOT NULL,
        at_micros INTEGER NOT NULL,
        kind      INTEGER NOT NULL,
        flags     INTEGER NOT NULL,
        body      BLOB,
        PRIMARY KEY (task_pk, version)
      );
      CREATE INDEX task_events_by_time ON task_events (at_micros);
    `,
  },
  {
    version: 5,
    description: "the trace context of the write an outbox row carries (webhook traceparent, #16)",
    // A W3C traceparent, NULL when tracing was off: adding a nullable column rewrites no row.
    sql: `
      ALTER TABLE push_outbox ADD COLUMN trace_context TEXT;
    `,
  },
  {
    version: 6,
    description: "task_events rows holding a commit's events of a task together; artifact appends kept apart from the artifacts blob",
    // NULL: the row holds the one event of `version` (as every row of v4). Otherwise kind is 4
    // (batch) and the body frames the events of first_version..version (event-row-codec.ts).
    //
    // artifact_tail: the artifact changes made to a task since its `artifacts` blob was last
    // written, one row per commit (a BATCH body of artifact events), applied in version order
    // over the blob when it is read; `tail_bytes` is their size, so the writer can tell when
    // rewriting the blob (and emptying the tail) costs less than keeping on. Why: rewriting the
    // whole blob on every commit made an agent that appends a chunk per turn quadratic.
    // task_artifacts: the blob of a task whose artifacts changed after its insert, out of its row
    // (tasks.artifacts is then NULL), because SQLite rewrites a whole row on any update of it.
    sql: `
      ALTER TABLE task_events ADD COLUMN first_version INTEGER;
      ALTER TABLE tasks ADD COLUMN tail_bytes INTEGER NOT NULL DEFAULT 0;
      CREATE TABLE task_artifacts (
        task_pk   INTEGER PRIMARY KEY REFERENCES tasks (pk) ON DELETE CASCADE,
        artifacts BLOB NOT NULL -- lf.a2a.v1.Task holding only the artifacts, moved out of the row
      );
      CREATE TABLE artifact_tail (
        task_pk INTEGER NOT NULL REFERENCES tasks (pk) ON DELETE CASCADE,
        version INTEGER NOT NULL,
        changes BLOB NOT NULL,
        PRIMARY KEY (task_pk, version)
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 7,
    description: "a batch task_events row may leave its body in its commit's artifact_tail row",
    // No table changes: the version marks a new row form, so that an older server refuses the
    // file instead of misreading it. A kind 4 (batch) row with flags 1 has a NULL body: its body
    // is the artifact_tail row of the same task and version, byte for byte (a commit of appends
    // frames the same changes for both). Before the tail is emptied, such rows get their bodies
    // back (flags 0), so the log never points at a row that is gone.
    sql: `
      SELECT 1;
    `,
  },
  {
    version: 8,
    description: "owners name their scheme: the principal of every scope but anonymous gets the configured scheme's prefix",
    sql: "SELECT 1;",
    // Two passes, because UNIQUE (tenant, principal) is checked row by row: a bare name that equals
    // another's prefixed form (a JWT sub "apikey:bob" beside the key "bob") would collide halfway.
    // A blob never equals a text, so the first pass parks every row on a value no row holds.
    apply(db, { legacyOwnerPrefix }) {
      db.exec("CREATE TEMP TABLE owner_map AS SELECT scope_id, principal FROM scopes WHERE principal <> 'anonymous'");
      db.exec("UPDATE scopes SET principal = CAST(scope_id AS BLOB) WHERE scope_id IN (SELECT scope_id FROM owner_map)");
      db.prepare(
        "UPDATE scopes SET principal = ? || (SELECT m.principal FROM owner_map m WHERE m.scope_id = scopes.scope_id) WHERE scope_id IN (SELECT scope_id FROM owner_map)",
      ).run(legacyOwnerPrefix);
      db.exec("DROP TABLE temp.owner_map");
    },
  },
  {
    version: 9,
    description: "a push config remembers the A2A generation of the call that made it (R-V03-70): its webhooks' shape",
    // '1.0' or '0.3'; configs made before were made by 1.0 calls, the only ones served then.
    sql: `
      ALTER TABLE push_configs ADD COLUMN protocol_version TEXT NOT NULL DEFAULT '1.0';
    `,
  },
];

/** The schema version this code writes and understands. */
export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

/** `PRAGMA application_id` of a task database ("A2AT"), so a foreign SQLite file is recognised. */
export const APPLICATION_ID = 0x41324154;

/**
 * Refuses, before anything is written, a database this code must not touch: one from a
 * newer version, or another application's SQLite file. Works on a read-only connection.
 */
export function checkSchema(db: Database, file: string): { version: number } {
  const version = db.pragma("user_version", { simple: true }) as number;
  const appId = db.pragma("application_id", { simple: true }) as number;
  if (version > SCHEMA_VERSION) {
    throw new SqliteStoreError(
      file,
      `schema version ${version} is newer than this server understands (${SCHEMA_VERSION}); ` +
        `run a newer server, or restore a backup; the file was not modified`,
    );
  }
  if (appId !== 0 && appId !== APPLICATION_ID) {
    throw new SqliteStoreError(file, `belongs to another application (application_id ${appId}); the file was not modified`);
  }
  if (version === 0) {
    const objects = db.prepare("SELECT count(*) FROM sqlite_schema").pluck().get() as number;
    if (objects > 0) {
      throw new SqliteStoreError(
        file,
        `is a SQLite database with ${objects} schema objects but no task-store schema version; ` +
          `refusing to add tables to a database that is not ours; the file was not modified`,
      );
    }
  }
  return { version };
}

/**
 * Brings the schema up to `target` (default: the newest). Each step commits with its new
 * `user_version`; the version is re-read inside the transaction so two processes starting
 * at once do not both apply a step.
 */
export function migrate(
  db: Database,
  file: string,
  target = SCHEMA_VERSION,
  context: MigrationContext = { legacyOwnerPrefix: migrationOwnerPrefixInUse() },
): { from: number; to: number } {
  const from = db.pragma("user_version", { simple: true }) as number;
  for (const step of MIGRATIONS) {
    if (step.version > target) break;
    db.transaction(() => {
      const current = db.pragma("user_version", { simple: true }) as number;
      if (current >= step.version) return;
      if (current !== step.version - 1) {
        throw new SqliteStoreError(file, `schema version ${current} cannot be upgraded by step ${step.version}`);
      }
      db.exec(step.sql);
      step.apply?.(db, context);
      db.pragma(`application_id = ${APPLICATION_ID}`);
      db.pragma(`user_version = ${step.version}`);
    }).immediate();
  }
  return { from, to: db.pragma("user_version", { simple: true }) as number };
}
