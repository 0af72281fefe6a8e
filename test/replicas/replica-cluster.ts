import { startService, tempDataDir, type RunningService } from "../durability/service-process.js";

export const REPLICA_AGENT = "test/replicas/fixtures/replica-agent.ts";

export interface Replica extends RunningService {
  readonly name: string;
}

/**
 * Server processes as an operator runs them (`node --import tsx src/main.ts`), all on one
 * PostgreSQL database, each on its own free 127.0.0.1 port, with the replica test agent.
 */
export async function startReplica(name: string, databaseUrl: string, env: Record<string, string> = {}): Promise<Replica> {
  const data = tempDataDir(); // unused by the postgres store; the service wants one
  const service = await startService(data.dir, {
    A2A_STORE: "postgres",
    A2A_DATABASE_URL: databaseUrl,
    A2A_DATABASE_POOL_SIZE: "4",
    A2A_AGENT_MODULE: REPLICA_AGENT,
    REPLICA_NAME: name,
    PGAPPNAME: replicaAppName(name), // node-postgres names its connections so: a test finds a replica's backends
    ...env,
  });
  void service.exited.then(() => data.remove());
  return { ...service, name };
}

/** The application_name of a replica's PostgreSQL connections (pg_stat_activity). */
export function replicaAppName(name: string): string {
  return `a2a-replica-${name}`;
}

export function startReplicas(names: readonly string[], databaseUrl: string, env: Record<string, string> = {}): Promise<Replica[]> {
  return Promise.all(names.map((name) => startReplica(name, databaseUrl, env)));
}

/** Polls `check` until it returns a value (not undefined) or `timeoutMs` passes. */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
