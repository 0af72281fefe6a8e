import { chmodSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteTaskRepository } from "../../src/storage/sqlite/sqlite-task-repository.js";
import { newTask, scopeOf, Clock } from "../support/tasks.js";

/**
 * Issue 33 finding 10: the store holds push tokens and credentials, so its files are the
 * server user's alone: the database, its -wal and -shm files and the lock file 0600, a data
 * directory the store creates 0700, whatever the umask lets through.
 */
const mode = (path: string) => statSync(path).mode & 0o777;
const alice = scopeOf("t1", "alice");

let dir: string;
let umask: number;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "a2a-file-modes-"));
  umask = process.umask(0o022); // the usual umask, which lets SQLite make its files 0644
});
afterEach(() => {
  process.umask(umask);
  rmSync(dir, { recursive: true, force: true });
});

test("ISSUE33-10: a new store's directory is 0700 and its database, -wal, -shm and lock files 0600", async () => {
  const data = join(dir, "data");
  const file = join(data, "tasks.sqlite");
  const repo = openSqliteTaskRepository({ file });
  try {
    await repo.create(alice, newTask({ micros: new Clock().next(), text: "a push token lives here" }));
    for (const path of [file, `${file}-wal`, `${file}-shm`, `${file}.lock`]) {
      expect(existsSync(path)).toBe(true);
      expect([path, mode(path).toString(8)]).toEqual([path, "600"]);
    }
    expect(mode(data).toString(8)).toBe("700");
  } finally {
    await repo.close();
  }
});

test("ISSUE33-10: files an older version left readable by others are narrowed to 0600 at open", async () => {
  const file = join(dir, "tasks.sqlite");
  const first = openSqliteTaskRepository({ file });
  await first.create(alice, newTask({ micros: new Clock().next(), text: "kept" }));
  await first.close();
  chmodSync(file, 0o644);
  writeFileSync(`${file}.lock`, "");
  chmodSync(`${file}.lock`, 0o644);
  const again = openSqliteTaskRepository({ file });
  try {
    expect(mode(file).toString(8)).toBe("600");
    expect(mode(`${file}.lock`).toString(8)).toBe("600");
    expect(mode(`${file}-wal`).toString(8)).toBe("600");
    expect((await again.listActive()).length).toBe(1);
  } finally {
    await again.close();
  }
});
