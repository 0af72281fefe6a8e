import Database from "better-sqlite3";
import { randomBytes } from "node:crypto";
import { readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { STORE_FILE_NAME } from "../../src/app.js";
import { MIGRATIONS } from "../../src/storage/sqlite/migrations.js";
import { killAll, send, spawnService, startService, taskOf, tempDataDir } from "./service-process.js";

/**
 * Issue 5 §6 on the real process: a data file that is not a task database this server can use
 * stops start-up (non-zero exit, before "listening on"), with one message that names the file,
 * and the file is left byte for byte as it was (never replaced, repaired or deleted).
 */
let data: ReturnType<typeof tempDataDir>;
beforeEach(() => {
  data = tempDataDir();
});
afterEach(async () => {
  await killAll();
  data.remove();
});

/** A real store written by the service itself, closed cleanly (SIGTERM). */
async function storeWithTasks(dir: string): Promise<void> {
  const service = await startService(dir);
  for (let i = 0; i < 10; i++) taskOf(await send(service.client, "done"));
  service.client.close();
  service.proc.kill("SIGTERM");
  expect(await service.exited).toBe(0);
}

const LATEST = Math.max(...MIGRATIONS.map((m) => m.version));

test.each([
  ["random bytes", async (file: string) => writeFileSync(file, randomBytes(48 * 1024)), /not a SQLite database/],
  ["a text file", async (file: string) => writeFileSync(file, "id,state\n1,done\n".repeat(500)), /not a SQLite database/],
  [
    "a task database from a newer server (PRAGMA user_version above the latest migration)",
    async (file: string, dir: string) => {
      await storeWithTasks(dir);
      const db = new Database(file);
      db.pragma(`user_version = ${LATEST + 1}`);
      db.close();
    },
    /newer/,
  ],
  [
    "a task database whose pages after the header page are overwritten by garbage",
    async (file: string, dir: string) => {
      await storeWithTasks(dir);
      const bytes = readFileSync(file);
      const pageSize = bytes.readUInt16BE(16);
      randomBytes(bytes.length - pageSize).copy(bytes, pageSize);
      writeFileSync(file, bytes);
    },
    /corrupt/,
  ],
])("ISSUE5-BAD-DATA: %s stops start-up with one message naming the file, which is left unchanged", async (_what, prepare, reason) => {
  const file = join(data.dir, STORE_FILE_NAME);
  await prepare(file, data.dir);
  const before = readFileSync(file);
  const filesBefore = readdirSync(data.dir).sort();

  const child = spawnService(data.dir);
  const code = await child.exited;
  expect(code).not.toBe(0);
  expect(code).not.toBeNull();
  const output = [...child.stdout, ...child.stderr];
  expect(output.some((l) => l.includes('"msg":"listening on'))).toBe(false);
  const naming = output.filter((l) => l.includes(file));
  expect(naming).toHaveLength(1);
  const logged = JSON.parse(naming[0]!) as { level: number; msg: string; err: { message: string } };
  expect(logged.level).toBe(60);
  expect(logged.msg).toMatch(/^could not start: /);
  expect(logged.msg).toContain(file);
  expect(logged.err.message).toContain(file);
  expect(logged.err.message).toMatch(reason);
  expect(logged.err.message).toMatch(/not modified/);

  expect(readFileSync(file).equals(before)).toBe(true);
  // Nothing else was written either. SQLite's read-only check of a WAL-mode file may leave its
  // (empty) -wal and -shm sidecars behind; a WAL holding frames would be a write.
  const added = readdirSync(data.dir).filter((name) => !filesBefore.includes(name));
  expect(added.filter((name) => name !== `${STORE_FILE_NAME}-wal` && name !== `${STORE_FILE_NAME}-shm` && name !== `${STORE_FILE_NAME}.lock`)).toEqual([]);
  if (added.includes(`${STORE_FILE_NAME}-wal`)) expect(statSync(`${file}-wal`).size).toBe(0);
});
