import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import Database from "better-sqlite3";
import { TaskState } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { openSqliteTaskRepository } from "../../src/storage/sqlite/sqlite-task-repository.js";

/**
 * Issue 5 §3 at the store level: a write whose promise resolved survives SIGKILL of the
 * process (durability "process" = WAL + synchronous=NORMAL), and no task is half-written.
 * A child process runs a write load and prints an acknowledgement after each resolved
 * write; the test kills it mid-load and checks the file against what was acknowledged.
 */
const scope = { tenant: "t", principal: "crash" };
const root = resolve(".");
const url = (path: string) => pathToFileURL(join(root, path)).href;

const CHILD = `
  import { create } from "@bufbuild/protobuf";
  import { writeSync } from "node:fs";
  import { openSqliteTaskRepository } from ${JSON.stringify(url("src/storage/sqlite/sqlite-task-repository.ts"))};
  import { newTask, statusChange } from ${JSON.stringify(url("test/support/tasks.ts"))};
  import { ackedOnCommit } from ${JSON.stringify(url("test/support/answered.ts"))};
  import { TaskState } from ${JSON.stringify(url("gen/es/lf/a2a/v1/a2a_pb.ts"))};
  const repo = ackedOnCommit(openSqliteTaskRepository({ file: process.argv[1] }));
  const scope = ${JSON.stringify(scope)};
  let micros = 1_750_000_000_000_000;
  // Acks are written synchronously: a write queued in the process (a full pipe on a loaded
  // machine) would die with it at SIGKILL, and its task would look unacknowledged.
  // Writers run concurrently, so their writes share group commits.
  const writers = Number(process.argv[2]);
  function ack(what) {
    for (;;) {
      try {
        writeSync(1, "ack " + what + "\\n");
        return;
      } catch (error) {
        if (error.code !== "EAGAIN") throw error; // the reader is behind: try again
      }
    }
  }
  for (let w = 0; w < writers; w++) void writer(w);
  async function writer(w) { for (let i = w; ; i += writers) {
    const task = newTask({ id: "task-" + i, micros: ++micros, text: "question " + i });
    await repo.create(scope, task);
    ack(task.id + " 1");
    await repo.update(scope, task.id, 1, statusChange(TaskState.WORKING, ++micros));
    ack(task.id + " 2");
    await repo.update(scope, task.id, 2, statusChange(TaskState.COMPLETED, ++micros, "answer " + i));
    ack(task.id + " 3");
  } }
`;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "a2a-sqlite-crash-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

test.each([1, 8])(
  "issue 5 §3 (durability): every acknowledged write survives SIGKILL mid-load; no task is half-written (%i concurrent writers)",
  async (writers) => {
    const file = join(dir, "tasks.db");
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", CHILD, file, String(writers)], {
      cwd: root,
      stdio: ["ignore", "pipe", "inherit"],
    });
    const acked = new Map<string, number>();
    const exited = new Promise<NodeJS.Signals | null>((done) => child.on("exit", (_code, signal) => done(signal)));
    for await (const line of createInterface({ input: child.stdout! })) {
      const [, id, version] = line.split(" ");
      acked.set(id!, Number(version));
      if (acked.size === 400) child.kill("SIGKILL"); // mid-load: the child is between writes or inside one
    }
    expect(await exited).toBe("SIGKILL");
    expect(acked.size).toBeGreaterThanOrEqual(400);

    const repo = openSqliteTaskRepository({ file, integrityCheck: "quick" });
    try {
      for (const [id, version] of acked) {
        const stored = await repo.get(scope, id);
        expect({ id, found: stored !== undefined }).toEqual({ id, found: true });
        // A write may have committed after its ack was lost with the process: never fewer.
        expect(stored!.version).toBeGreaterThanOrEqual(version);
      }
      // Every stored task is exactly one of the three states the load produces, whole.
      const expectedByVersion = new Map([
        [1, { state: TaskState.SUBMITTED, history: 1 }],
        [2, { state: TaskState.WORKING, history: 1 }],
        [3, { state: TaskState.COMPLETED, history: 2 }],
      ]);
      let total = 0;
      let after;
      for (;;) {
        const page = await repo.list(scope, { pageSize: 100, after, includeArtifacts: true });
        for (const task of page.tasks) {
          const { version } = (await repo.get(scope, task.id))!;
          expect({ id: task.id, state: task.status?.state, history: task.history.length }).toEqual({ id: task.id, ...expectedByVersion.get(version) });
        }
        total += page.tasks.length;
        if (!page.next) {
          expect(page.totalSize).toBe(total);
          break;
        }
        after = page.next;
      }
      expect(total).toBeGreaterThanOrEqual(acked.size);
      // Tasks created but not acknowledged: at most one per writer.
      expect(total).toBeLessThanOrEqual(acked.size + writers);
    } finally {
      await repo.close();
    }
    const db = new Database(file, { readonly: true });
    expect(db.prepare("PRAGMA integrity_check").pluck().all()).toEqual(["ok"]);
    db.close();
  },
);
