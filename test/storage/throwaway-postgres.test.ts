/**
 * Issue 32 item 8: the test PostgreSQL starts wherever the checkout lives, and one that cannot
 * start is a clear rejection, never a crash of the run. (As root: the server then runs as the
 * `postgres` user, which is where both went wrong.)
 */
import { mkdtemp, readFile, readlink, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { startThrowawayPostgres } from "../support/postgres/throwaway-postgres.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const asRoot = process.getuid?.() === 0;

(asRoot ? describe : describe.skip)("the throwaway PostgreSQL, started by root", () => {
  test("runs its binaries from the run's own directory, not from the checkout the postgres user may not enter", async () => {
    const server = await startThrowawayPostgres();
    try {
      const pid = (await readFile(join(server.dataDir, "postmaster.pid"), "utf8")).split("\n")[0]!;
      const executable = await readlink(`/proc/${pid}/exe`);
      expect(executable.startsWith(`${dirname(server.dataDir)}/`)).toBe(true);
      expect(executable.startsWith(process.cwd())).toBe(false);
    } finally {
      await server.stop();
    }
  });

  test("that cannot start (its directory out of the postgres user's reach) rejects with one clear message, no crash", async () => {
    // In a process of its own: the library's spawn error is a process-level uncaught exception,
    // which Jest's sandbox would not show to the code under test.
    const unreachable = await mkdtemp(join(tmpdir(), "a2a-pg-unreachable-")); // 0700
    try {
      const script = `import(${JSON.stringify(pathToFileURL(join(ROOT, "test/support/postgres/throwaway-postgres.ts")).href)}).then((m) => m.startThrowawayPostgres()).then(() => console.log("started"), (e) => console.log("rejected: " + e.message.split("\\n")[0]))`;
      const { NODE_OPTIONS: _dropped, ...env } = process.env;
      const run = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
        cwd: ROOT,
        env: { ...env, TMPDIR: unreachable },
        encoding: "utf8",
        timeout: 60_000,
      });
      expect(run.status).toBe(0);
      expect(run.stdout).toMatch(/^rejected: could not start the test PostgreSQL \(it runs as the postgres user, who must be able to enter .*\): .*EACCES\n$/);
    } finally {
      await rm(unreachable, { recursive: true, force: true });
    }
  });
});
