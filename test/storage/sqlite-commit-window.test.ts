import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import * as grpc from "@grpc/grpc-js";
import { TaskState } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { TaskState as WireState, type Task } from "../../gen/ts-proto/lf/a2a/v1/a2a.js";
import { CHANNELS, type StoreCommit } from "../../src/lifecycle/ports/diagnostics.js";
import type { Agent } from "../../src/lifecycle/ports/agent.js";
import { openSqliteTaskRepository } from "../../src/storage/sqlite/sqlite-task-repository.js";
import { unary } from "../foundation/helpers.js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import { newTask, scopeOf, statusChange, Clock } from "../support/tasks.js";
import { controlledAgent, sendRequest, streamSend } from "../streaming/support.js";
import { ackedOnCommit, answered, committed } from "../support/answered.js";

/**
 * The SQLite store's commit window (A2A_STORE_COMMIT_WINDOW): a commit that follows the last
 * one by less than the window waits until the window has passed, so an agent writing one chunk
 * per event-loop turn shares a commit between many turns. What must hold whatever the window:
 * nothing reaches a client before its commit, a stream gets every chunk in order, an idle store
 * commits at the end of the turn, and a caller reads its own writes.
 */
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "a2a-commit-window-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Counts the store's commits (with at least one write) while `during` runs. */
async function commitsDuring(during: () => Promise<void>): Promise<StoreCommit[]> {
  const commits: StoreCommit[] = [];
  const listener = (message: unknown) => {
    const commit = message as StoreCommit;
    if (commit.store === "sqlite" && commit.writes > 0) commits.push(commit);
  };
  subscribe(CHANNELS.storeCommit, listener);
  try {
    await during();
  } finally {
    unsubscribe(CHANNELS.storeCommit, listener);
  }
  return commits;
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A streamed task of `chunks` appends, one per event-loop turn; what the client got and the commits made meanwhile. */
async function perTurnStream(s: A2ATestServer, ctl: ReturnType<typeof controlledAgent>, chunks: number) {
  const reader = streamSend(s, sendRequest("per-turn"));
  const run = await ctl.nextRun();
  await run.ctx.working();
  await reader.waitFor(2);
  const commits = await commitsDuring(async () => {
    for (let i = 0; i < chunks; i++) {
      await run.ctx.artifact({ artifactId: "out", name: "out", parts: [`c${i} `] }, { append: i > 0, lastChunk: i === chunks - 1 });
      await nextTurn();
    }
  });
  await run.ctx.complete();
  run.finish();
  expect(await reader.ended).toMatchObject({ code: grpc.status.OK });
  const texts = reader.events.flatMap((e) =>
    e.payload?.$case === "artifactUpdate" ? e.payload.value.artifact!.parts.map((p) => (p.content?.$case === "text" ? p.content.value : "?")) : [],
  );
  return { texts, commits, taskId: reader.events[0]?.payload?.$case === "task" ? reader.events[0].payload.value.id : "" };
}

const expected = (n: number) => Array.from({ length: n }, (_, i) => `c${i} `);

test("issue 15 item 5: a per-turn stream of 400 chunks on SQLite with a 5ms commit window arrives complete and in order, in fewer commits than chunks", async () => {
  const ctl = controlledAgent();
  const s = await startA2AServer({ agent: ctl.agent, env: { A2A_STORE: "sqlite", A2A_DATA_DIR: dir, A2A_STORE_COMMIT_WINDOW: "5ms" } });
  try {
    const { texts, commits, taskId } = await perTurnStream(s, ctl, 400);
    expect(texts).toEqual(expected(400));
    expect(commits.length).toBeLessThan(400);
    expect(commits.some((c) => c.writes > 1)).toBe(true);
    // What the stream delivered is what was committed.
    const { response } = await unary(s.client, s.client.getTask, { tenant: "", id: taskId }, s.metadata());
    expect(response!.artifacts[0]!.parts.map((p) => (p.content?.$case === "text" ? p.content.value : "?")).join("")).toBe(expected(400).join(""));
  } finally {
    await s.close();
  }
});

test("issue 15 item 5: A2A_STORE_COMMIT_WINDOW=0 keeps one commit per turn", async () => {
  const ctl = controlledAgent();
  const s = await startA2AServer({ agent: ctl.agent, env: { A2A_STORE: "sqlite", A2A_DATA_DIR: dir, A2A_STORE_COMMIT_WINDOW: "0" } });
  try {
    const { texts, commits } = await perTurnStream(s, ctl, 100);
    expect(texts).toEqual(expected(100));
    expect(commits.length).toBeGreaterThanOrEqual(100);
    expect(commits.every((c) => c.writes === 1)).toBe(true);
  } finally {
    await s.close();
  }
});

test("issue 15 item 5, R-TASK-1: with the commit window, blocking SendMessage answers with its own writes and GetTask right after reads them", async () => {
  const agent: Agent = {
    card: { skills: [{ id: "w", name: "w", description: "writes per turn", tags: ["test"] }] } as Agent["card"],
    async execute(ctx) {
      await ctx.working();
      for (let i = 0; i < 20; i++) {
        await ctx.artifact({ artifactId: "out", parts: [`c${i} `] }, { append: i > 0 });
        await nextTurn();
      }
      await ctx.complete("done");
    },
  };
  const s = await startA2AServer({ agent, env: { A2A_STORE: "sqlite", A2A_DATA_DIR: dir, A2A_STORE_COMMIT_WINDOW: "20ms" } });
  try {
    for (let call = 0; call < 5; call++) {
      const { response, error } = await unary(s.client, s.client.sendMessage, sendRequest("go"), s.metadata());
      expect(error).toBeUndefined();
      const task = response!.payload?.$case === "task" ? response!.payload.value : undefined;
      expect(task?.status?.state).toBe(WireState.TASK_STATE_COMPLETED);
      const text = (t: Task) => t.artifacts[0]!.parts.map((p) => (p.content?.$case === "text" ? p.content.value : "?")).join("");
      expect(text(task!)).toBe(expected(20).join(""));
      const read = await unary(s.client, s.client.getTask, { tenant: "", id: task!.id }, s.metadata());
      expect(read.response?.status?.state).toBe(WireState.TASK_STATE_COMPLETED);
      expect(text(read.response!)).toBe(expected(20).join(""));
    }
  } finally {
    await s.close();
  }
});

describe("the store alone", () => {
  const alice = scopeOf("t1", "alice");
  const clock = new Clock();
  const WINDOW_MS = 400;

  /** Version of a task as another connection (another process) sees it now. */
  const committedVersion = (reader: Database.Database, id: string) =>
    reader.prepare("SELECT version FROM tasks WHERE id = ?").pluck().get(id) as number | undefined;

  test("issue 15 item 5: an idle store commits a single write at the end of its turn; a write right after a commit waits for the window, and is acknowledged only once committed", async () => {
    const file = join(dir, "tasks.db");
    const repo = ackedOnCommit(openSqliteTaskRepository({ file, commitWindowMs: WINDOW_MS }));
    const reader = new Database(file, { readonly: true });
    try {
      const first = newTask({ micros: clock.next(), text: "q" });
      answered(repo.now.create(alice, first));
      await nextTurn(); // idle store: committed at the end of this turn, the window does not hold it
      expect(committedVersion(reader, first.id)).toBe(1);

      const second = newTask({ micros: clock.next(), text: "q" });
      answered(repo.now.create(alice, second));
      const acknowledged = committed(repo);
      let acked = false;
      void acknowledged.then(() => (acked = true));
      await nextTurn();
      expect(committedVersion(reader, second.id)).toBeUndefined(); // within the window: waits
      expect(acked).toBe(false); // nothing acknowledged before its commit
      await acknowledged;
      expect(committedVersion(reader, second.id)).toBe(1);

      // A read of a waiting task commits it at once (reads see every applied write).
      answered(repo.now.update(alice, second.id, 1, statusChange(TaskState.WORKING, clock.next())));
      expect(committedVersion(reader, second.id)).toBe(1);
      expect((await repo.get(alice, second.id))?.version).toBe(2);
      expect(committedVersion(reader, second.id)).toBe(2);

      await new Promise((resolve) => setTimeout(resolve, WINDOW_MS + 50)); // idle again
      answered(repo.now.update(alice, second.id, 2, statusChange(TaskState.COMPLETED, clock.next())));
      await nextTurn();
      expect(committedVersion(reader, second.id)).toBe(3);
    } finally {
      reader.close();
      await repo.close();
    }
  });

  test("issue 15 item 5: close() commits writes still waiting for the window", async () => {
    const file = join(dir, "tasks.db");
    const repo = ackedOnCommit(openSqliteTaskRepository({ file, commitWindowMs: WINDOW_MS }));
    const a = newTask({ micros: clock.next(), text: "q" });
    const b = newTask({ micros: clock.next(), text: "q" });
    await repo.create(alice, a);
    const waiting = repo.create(alice, b);
    await repo.close();
    await waiting;
    const reader = new Database(file, { readonly: true });
    try {
      expect(committedVersion(reader, b.id)).toBe(1);
    } finally {
      reader.close();
    }
  });
});
