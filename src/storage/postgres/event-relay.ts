import type pg from "pg";
import type { TaskEventHub } from "../../events/event-hub.js";
import { EventHub } from "../../events/event-hub.js";
import type { TaskEvent, TaskEventListener } from "../../events/task-event.js";
import type { CoreLogger } from "../../lifecycle/index.js";
import { eventOfRow } from "./event-rows.js";
import type { NoticeListener, TaskNotifications } from "./notifications.js";
import { copiedRow, type HeardNotice } from "./task-notice.js";

export interface EventRelayOptions {
  readonly pool: pg.Pool;
  readonly notifications: TaskNotifications;
  readonly replicaId: string;
  readonly logger: CoreLogger;
  /** How often the events of every watched task are read even without a wake-up, ms. */
  readonly pollMs?: number;
  /** How long event rows are kept before pruning, ms (at least RELAY_KEEP_MS; longer when the resume log needs them). */
  readonly keepMs?: number;
  /** Passed to the local hub: a listener that threw and was removed. */
  readonly onListenerError?: (error: unknown, event: TaskEvent) => void;
}

/** Rows read per query: a task with more events left is read again at once. */
const READ_LIMIT = 500;
const DEFAULT_POLL_MS = 1000;
/** Events are kept at least this long: only a relay that far behind, or a stream's first read of an old task, would want older ones. */
export const RELAY_KEEP_MS = 5 * 60_000;
const PRUNE_EVERY_MS = 60_000;

/** How far this process has delivered one watched task's events. */
interface Cursor {
  /** The last version delivered to the task's listeners here (0: none yet). */
  delivered: number;
  /** Events that came ahead of their turn (a local write after a remote one not read yet). */
  readonly ahead: Map<number, TaskEvent>;
}

/**
 * The event hub of a replica: streams on this process hear every write to their task, made here
 * or on any other replica. The carrier is the event table (`a2a_task_events`, one row per write,
 * in the write's transaction), read by cursor: per watched task, the last version delivered.
 * LISTEN/NOTIFY wakes the relay up (notices of one turn are read in one query); a notice that
 * carries a copy of its row (small events, see task-notice.ts) and is the cursor's very next
 * version is delivered from the copy, which saves the read (most of what crossing replicas cost:
 * see docs/architecture.md). The table is read anyway for anything else, every `pollMs` and after
 * the notification connection was remade, so a lost notice delays events and never loses them.
 *
 * Ordering: a task's versions are committed in order (each write is a compare-and-set on the
 * version), so the table never shows version n+1 without n. This process's own writes are
 * delivered at once, when published; one that comes before an earlier version written elsewhere
 * waits for it. Each version is delivered once, so the hub's rules hold per replica: in version
 * order, no gap, no duplicate.
 */
export class PostgresEventRelay implements TaskEventHub, NoticeListener {
  private readonly local: EventHub;
  private readonly cursors = new Map<string, Cursor>();
  private readonly due = new Set<string>();
  private reading = false;
  private readScheduled = false;
  private readonly poller: NodeJS.Timeout;
  private readonly pruner: NodeJS.Timeout;
  private readonly stopListening: () => void;
  private closed = false;

  constructor(private readonly options: EventRelayOptions) {
    this.local = new EventHub(options.onListenerError);
    this.stopListening = options.notifications.add(this);
    this.poller = setInterval(() => this.readAll(), options.pollMs ?? DEFAULT_POLL_MS);
    this.poller.unref();
    this.pruner = setInterval(() => void this.prune(), PRUNE_EVERY_MS);
    this.pruner.unref();
  }

  subscribe(taskId: string, listener: TaskEventListener): () => void {
    if (!this.cursors.has(taskId)) this.cursors.set(taskId, { delivered: 0, ahead: new Map() });
    const remove = this.local.subscribe(taskId, listener);
    return () => {
      remove();
      if (!this.local.hasListeners(taskId)) {
        this.cursors.delete(taskId);
        this.due.delete(taskId);
      }
    };
  }

  hasListeners(taskId: string): boolean {
    return this.local.hasListeners(taskId);
  }

  listenerCount(taskId?: string): number {
    return this.local.listenerCount(taskId);
  }

  topicCount(): number {
    return this.local.topicCount();
  }

  /** Tasks watched here; for tests. */
  get watchedCount(): number {
    return this.cursors.size;
  }

  publish(event: TaskEvent): void {
    const cursor = this.cursors.get(event.taskId);
    if (cursor !== undefined) this.offer(event.taskId, cursor, event);
  }

  notice(notice: HeardNotice): void {
    if (notice.writer === this.options.replicaId) return; // published here already, or about to be
    const cursor = this.cursors.get(notice.taskId);
    if (cursor === undefined || notice.version <= cursor.delivered || cursor.ahead.has(notice.version)) return;
    // The notice's copy of the row, when it is the very next version: delivered without waiting
    // for a read (the read would return these same committed bytes). Anything else is read.
    const row = notice.version === cursor.delivered + 1 ? copiedRow(notice) : undefined;
    if (row !== undefined) {
      const event = eventOfRow(notice.taskId, notice.version, row.kind, row.body);
      if (event !== undefined) {
        this.offer(notice.taskId, cursor, event);
        return;
      }
    }
    this.markDue(notice.taskId);
  }

  resumed(): void {
    this.readAll();
  }

  close(): void {
    this.closed = true;
    clearInterval(this.poller);
    clearInterval(this.pruner);
    this.stopListening();
  }

  /**
   * Deletes events older than `keepMs` (every replica does). Rows another statement holds are left
   * for the next prune, never waited for: a retention sweep deletes a task's events with it, in
   * its own order, and two deletes waiting for each other's rows would deadlock.
   */
  async prune(keepMs = Math.max(RELAY_KEEP_MS, this.options.keepMs ?? 0)): Promise<number> {
    try {
      const { rowCount } = await this.options.pool.query(
        `DELETE FROM a2a_task_events WHERE (task_id, version) IN (
           SELECT task_id, version FROM a2a_task_events WHERE written_at < now() - $1 * interval '1 millisecond' FOR UPDATE SKIP LOCKED)`,
        [keepMs],
      );
      return rowCount ?? 0;
    } catch (error) {
      if (!this.closed) this.options.logger.warn({ err: error }, "could not prune old task events");
      return 0;
    }
  }

  /** Delivers `event` if it is the next version of its task, else keeps it for its turn. */
  private offer(taskId: string, cursor: Cursor, event: TaskEvent): void {
    if (event.version <= cursor.delivered) return;
    if (event.version !== cursor.delivered + 1) {
      cursor.ahead.set(event.version, event);
      this.markDue(taskId); // the versions before it are in the table
      return;
    }
    this.deliver(cursor, event);
    for (let next = cursor.ahead.get(cursor.delivered + 1); next !== undefined; next = cursor.ahead.get(cursor.delivered + 1)) {
      cursor.ahead.delete(next.version);
      this.deliver(cursor, next);
    }
  }

  private deliver(cursor: Cursor, event: TaskEvent): void {
    cursor.delivered = event.version;
    cursor.ahead.delete(event.version); // read from the table before its local copy was offered
    this.local.publish(event);
  }

  private readAll(): void {
    for (const taskId of this.cursors.keys()) this.due.add(taskId);
    this.scheduleRead();
  }

  private markDue(taskId: string): void {
    this.due.add(taskId);
    this.scheduleRead();
  }

  /**
   * Coalesces: the notices that arrive together (one socket read delivers them in one go; the
   * read starts in a microtask after them) make one query, and those that come while a read
   * runs make the next. Why not setImmediate: under load, waiting for the loop's check phase
   * added milliseconds to every cross-replica event.
   */
  private scheduleRead(): void {
    if (this.readScheduled || this.reading || this.closed || this.due.size === 0) return;
    this.readScheduled = true;
    queueMicrotask(() => {
      this.readScheduled = false;
      void this.read();
    });
  }

  private async read(): Promise<void> {
    const ids: string[] = [];
    const after: number[] = [];
    for (const taskId of this.due) {
      const cursor = this.cursors.get(taskId);
      if (cursor === undefined) continue;
      ids.push(taskId);
      after.push(cursor.delivered);
    }
    this.due.clear();
    if (ids.length === 0) return;
    this.reading = true;
    try {
      const { rows } = await this.options.pool.query<{ task_id: string; version: number; kind: number; body: Buffer }>({
        name: "a2a_relay_read",
        text: `SELECT e.task_id, e.version, e.kind, e.body
               FROM unnest($1::text[], $2::int[]) AS c (task_id, after)
               JOIN a2a_task_events e ON e.task_id = c.task_id AND e.version > c.after
               ORDER BY e.task_id, e.version LIMIT ${READ_LIMIT}`,
        values: [ids, after],
      });
      this.deliverRows(rows);
      if (rows.length === READ_LIMIT) for (const row of rows) this.due.add(row.task_id);
    } catch (error) {
      if (!this.closed) {
        this.options.logger.warn({ err: error }, "could not read task events from PostgreSQL; retrying");
        setTimeout(() => {
          for (const taskId of ids) this.due.add(taskId);
          this.scheduleRead();
        }, 200).unref();
      }
    } finally {
      this.reading = false;
    }
    this.scheduleRead();
  }

  private deliverRows(rows: ReadonlyArray<{ task_id: string; version: number; kind: number; body: Buffer }>): void {
    for (const row of rows) {
      const cursor = this.cursors.get(row.task_id);
      if (cursor === undefined || row.version <= cursor.delivered) continue;
      const event = eventOfRow(row.task_id, row.version, row.kind, row.body);
      if (event === undefined) continue;
      if (row.version > cursor.delivered + 1) this.skipTo(row.task_id, cursor, row.version);
      this.offer(row.task_id, cursor, event);
    }
  }

  /**
   * The versions before `version` are not in the table (pruned long ago, or written before the
   * table existed). The first read of a task may start anywhere: the stream's snapshot is
   * newer. Later, it is a gap the stream cannot fill; it is logged.
   */
  private skipTo(taskId: string, cursor: Cursor, version: number): void {
    if (cursor.delivered > 0)
      this.options.logger.warn({ task_id: taskId, from: cursor.delivered + 1, to: version - 1 }, "task events missing from the event table were skipped");
    cursor.delivered = version - 1;
  }
}
