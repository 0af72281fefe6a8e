import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { STORE_FILE_NAME } from "../../src/app.js";
import { CHANNELS, type StoreCommit } from "../../src/lifecycle/diagnostics.js";
import type { Agent } from "../../src/lifecycle/agent.js";
import { sendForTask, userMessage } from "../e2e/e2e-helpers.js";
import { startA2AServer } from "../support/a2a-server.js";
import { pushConfig } from "./push-helpers.js";
import { startReceiver } from "./receiver.js";
import { TaskState } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { openSqliteTaskRepository } from "../../src/storage/sqlite/sqlite-task-repository.js";
import { Clock, newTask, scopeOf, statusChange } from "../support/tasks.js";
import { config } from "../storage/push-config-store.contract.js";

/**
 * Issue 21 (push on SQLite): a client that starts many tasks at once with `return_immediately`
 * (the push benchmark's clients, an inline config each) must not make each call commit on its
 * own. Each reply waits for the group commit that holds its task, so concurrent calls share
 * commits, and a reply still never comes before its task is in the file.
 */
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "a2a-push-commits-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const CALLS = 40;

/** An agent that reports working at once and then waits: the task stays open while the test reads it. */
function waitingAgent(): { agent: Agent; release: () => void } {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const agent: Agent = {
    card: { skills: [{ id: "w", name: "w", description: "works, then waits", tags: ["test"] }] } as Agent["card"],
    async execute(ctx) {
      await ctx.working("started");
      await released;
      await ctx.complete("done");
    },
  };
  return { agent, release };
}

test("issue 21, R-SEND-4, R-SEND-7: concurrent return_immediately SendMessage calls with an inline push config share SQLite commits, and each reply's task is in the file when it arrives", async () => {
  const { agent, release } = waitingAgent();
  // A commit window wide enough that calls arriving within it surely share a commit, even on a loaded machine.
  const receiver = await startReceiver();
  const s = await startA2AServer({
    agent,
    env: { A2A_STORE: "sqlite", A2A_DATA_DIR: dir, A2A_STORE_COMMIT_WINDOW: "50ms", A2A_PUSH_ALLOW_HOSTS: "127.0.0.1", A2A_PUSH_ALLOW_HTTP: "true" },
  });
  const reader = new Database(join(dir, STORE_FILE_NAME), { readonly: true });
  const commits: StoreCommit[] = [];
  const listener = (message: unknown) => {
    const commit = message as StoreCommit;
    if (commit.store === "sqlite" && commit.writes > 0) commits.push(commit);
  };
  subscribe(CHANNELS.storeCommit, listener);
  try {
    const inFile = reader.prepare("SELECT count(*) FROM tasks WHERE id = ?").pluck();
    const outboxRows = reader.prepare("SELECT count(*) FROM push_outbox o JOIN tasks t ON t.pk = o.task_pk WHERE t.id = ?").pluck();
    const seenAtReply: Array<{ task: number; outbox: number }> = [];
    const replies = await Promise.all(
      Array.from({ length: CALLS }, async (_, i) => {
        const task = await sendForTask(s, userMessage(`go ${i}`), { returnImmediately: true, taskPushNotificationConfig: pushConfig({ url: receiver.url() }) });
        const id = task.id;
        // Read by another connection the moment the reply arrived: acknowledged means committed.
        seenAtReply.push({ task: inFile.get(id) as number, outbox: outboxRows.get(id) as number });
        return id;
      }),
    );
    expect(new Set(replies).size).toBe(CALLS);
    expect(seenAtReply).toEqual(Array.from({ length: CALLS }, () => ({ task: 1, outbox: expect.any(Number) })));
    // The inline config's snapshot is owed in the same commit as the task.
    expect(seenAtReply.every((r) => r.outbox >= 1)).toBe(true);
    // Shared: fewer commits than calls (one of its own per call before).
    const creating = commits.filter((c) => c.tasks > 0);
    expect(creating.length).toBeLessThan(CALLS);
    expect(creating.some((c) => c.tasks > 1)).toBe(true);
  } finally {
    unsubscribe(CHANNELS.storeCommit, listener);
    release();
    reader.close();
    await s.close();
    await receiver.close();
  }
});

describe("the SQLite outbox alone", () => {
  const alice = scopeOf("", "alice");
  const clock = new Clock();

  test("A-29, issue 21: delivered entries leave count() at once and the file with the next batch of task writes; count() flushes nothing, and stays exact after a config delete", async () => {
    const file = join(dir, "tasks.db");
    const repo = openSqliteTaskRepository({ file });
    const reader = new Database(file, { readonly: true });
    try {
      const rows = reader.prepare("SELECT seq FROM push_outbox ORDER BY seq").pluck();
      const t = newTask({ micros: clock.next() });
      await repo.create(alice, t);
      await repo.push.put(alice, config(t.id, "a"), { maxPerTask: 5 });
      await repo.push.put(alice, config(t.id, "b"), { maxPerTask: 5 });
      await repo.update(alice, t.id, 1, statusChange(TaskState.WORKING, clock.next()));
      await repo.update(alice, t.id, 2, statusChange(TaskState.WORKING, clock.next()));
      const entries = await repo.push.pendingAfter(0, 10);
      expect(entries.map((e) => e.configId)).toEqual(["a", "b", "a", "b"]);
      const [a1, b1] = entries;
      await repo.push.remove(a1!.seq);
      await repo.push.remove(a1!.seq); // removed twice: counted once
      await repo.push.remove(b1!.seq);
      expect(await repo.push.count()).toBe(2);
      // count() deleted nothing: the delivered rows wait for the next batch of task writes.
      expect(rows.all()).toEqual(entries.map((e) => e.seq));
      await repo.update(alice, t.id, 3, statusChange(TaskState.WORKING, clock.next()));
      expect(rows.all()).toEqual([entries[2]!.seq, entries[3]!.seq, entries[3]!.seq + 1, entries[3]!.seq + 2]);
      expect(await repo.push.count()).toBe(4);
      // A removal waiting when its config goes (its rows go by trigger) is not subtracted again.
      const [, , a2] = entries;
      await repo.push.remove(a2!.seq);
      expect(await repo.push.count()).toBe(3);
      await repo.push.delete(alice, t.id, "a");
      expect(await repo.push.count()).toBe(2);
      expect((await repo.push.pendingAfter(0, 10)).map((e) => e.configId)).toEqual(["b", "b"]);
    } finally {
      reader.close();
      await repo.close();
    }
  });
});
