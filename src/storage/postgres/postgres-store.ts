import { randomUUID } from "node:crypto";
import pg from "pg";
import { migrate } from "./migrations.js";
import { PostgresTaskRepository } from "./postgres-task-repository.js";

export interface PostgresStoreOptions {
  /** postgres://user:password@host:port/database (libpq URL, `?sslmode=...` honoured by pg). */
  readonly url: string;
  /** Connections in this replica's pool. */
  readonly poolSize?: number;
  /** How long a run's lease holds without renewal, ms. */
  readonly leaseMs?: number;
  /** This replica's name among the others; default a fresh random one per process. */
  readonly replicaId?: string;
}

export const DEFAULT_LEASE_MS = 10_000;
export const DEFAULT_POOL_SIZE = 10;

/** What one replica holds of the shared database: its pool, and the task repository on it. */
export interface PostgresStore {
  readonly pool: pg.Pool;
  readonly repository: PostgresTaskRepository;
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
  const repository = new PostgresTaskRepository({ pool, replicaId, leaseMs });
  return {
    pool,
    repository,
    replicaId,
    leaseMs,
    schema,
    async close() {
      await repository.close();
      await pool.end();
    },
  };
}
