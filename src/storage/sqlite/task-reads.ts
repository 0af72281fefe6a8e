import type { Database as Db, Statement } from "better-sqlite3";
import type { Task } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { mergeArtifact, type TaskPage, type TaskQuery } from "../../lifecycle/index.js";
import { mergeArtifactsBlob } from "./artifacts-blob.js";
import { decodeArtifactChanges } from "./event-row-codec.js";
import { ARTIFACTS_OF, type ArtifactsRow, type ListRow, type TaskStatements } from "./task-statements.js";
import { decodeArtifacts, decodeMessage, decodeTaskCore } from "./task-row-codec.js";

/** Reads of committed rows: a task whole (history, artifacts with their tail), and ListTasks pages. */
export class TaskReads {
  private readonly pageStatements = new Map<string, Statement>();
  private readonly countStatements = new Map<string, Statement>();

  constructor(
    private readonly db: Db,
    private readonly s: TaskStatements,
  ) {}

  /**
   * `task.artifacts` as the row holds them: the blob, then the changes kept after it, applied in
   * order; joined as bytes and decoded once (artifacts-blob.ts), else (bytes it cannot take
   * apart) each change decoded and merged.
   */
  readArtifacts(task: Task, row: ArtifactsRow): void {
    if (row.tail_bytes === 0) {
      task.artifacts = decodeArtifacts(row.artifacts);
      return;
    }
    const tail = this.s.tailOf.all(row.pk) as Uint8Array[];
    const joined = mergeArtifactsBlob(row.artifacts, tail);
    task.artifacts = decodeArtifacts(joined ?? row.artifacts);
    if (joined !== undefined) return;
    for (const body of tail) for (const change of decodeArtifactChanges(body)) mergeArtifact(task, change.artifact, change.append);
  }

  /** One page of ListTasks for the scope `scopeId` (undefined: a scope that never stored a task). */
  readPage(scopeId: number | undefined, query: TaskQuery): TaskPage {
    if (scopeId === undefined) return { tasks: [], totalSize: 0 };
    const filter = stripUndefined({ scopeId, contextId: query.contextId, state: query.state, atLeast: query.statusMicrosAtLeast });
    const rows = this.pageStatement(query).all({
      ...filter,
      ...(query.after ? { afterMicros: query.after.statusMicros, afterId: query.after.taskId } : {}),
      limit: query.pageSize + 1,
    }) as ListRow[];
    const more = rows.length > query.pageSize;
    if (more) rows.length = query.pageSize;
    const totalSize = Number(this.countStatement(query).get(filter) ?? 0);
    const tasks = rows.map((row) => this.assemble(row, query.historyLength, query.includeArtifacts));
    const last = rows[rows.length - 1];
    return more && last ? { tasks, next: { statusMicros: last.status_micros, taskId: last.id }, totalSize } : { tasks, totalSize };
  }

  /** A task from its row: its history (all, or the last `historyLength` messages) and, if asked, its artifacts. */
  assemble(row: ArtifactsRow & { task: Uint8Array }, historyLength: number | undefined, withArtifacts: boolean): Task {
    const task = decodeTaskCore(row.task);
    if (withArtifacts) this.readArtifacts(task, row);
    if (historyLength === undefined) {
      task.history = (this.s.allHistory.all(row.pk) as Uint8Array[]).map(decodeMessage);
    } else if (historyLength > 0) {
      task.history = (this.s.lastHistory.all(row.pk, historyLength) as Uint8Array[]).reverse().map(decodeMessage);
    }
    return task;
  }

  /**
   * One statement per combination of filters, each pinned to the index made for it, so a
   * page is a range scan of at most pageSize+1 entries whatever the number of tasks.
   */
  private pageStatement(q: TaskQuery): Statement {
    const key = `${+(q.contextId !== undefined)}${+(q.state !== undefined)}${+(q.statusMicrosAtLeast !== undefined)}${+(q.after !== undefined)}${+q.includeArtifacts}`;
    let stmt = this.pageStatements.get(key);
    if (stmt === undefined) {
      const where = filters(q);
      if (q.after !== undefined) where.push("(status_micros, id) < (@afterMicros, @afterId)");
      stmt = this.db.prepare(
        `SELECT pk, id, status_micros, task, ${q.includeArtifacts ? `${ARTIFACTS_OF("tasks")} AS artifacts, tail_bytes` : "NULL AS artifacts, 0 AS tail_bytes"}
         FROM tasks INDEXED BY ${indexFor(q)} WHERE ${where.join(" AND ")}
         ORDER BY status_micros DESC, id DESC LIMIT @limit`,
      );
      this.pageStatements.set(key, stmt);
    }
    return stmt;
  }

  /**
   * total_size: a counter lookup (kept by triggers) unless a timestamp filter is given, in
   * which case a COUNT over that index range (its cost grows with the matches, not the store).
   */
  private countStatement(q: TaskQuery): Statement {
    const key = `${+(q.contextId !== undefined)}${+(q.state !== undefined)}${+(q.statusMicrosAtLeast !== undefined)}`;
    let stmt = this.countStatements.get(key);
    if (stmt === undefined) {
      const where = filters(q);
      const sql =
        q.statusMicrosAtLeast !== undefined
          ? `SELECT count(*) FROM tasks INDEXED BY ${indexFor(q)} WHERE ${where.join(" AND ")}`
          : `SELECT coalesce(sum(n), 0) FROM ${q.contextId !== undefined ? "context_counts" : "scope_counts"} WHERE ${where.join(" AND ")}`;
      stmt = this.db.prepare(sql).pluck();
      this.countStatements.set(key, stmt);
    }
    return stmt;
  }
}

function filters(q: TaskQuery): string[] {
  const where = ["scope_id = @scopeId"];
  if (q.contextId !== undefined) where.push("context_id = @contextId");
  if (q.state !== undefined) where.push("state = @state");
  if (q.statusMicrosAtLeast !== undefined) where.push("status_micros >= @atLeast");
  return where;
}

function indexFor(q: TaskQuery): string {
  if (q.contextId !== undefined) return "tasks_by_context";
  if (q.state !== undefined) return "tasks_by_state";
  return "tasks_by_status";
}

/** Filters left unset are dropped, not bound (better-sqlite3 ignores named values a statement does not use). */
function stripUndefined(params: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(params).filter(([, v]) => v !== undefined));
}
