import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { jest } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { STORE_FILE_NAME } from "../../src/app.js";
import { CHANNELS, type StoreCommit } from "../../src/lifecycle/ports/diagnostics.js";
import type { Agent } from "../../src/lifecycle/ports/agent.js";
import { sendForTask, userMessage } from "../e2e/e2e-helpers.js";
import { startA2AServer } from "../support/a2a-server.js";
import { pushConfig } from "./push-helpers.js";
import { startReceiver } from "./receiver.js";
import { TaskState } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { openSqliteTaskRepository } from "../../src/storage/sqlite/sqlite-task-repository.js";
import { Clock, newTask, scopeOf, statusChange } from "../support/tasks.js";
import { config } from "../storage/push-config-store.contract.js";
import { ackedOnCommit, answered } from "../support/answered.js";

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
    const repo = ackedOnCommit(openSqliteTaskRepository({ file }));
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

  /** `count` tasks of alice with one config each, committed; their ids. */
  async function tasksWithConfigs(repo: ReturnType<typeof openSqliteTaskRepository>, count: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const t = newTask({ micros: clock.next() });
      await repo.create(alice, t);
      await repo.push.put(alice, config(t.id, "c"), { maxPerTask: 5 });
      ids.push(t.id);
    }
    return ids;
  }

  test("A-29, issue 21: tasks with push configs writing in one turn commit at most 16 outbox rows a batch, so the first deliveries are committed (and handed over) while later writes are still coming", async () => {
    const file = join(dir, "tasks.db");
    const repo = ackedOnCommit(openSqliteTaskRepository({ file }));
    const reader = new Database(file, { readonly: true });
    try {
      const ids = await tasksWithConfigs(repo, 40);
      const committedRows = reader.prepare("SELECT count(*) FROM push_outbox o JOIN tasks t ON t.pk = o.task_pk WHERE t.version = 2").pluck();
      let handed = 0;
      repo.push.onAdded((added) => (handed += added));
      const inFileAtWrite: number[] = [];
      const handedAtWrite: number[] = [];
      // As 40 agents woken by the same timer tick write: one after another, microtasks between, no
      // turn of the event loop (so no commit from it) until all have written.
      await new Promise<void>((resolve) => {
        const write = (i: number) => {
          inFileAtWrite.push(committedRows.get() as number);
          handedAtWrite.push(handed);
          answered(repo.now.update(alice, ids[i]!, 1, statusChange(TaskState.WORKING, clock.next())));
          if (i + 1 < ids.length) queueMicrotask(() => write(i + 1));
          else resolve();
        };
        write(0);
      });
      // The 17th write found 16 rows waiting and committed them first (before: one commit of 40 at the turn's end).
      expect(inFileAtWrite[16]).toBe(0);
      expect(inFileAtWrite[17]).toBe(16);
      expect(inFileAtWrite[33]).toBe(32);
      // ... and they were handed over for delivery before the next write.
      expect(handedAtWrite[17]).toBe(16);
      await new Promise((resolve) => setImmediate(resolve));
      expect(committedRows.get()).toBe(40);
      expect(handed).toBe(40);
    } finally {
      reader.close();
      await repo.close();
    }
  });

  test("A-29, issue 21: delivered entries no batch of task writes takes are deleted once deliveries paused for 100 ms (the burst is over), not a second later by the next burst's first commit; and at most a second after the oldest while deliveries go on", async () => {
    const file = join(dir, "tasks.db");
    const repo = ackedOnCommit(openSqliteTaskRepository({ file }));
    const reader = new Database(file, { readonly: true });
    try {
      const ids = await tasksWithConfigs(repo, 40);
      const rows = reader.prepare("SELECT count(*) FROM push_outbox").pluck();
      for (const id of ids) answered(repo.now.update(alice, id, 1, statusChange(TaskState.WORKING, clock.next())));
      await new Promise((resolve) => setImmediate(resolve));
      const pending = await repo.push.pendingAfter(0, 100);
      expect(pending).toHaveLength(40);
      // The store's timers and clock are faked from here; its commits (setImmediate) are not.
      jest.useFakeTimers({ doNotFake: ["setImmediate", "nextTick", "queueMicrotask"] });
      // A burst's deliveries end, one every 2 ms.
      for (const entry of pending.slice(0, 20)) {
        await repo.push.remove(entry.seq);
        jest.advanceTimersByTime(2);
      }
      expect(await repo.push.count()).toBe(20);
      jest.advanceTimersByTime(95); // 97 ms after the last one: still waiting for a batch
      expect(rows.get()).toBe(40);
      jest.advanceTimersByTime(5); // quiet for 100 ms: deleted (before: only a second after the first)
      expect(rows.get()).toBe(20);
      // Deliveries that never pause for 100 ms (one every 40; an entry may be removed twice): deleted a second after the oldest.
      for (let i = 0; i < 25; i++) {
        await repo.push.remove(pending[20 + (i % 20)]!.seq);
        jest.advanceTimersByTime(i < 24 ? 40 : 39);
      }
      expect(rows.get()).toBe(20); // 999 ms after the oldest
      jest.advanceTimersByTime(2);
      expect(rows.get()).toBe(0);
      expect(await repo.push.count()).toBe(0);
      // A batch of task writes still takes whatever waits, however recent.
      const more = ids.slice(0, 3);
      for (const id of more) answered(repo.now.update(alice, id, 2, statusChange(TaskState.WORKING, clock.next())));
      await new Promise((resolve) => setImmediate(resolve));
      for (const entry of await repo.push.pendingAfter(0, 100)) await repo.push.remove(entry.seq);
      await repo.update(alice, ids[3]!, 2, statusChange(TaskState.WORKING, clock.next()));
      expect(rows.get()).toBe(1);
    } finally {
      jest.useRealTimers();
      reader.close();
      await repo.close();
    }
  });
});
