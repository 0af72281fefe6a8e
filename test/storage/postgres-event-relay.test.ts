import type pg from "pg";
import { TaskState } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { TaskEvent } from "../../src/events/task-event.js";
import { silentLogger } from "../../src/lifecycle/ports/logger.js";
import { PostgresEventRelay } from "../../src/storage/postgres/event-relay.js";
import { TaskNotifications, type NoticeListener } from "../../src/storage/postgres/notifications.js";
import {
  INLINE_EVENT_BYTES,
  copiedRow,
  isNoticeOf,
  noticePayload,
  parseNotice,
  pushNoticePayload,
  type HeardNotice,
  type TaskNotice,
} from "../../src/storage/postgres/task-notice.js";
import { openPostgresStore, type PostgresStore } from "../../src/storage/postgres/postgres-store.js";
import type { TaskChange } from "../../src/lifecycle/ports/task-repository.js";
import { createTestDatabase, type TestDatabase } from "../support/postgres/database.js";
import { Clock, artifactChange, newTask, scopeOf, statusChange, textArtifact } from "../support/tasks.js";

/**
 * The PostgreSQL event relay, two replicas' stores on one database (no server): a stream on
 * replica Y gets the events replica X wrote, in version order, once each, mixed with Y's own;
 * the table is the source (a relay that never hears a notice still gets every event); a notice's
 * copy of a small row only saves the read when it is the very next version.
 */
let db: TestDatabase;
let x: PostgresStore;
let y: PostgresStore;
const alice = scopeOf("t1", "alice");
const clock = new Clock();

beforeAll(async () => {
  db = await createTestDatabase("relay");
  [x, y] = await Promise.all([
    openPostgresStore({ url: db.url, poolSize: 2, replicaId: "X" }),
    openPostgresStore({ url: db.url, poolSize: 2, replicaId: "Y" }),
  ]);
});
afterAll(async () => {
  await Promise.all([x.close(), y.close()]);
  await db.drop();
});

function collect(relay: PostgresEventRelay, taskId: string): { versions: number[]; events: TaskEvent[]; until(n: number): Promise<void> } {
  const events: TaskEvent[] = [];
  const versions: number[] = [];
  const waiters: Array<() => void> = [];
  relay.subscribe(taskId, (event) => {
    events.push(event);
    versions.push(event.version);
    waiters.splice(0).forEach((w) => w());
  });
  return {
    versions,
    events,
    async until(n) {
      const deadline = Date.now() + 5000;
      while (versions.length < n) {
        if (Date.now() > deadline) throw new Error(`got versions ${versions.join(",")}, waited for ${n}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 50);
        });
      }
    },
  };
}

/** A write as a replica's TaskWriter makes it: the repository update, then (on the writing replica) the publish. */
async function write(store: PostgresStore, taskId: string, version: number, change: TaskChange, contextId: string): Promise<TaskEvent> {
  const v = await store.repository.update(alice, taskId, version, change);
  expect(v).toBe(version + 1);
  if (change.kind === "status") return { kind: "status", version: v, taskId, contextId, status: change.status };
  if (change.kind === "artifact")
    return { kind: "artifact", version: v, taskId, contextId, artifact: change.artifact, append: change.append, lastChunk: change.lastChunk };
  return { kind: "history", version: v, taskId, contextId, message: change.message };
}

describe("PostgresEventRelay", () => {
  it("delivers another replica's writes as events, in version order, each once, with their content", async () => {
    const task = newTask({ micros: clock.next(), text: "q" });
    const onY = collect(y.relay, task.id);
    await x.repository.create(alice, task);
    await write(x, task.id, 1, statusChange(TaskState.WORKING, clock.next(), "working"), task.contextId);
    await write(x, task.id, 2, artifactChange(textArtifact("a", "one"), true), task.contextId);
    await write(x, task.id, 3, statusChange(TaskState.COMPLETED, clock.next()), task.contextId);
    await onY.until(4);
    expect(onY.versions).toEqual([1, 2, 3, 4]);
    expect(onY.events.map((e) => e.kind)).toEqual(["created", "status", "artifact", "status"]);
    const artifact = onY.events[2]!;
    expect(artifact.kind === "artifact" && [artifact.append, artifact.artifact.parts[0]!.content.value]).toEqual([true, "one"]);
    const done = onY.events[3]!;
    expect(done.kind === "status" && done.status.state).toBe(TaskState.COMPLETED);
    expect(done.contextId).toBe(task.contextId);
  });

  it("a local write published before an earlier remote one was read waits for it: order and no duplicate hold", async () => {
    const task = newTask({ micros: clock.next(), text: "q" });
    await x.repository.create(alice, task);
    const onY = collect(y.relay, task.id);
    for (let version = 1; version < 30; version += 2) {
      await write(x, task.id, version, artifactChange(textArtifact("a", `x${version}`), true), task.contextId); // remote: read on a notice
      const local = await write(y, task.id, version + 1, artifactChange(textArtifact("a", `y${version}`), true), task.contextId);
      y.relay.publish(local); // at once, probably before X's notice is read
    }
    await onY.until(31);
    await new Promise((resolve) => setTimeout(resolve, 200)); // nothing more arrives (no duplicate from the table)
    expect(onY.versions).toEqual(Array.from({ length: 31 }, (_, i) => i + 1)); // created, then 30 writes
  });

  it("NOTIFY is never the only carrier: a relay that never hears a notice still delivers every event from the table (read every pollMs)", async () => {
    const deaf = new TaskNotifications(db.url, silentLogger); // never started: no LISTEN
    const relay = new PostgresEventRelay({ pool: y.pool, notifications: deaf, replicaId: "deaf", logger: silentLogger, pollMs: 100 });
    try {
      const task = newTask({ micros: clock.next(), text: "q" });
      const heard = collect(relay, task.id);
      await x.repository.create(alice, task);
      await write(x, task.id, 1, statusChange(TaskState.WORKING, clock.next()), task.contextId);
      await write(x, task.id, 2, statusChange(TaskState.INPUT_REQUIRED, clock.next(), "more?"), task.contextId);
      await heard.until(3);
      expect(heard.versions).toEqual([1, 2, 3]);
    } finally {
      relay.close();
    }
  });

  it("a task nobody watches here costs no read; unsubscribing forgets its cursor", async () => {
    const task = newTask({ micros: clock.next(), text: "q" });
    const stop = y.relay.subscribe(task.id, () => {});
    expect(y.relay.watchedCount).toBeGreaterThan(0);
    const before = y.relay.watchedCount;
    stop();
    expect(y.relay.watchedCount).toBe(before - 1);
    expect(y.relay.hasListeners(task.id)).toBe(false);
  });

  it("events older than the keep time are pruned; a stream's first read of such a task starts at what is left", async () => {
    const task = newTask({ micros: clock.next(), text: "q" });
    await x.repository.create(alice, task);
    await write(x, task.id, 1, statusChange(TaskState.WORKING, clock.next()), task.contextId);
    await x.pool.query("UPDATE a2a_task_events SET written_at = now() - interval '1 hour' WHERE task_id = $1", [task.id]);
    expect(await y.relay.prune()).toBeGreaterThanOrEqual(2);
    const onY = collect(y.relay, task.id);
    await write(x, task.id, 2, statusChange(TaskState.COMPLETED, clock.next()), task.contextId);
    await onY.until(1);
    expect(onY.versions).toEqual([3]);
  });

  it("a small event rides in its notice and is delivered without a read; a large one, or one after a lost notice, is read from the table", async () => {
    let reads = 0;
    const counted = {
      query: (...args: unknown[]) => (
        (args[0] as { name?: string }).name === "a2a_relay_read" && reads++, (y.pool.query as (...a: unknown[]) => unknown)(...args)
      ),
    };
    let heard: NoticeListener | undefined;
    const notices: HeardNotice[] = [];
    const live = new TaskNotifications(db.url, silentLogger);
    // The real notices, passed on by the test so that it can also drop one.
    live.add({ notice: (n) => notices.push(n), resumed: () => {} });
    await live.start();
    const relay = new PostgresEventRelay({
      pool: counted as unknown as pg.Pool,
      notifications: { add: (l: NoticeListener) => ((heard = l), () => {}) } as unknown as TaskNotifications,
      replicaId: "R",
      logger: silentLogger,
      pollMs: 60_000,
    });
    const pass = async (version: number) => {
      const deadline = Date.now() + 5000;
      for (
        let n = notices.find((x) => x.taskId === task.id && x.version === version);
        ;
        n = notices.find((x) => x.taskId === task.id && x.version === version)
      ) {
        if (n !== undefined) return heard!.notice(n);
        if (Date.now() > deadline) throw new Error(`no notice of version ${version}`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    };
    const task = newTask({ micros: clock.next(), text: "q" });
    try {
      const got = collect(relay, task.id);
      await x.repository.create(alice, task);
      await write(x, task.id, 1, statusChange(TaskState.WORKING, clock.next()), task.contextId);
      await write(x, task.id, 2, artifactChange(textArtifact("a", "small")), task.contextId);
      for (const v of [1, 2, 3]) await pass(v);
      await got.until(3);
      expect(reads).toBe(0);
      expect(notices.find((n) => n.taskId === task.id && n.version === 3)?.copy).toBeDefined();
      const big = "b".repeat(INLINE_EVENT_BYTES + 1);
      await write(x, task.id, 3, artifactChange(textArtifact("a", big), true), task.contextId);
      await pass(4);
      await got.until(4);
      expect(notices.find((n) => n.taskId === task.id && n.version === 4)?.copy).toBeUndefined();
      expect(reads).toBe(1);
      const fourth = got.events[3]!;
      expect(fourth.kind === "artifact" && fourth.artifact.parts[0]!.content.value).toBe(big);
      // Version 5's notice is lost; 6's copy is not the next version: both are read, in order.
      await write(x, task.id, 4, artifactChange(textArtifact("a", "five"), true), task.contextId);
      await write(x, task.id, 5, statusChange(TaskState.COMPLETED, clock.next()), task.contextId);
      await pass(6);
      await got.until(6);
      expect(got.versions).toEqual([1, 2, 3, 4, 5, 6]);
      expect(reads).toBe(2);
    } finally {
      relay.close();
      await live.close();
    }
  });
});

describe("task notices", () => {
  const row = { kind: 3, body: Buffer.from([0, 1, 2, 250, 255]) };

  it("carry a copy of a small event row, and none of a large one; a task id with spaces survives", () => {
    const notice: TaskNotice = { taskId: "a task id", version: 7, state: TaskState.WORKING, writer: "replica-1", event: row };
    const heard = parseNotice(noticePayload(notice))!;
    expect({ ...heard, copy: undefined }).toEqual({ taskId: "a task id", version: 7, state: TaskState.WORKING, writer: "replica-1", copy: undefined });
    expect(copiedRow(heard)).toEqual({ kind: 3, body: Buffer.from(row.body) });
    const large = { ...notice, event: { kind: 3, body: Buffer.alloc(INLINE_EVENT_BYTES + 1) } };
    expect(parseNotice(noticePayload(large))).toEqual({ taskId: "a task id", version: 7, state: TaskState.WORKING, writer: "replica-1" });
    expect(noticePayload({ ...notice, event: { kind: 3, body: Buffer.alloc(INLINE_EVENT_BYTES) } }).length).toBeLessThan(8000 - 200);
  });

  it("a replica of the previous release (four fields) parses a notice with a copy: right task and version, another writer", () => {
    const previous = (payload: string) => {
      const m = /^(\d+) (\d+) (\S+) (.+)$/s.exec(payload)!;
      return { version: Number(m[1]), state: Number(m[2]), writer: m[3], taskId: m[4] };
    };
    const parsed = previous(noticePayload({ taskId: "t 1", version: 2, state: TaskState.WORKING, writer: "X", event: row }));
    expect(parsed).toMatchObject({ version: 2, state: TaskState.WORKING, taskId: "t 1" });
    expect(parsed.writer).not.toBe("Y");
    // And this release parses the previous release's notices.
    expect(parseNotice("2 2 X t 1")).toEqual({ version: 2, state: TaskState.WORKING, writer: "X", taskId: "t 1" });
  });

  it("a replica's own notices are recognised unparsed (and dropped), never another replica's, whose name only starts the same", () => {
    const task = (writer: string, event?: typeof row) => noticePayload({ taskId: "X 1", version: 3, state: TaskState.WORKING, writer, event });
    expect(isNoticeOf(task("X"), "X")).toBe(true);
    expect(isNoticeOf(task("X", row), "X")).toBe(true);
    expect(isNoticeOf(pushNoticePayload({ added: 2, writer: "X" }), "X")).toBe(true);
    for (const other of ["XY", "Y", "YX"]) {
      expect(isNoticeOf(task(other), "X")).toBe(false);
      expect(isNoticeOf(task(other, row), "X")).toBe(false);
      expect(isNoticeOf(pushNoticePayload({ added: 2, writer: other }), "X")).toBe(false);
    }
    expect(isNoticeOf("push 2 X", "2 X")).toBe(false);
  });
});
