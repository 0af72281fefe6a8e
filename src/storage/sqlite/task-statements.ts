import type { Database as Db, Statement } from "better-sqlite3";
import { BATCH } from "./event-row-codec.js";

export const ACTIVE = "(1, 2)"; // SUBMITTED, WORKING: must match the partial index tasks_active
export const TERMINAL = "(3, 4, 5, 7)"; // COMPLETED, FAILED, CANCELED, REJECTED: index tasks_terminal
/**
 * A task's artifacts blob: in `task_artifacts` once a write after its insert changed them, else
 * in its row (as inserted). Why apart: SQLite rewrites a whole row, blob included, on any update,
 * so a task streaming its answer rewrote all of it with every commit.
 */
export const ARTIFACTS_OF = (t: string) => `coalesce((SELECT a.artifacts FROM task_artifacts a WHERE a.task_pk = ${t}.pk), ${t}.artifacts)`;
/**
 * `task_events.flags` of a BATCH row whose body is not in the row but is its commit's
 * `artifact_tail` row (same task and version), byte for byte: a commit of appends only frames the
 * same changes for both, and writing them twice was a third of what a burst wrote. Before the
 * tail is emptied, its bodies are copied into these rows (`eventBodiesOutOfTail`).
 */
export const BODY_IN_TAIL = 1;
/** An event row's body, from the row or, for BODY_IN_TAIL, from its tail row. */
export const EVENT_BODY = `CASE WHEN e.kind = ${BATCH} AND e.flags = ${BODY_IN_TAIL}
  THEN (SELECT a.changes FROM artifact_tail a WHERE a.task_pk = e.task_pk AND a.version = e.version) ELSE e.body END`;

export interface TaskRow {
  pk: number;
  scope_id: number;
  version: number;
  history_len: number;
  task: Uint8Array;
  artifacts: Uint8Array | null;
  tail_bytes: number;
  /** 1 when the artifacts blob is in the row itself. */
  inline?: number;
}

export interface EventRow {
  version: number;
  first_version: number | null;
  at_micros: number;
  kind: number;
  flags: number;
  body: Uint8Array | null;
}

export interface ListRow {
  pk: number;
  id: string;
  status_micros: number;
  task: Uint8Array;
  artifacts: Uint8Array | null;
  tail_bytes: number;
}

/** What a row holds of a task's artifacts: the blob, and the size of the changes kept after it in `artifact_tail`. */
export type ArtifactsRow = Pick<TaskRow, "pk" | "artifacts" | "tail_bytes">;

/** The task store's statements, prepared once: every call reuses a compiled statement. */
export type TaskStatements = { readonly [name in TaskStatementName]: Statement };

type TaskStatementName =
  | "findScope"
  | "addScope"
  | "insertTask"
  | "taskExists"
  | "selectTask"
  | "updateStatus"
  | "updateArtifacts"
  | "putArtifacts"
  | "moveArtifacts"
  | "clearInline"
  | "updateTail"
  | "insertTail"
  | "tailOf"
  | "clearTail"
  | "updateVersion"
  | "insertHistory"
  | "allHistory"
  | "lastHistory"
  | "active"
  | "purgeBatch"
  | "insertEvent"
  | "insertEvents"
  | "insertEventsInTail"
  | "eventBodiesOutOfTail"
  | "taskHead"
  | "eventsAfter"
  | "trimEvents"
  | "getMeta"
  | "setMeta";

export function prepareTaskStatements(db: Db): TaskStatements {
  return {
    findScope: db.prepare("SELECT scope_id FROM scopes WHERE tenant = ? AND principal = ?").pluck(),
    addScope: db.prepare("INSERT INTO scopes (tenant, principal) VALUES (?, ?) ON CONFLICT DO NOTHING"),
    insertTask: db.prepare(
      `INSERT INTO tasks (id, scope_id, context_id, state, status_micros, version, history_len, task, artifacts)
       VALUES (@id, @scopeId, @contextId, @state, @statusMicros, @version, @historyLen, @task, @artifacts)`,
    ),
    taskExists: db.prepare("SELECT 1 FROM tasks WHERE id = ?").pluck(),
    selectTask: db.prepare(
      `SELECT pk, scope_id, version, history_len, task, ${ARTIFACTS_OF("tasks")} AS artifacts, tail_bytes, tasks.artifacts IS NOT NULL AS inline
       FROM tasks WHERE id = ?`,
    ),
    updateStatus: db.prepare(
      `UPDATE tasks SET state = @state, status_micros = @statusMicros, version = @version, history_len = @historyLen, task = @task
       WHERE pk = @pk`,
    ),
    updateArtifacts: db.prepare("UPDATE tasks SET version = @version, history_len = @historyLen, artifacts = NULL, tail_bytes = 0 WHERE pk = @pk"),
    putArtifacts: db.prepare(
      "INSERT INTO task_artifacts (task_pk, artifacts) VALUES (?, ?) ON CONFLICT (task_pk) DO UPDATE SET artifacts = excluded.artifacts",
    ),
    moveArtifacts: db.prepare("INSERT INTO task_artifacts (task_pk, artifacts) SELECT pk, artifacts FROM tasks WHERE pk = ? AND artifacts IS NOT NULL"),
    clearInline: db.prepare("UPDATE tasks SET artifacts = NULL WHERE pk = ?"),
    updateTail: db.prepare("UPDATE tasks SET version = @version, history_len = @historyLen, tail_bytes = @tailBytes WHERE pk = @pk"),
    insertTail: db.prepare("INSERT INTO artifact_tail (task_pk, version, changes) VALUES (?, ?, ?)"),
    tailOf: db.prepare("SELECT changes FROM artifact_tail WHERE task_pk = ? ORDER BY version").pluck(),
    clearTail: db.prepare("DELETE FROM artifact_tail WHERE task_pk = ?"),
    updateVersion: db.prepare("UPDATE tasks SET version = @version, history_len = @historyLen WHERE pk = @pk"),
    insertHistory: db.prepare("INSERT INTO history (task_pk, seq, message) VALUES (?, ?, ?)"),
    allHistory: db.prepare("SELECT message FROM history WHERE task_pk = ? ORDER BY seq").pluck(),
    lastHistory: db.prepare("SELECT message FROM history WHERE task_pk = ? ORDER BY seq DESC LIMIT ?").pluck(),
    active: db.prepare(
      `SELECT t.pk, t.scope_id, t.version, t.history_len, t.task, ${ARTIFACTS_OF("t")} AS artifacts, t.tail_bytes, s.tenant, s.principal
       FROM tasks t JOIN scopes s USING (scope_id) WHERE t.state IN ${ACTIVE}`,
    ),
    purgeBatch: db.prepare(
      `DELETE FROM tasks WHERE pk IN
         (SELECT pk FROM tasks WHERE state IN ${TERMINAL} AND status_micros < ? LIMIT ?)`,
    ),
    insertEvent: db.prepare("INSERT INTO task_events (task_pk, version, at_micros, kind, flags, body) VALUES (?, ?, ?, ?, ?, ?)"),
    insertEvents: db.prepare(`INSERT INTO task_events (task_pk, version, first_version, at_micros, kind, flags, body) VALUES (?, ?, ?, ?, ${BATCH}, 0, ?)`),
    insertEventsInTail: db.prepare(
      `INSERT INTO task_events (task_pk, version, first_version, at_micros, kind, flags, body) VALUES (?, ?, ?, ?, ${BATCH}, ${BODY_IN_TAIL}, NULL)`,
    ),
    eventBodiesOutOfTail: db.prepare(
      `UPDATE task_events AS e SET body = ${EVENT_BODY}, flags = 0 WHERE e.task_pk = ? AND e.kind = ${BATCH} AND e.flags = ${BODY_IN_TAIL}`,
    ),
    taskHead: db.prepare("SELECT pk, scope_id, version, state, context_id FROM tasks WHERE id = ?"),
    eventsAfter: db.prepare(
      `SELECT e.version, e.first_version, e.at_micros, e.kind, e.flags, ${EVENT_BODY} AS body FROM task_events e WHERE e.task_pk = ? AND e.version > ? ORDER BY e.version`,
    ),
    trimEvents: db.prepare("DELETE FROM task_events WHERE at_micros < ?"),
    getMeta: db.prepare("SELECT value FROM meta WHERE key = ?").pluck(),
    setMeta: db.prepare("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT DO UPDATE SET value = excluded.value"),
  };
}
