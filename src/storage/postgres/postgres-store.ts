import { randomUUID } from "node:crypto";
import pg from "pg";
import type { TaskEvent } from "../../events/task-event.js";
import { type EventLogOptions, silentLogger, type CoreLogger } from "../../lifecycle/index.js";
import { PostgresEventRelay } from "./event-relay.js";
import { migrate } from "./migrations.js";
import { TaskNotifications } from "./notifications.js";
import { PostgresTaskRepository } from "./postgres-task-repository.js";
import { PostgresRunLeases } from "./run-leases.js";

export interface PostgresStoreOptions {
  /** postgres://user:password@host:port/database (libpq URL, `?sslmode=...` honoured by pg). */
  readonly url: string;
  /** Connections in this replica's pool. */
  readonly poolSize?: number;
  /** How long a run's lease holds without renewal, ms. */
  readonly leaseMs?: number;
  /** This replica's name among the others; default a fresh random one per process. */
  readonly replicaId?: string;
  readonly logger?: CoreLogger;
  /** How often the relay reads watched tasks' events without a wake-up, ms. */
  readonly eventPollMs?: number;
  /** Keep every write's event for resuming streams this long; absent: no resume log. */
  readonly eventLog?: Pick<EventLogOptions, "retentionMs">;
  readonly onListenerError?: (error: unknown, event: TaskEvent) => void;
}

export const DEFAULT_LEASE_MS = 10_000;
export const DEFAULT_POOL_SIZE = 10;

/**
 * What one replica holds of the shared database: its pool, the task repository (with its push
 * store, `repository.push`), the event relay (its event hub) and the run leases, which the app
 * hands to the task service.
 */
export interface PostgresStore {
  readonly pool: pg.Pool;
  readonly repository: PostgresTaskRepository;
  readonly relay: PostgresEventRelay;
  readonly leases: PostgresRunLeases;
  readonly replicaId: string;
  readonly leaseMs: number;
  readonly schema: { readonly from: number; readonly to: number };
  close(): Promise<void>;
}

/**
 * Connects, brings the schema up to date (one replica at a time) and opens the repository.
 * Fails with PostgresStoreError on a schema newer than this code, and with the driver's error
 * when the database cannot be reached.
 */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<PostgresStore> {
  const pool = new pg.Pool({ connectionString: options.url, max: options.poolSize ?? DEFAULT_POOL_SIZE });
  // An idle connection that breaks (the server restarted) is dropped by the pool; without a
  // listener its error event would end the process.
  pool.on("error", () => {});
  let schema: { from: number; to: number };
  try {
    const client = await pool.connect();
    try {
      schema = await migrate(client);
    } finally {
      client.release();
    }
  } catch (error) {
    await pool.end();
    throw error;
  }
  const replicaId = options.replicaId ?? randomUUID();
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  const logger = options.logger ?? silentLogger;
  const repository = new PostgresTaskRepository({ pool, replicaId, leaseMs, eventLog: options.eventLog, poolSize: options.poolSize ?? DEFAULT_POOL_SIZE });
  const notifications = new TaskNotifications(options.url, logger, replicaId);
  try {
    await notifications.start();
  } catch (error) {
    await pool.end();
    throw error;
  }
  const relay = new PostgresEventRelay({
    pool,
    notifications,
    replicaId,
    logger,
    pollMs: options.eventPollMs,
    keepMs: options.eventLog?.retentionMs,
    onListenerError: options.onListenerError,
  });
  const leases = new PostgresRunLeases({ pool, repository, notifications, replicaId, leaseMs, logger });
  repository.push.start({ notifications, logger });
  let closing: Promise<void> | undefined;
  return {
    pool,
    repository,
    relay,
    leases,
    replicaId,
    leaseMs,
    schema,
    close() {
      closing ??= (async () => {
        relay.close();
        await leases.close();
        await repository.push.close();
        await notifications.close();
        await repository.close();
        await pool.end();
      })();
      return closing;
    },
  };
}
