import pg from "pg";
import type { CoreLogger } from "../../lifecycle/index.js";
import { TASK_CHANNEL, isNoticeOf, parseNotice, parsePushNotice, type HeardNotice, type PushNotice } from "./task-notice.js";

export interface NoticeListener {
  /** A write committed somewhere (this replica's own too, unless the notifications were told its name). */
  notice(notice: HeardNotice): void;
  /** The listening connection was (re)made: notices may have been missed meanwhile. */
  resumed(): void;
  /** A commit somewhere added push outbox rows (listeners that deliver push only). */
  pushAdded?(notice: PushNotice): void;
}

const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 2000;

/**
 * LISTEN on the task channel over a connection of its own (a pooled one cannot hold a LISTEN),
 * remade with backoff when it breaks. Notices are wake-ups only; after a reconnect every
 * listener hears `resumed` and reads what it may have missed.
 */
export class TaskNotifications {
  private readonly listeners = new Set<NoticeListener>();
  private client: pg.Client | undefined;
  private closed = false;
  private retryMs = RETRY_MIN_MS;
  private retryTimer: NodeJS.Timeout | undefined;

  /** `ownWriter`: this replica's name; its own notices are then dropped unparsed (every listener here ignores them). */
  constructor(
    private readonly url: string,
    private readonly logger: CoreLogger,
    private readonly ownWriter?: string,
  ) {}

  /** Connects and listens; rejects if the first connection fails (later breaks are retried). */
  async start(): Promise<void> {
    await this.connect();
  }

  add(listener: NoticeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => {});
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url });
    client.on("notification", (message) => {
      if (message.payload === undefined) return;
      if (this.ownWriter !== undefined && isNoticeOf(message.payload, this.ownWriter)) return;
      const push = parsePushNotice(message.payload);
      if (push !== undefined) {
        for (const listener of this.listeners) listener.pushAdded?.(push);
        return;
      }
      const notice = parseNotice(message.payload);
      if (notice === undefined) return;
      for (const listener of this.listeners) listener.notice(notice);
    });
    client.on("error", (error) => this.broken(client, error));
    client.on("end", () => this.broken(client, undefined));
    await client.connect();
    await client.query(`LISTEN ${TASK_CHANNEL}`);
    if (this.closed) {
      await client.end();
      return;
    }
    this.client = client;
    this.retryMs = RETRY_MIN_MS;
  }

  private broken(client: pg.Client, error: unknown): void {
    if (this.closed || this.client !== client) return;
    this.client = undefined;
    this.logger.warn({ err: error }, "the PostgreSQL notification connection broke; reconnecting (events are read from the table meanwhile)");
    client.end().catch(() => {});
    this.retry();
  }

  private retry(): void {
    if (this.closed) return;
    this.retryTimer = setTimeout(() => {
      this.connect().then(
        () => {
          for (const listener of this.listeners) listener.resumed();
        },
        (error: unknown) => {
          this.logger.warn({ err: error, retry_ms: this.retryMs }, "could not reconnect the PostgreSQL notification connection");
          this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
          this.retry();
        },
      );
    }, this.retryMs);
    this.retryTimer.unref();
  }
}
