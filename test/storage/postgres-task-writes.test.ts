import type pg from "pg";
import { TaskState } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { encodeMessage } from "../../src/codec/task-encoder.js";
import { DuplicateTaskError, VersionConflictError } from "../../src/lifecycle/ports/task-repository.js";
import { EVENT_KIND } from "../../src/storage/postgres/event-rows.js";
import { openPostgresStore, type PostgresStore } from "../../src/storage/postgres/postgres-store.js";
import { TaskWrites, type TaskWrite } from "../../src/storage/postgres/task-writes.js";
import { createTestDatabase, type TestDatabase } from "../support/postgres/database.js";
import { Clock, message, newTask, scopeOf, statusChange } from "../support/tasks.js";
import { config } from "./push-config-store.contract.js";

/**
 * #17: task writes made together go to PostgreSQL in one statement (src/storage/postgres/task-writes.ts),
 * and each keeps what it has alone: its own compare-and-set on the version, its own event row,
 * notice and outbox rows, and its own error. Two replicas' stores on one database, no server.
 */
let db: TestDatabase;
let x: PostgresStore;
let y: PostgresStore;
const alice = scopeOf("t1", "alice");
const clock = new Clock();

beforeAll(async () => {
  db = await createTestDatabase("writes");
  // Pool of 3: one write statement in flight at most, so writes made meanwhile wait and go together.
  [x, y] = await Promise.all([
    openPostgresStore({ url: db.url, poolSize: 3, replicaId: "X" }),
    openPostgresStore({ url: db.url, poolSize: 3, replicaId: "Y" }),
  ]);
});
afterAll(async () => {
  await Promise.all([x.close(), y.close()]);
  await db.drop();
});

/** Counts the statements `pool` runs by name while `work` runs. */
async function countingStatements<T>(pool: pg.Pool, work: () => Promise<T>): Promise<{ result: T; names: string[] }> {
  const names: string[] = [];
  const query = pool.query.bind(pool);
  pool.query = ((config: unknown, ...rest: unknown[]) => {
    names.push(typeof config === "object" && config !== null && "name" in config ? String(config.name) : String(config));
    return (query as (...args: unknown[]) => unknown)(config, ...rest);
  }) as typeof pool.query;
  try {
    return { result: await work(), names };
  } finally {
    pool.query = query;
  }
}

describe("PostgreSQL task writes made together (#17)", () => {
  it("go in one statement; a write whose version another replica took meanwhile is refused alone, the others are written with their events and outbox rows", async () => {
    const tasks = Array.from({ length: 8 }, () => newTask({ micros: clock.next(), text: "q" }));
    for (const t of tasks) await x.repository.create(alice, t);
    const [, stale, , withPush] = tasks;
    await y.repository.update(alice, stale!.id, 1, statusChange(TaskState.WORKING, clock.next(), "Y was first")); // X still knows version 1
    await x.repository.push.put(alice, config(withPush!.id, "c1"), { maxPerTask: 5 });
    const { result, names } = await countingStatements(x.pool, () =>
      Promise.allSettled(tasks.map((t) => x.repository.update(alice, t.id, 1, statusChange(TaskState.WORKING, clock.next(), `X ${t.id}`)))),
    );
    expect(names.filter((n) => n === "a2a_update_many")).toHaveLength(1);
    expect(names).not.toContain("a2a_update");
    result.forEach((outcome, i) => {
      if (tasks[i] === stale) {
        expect(outcome.status).toBe("rejected");
        expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(VersionConflictError);
        expect((outcome as PromiseRejectedResult).reason.actual).toBe(2);
      } else {
        expect(outcome).toEqual({ status: "fulfilled", value: 2 });
      }
    });
    for (const t of tasks) {
      const stored = await y.repository.get(alice, t.id);
      expect(stored?.version).toBe(2);
      const last = stored!.task.history.at(-1)!;
      expect(last.parts[0]?.content).toEqual({ case: "text", value: t === stale ? "Y was first" : `X ${t.id}` });
    }
    const events = await x.pool.query<{ task_id: string; n: string }>(
      "SELECT task_id, count(*) AS n FROM a2a_task_events WHERE task_id = ANY($1) AND version = 2 GROUP BY task_id",
      [tasks.map((t) => t.id)],
    );
    expect(events.rows).toHaveLength(8); // one version-2 event per task: the stale write added none
    for (const row of events.rows) expect(row.n).toBe("1");
    const outbox = await x.pool.query<{ task_id: string; kind: number }>("SELECT task_id, kind FROM a2a_push_outbox WHERE task_id = ANY($1)", [
      tasks.map((t) => t.id),
    ]);
    expect(outbox.rows).toEqual([{ task_id: withPush!.id, kind: EVENT_KIND.status }]);
  });

  it("a write that fails fails alone: the statement is sent again write by write, and the others are written", async () => {
    const tasks = Array.from({ length: 3 }, () => newTask({ micros: clock.next(), text: "q" }));
    for (const t of tasks) await x.repository.create(alice, t);
    const writes = new TaskWrites({ pool: x.pool, replicaId: "X", inFlight: 1 });
    const historyWrite = (taskId: string, firstSeq: number): TaskWrite => {
      const body = encodeMessage(message("more", undefined, { taskId }));
      return {
        taskId,
        expectedVersion: 1,
        state: TaskState.SUBMITTED,
        statusMicros: clock.next(),
        historyLen: firstSeq + 1,
        core: null,
        setArtifacts: false,
        artifacts: null,
        settled: false,
        firstSeq,
        messages: [body],
        eventKind: EVENT_KIND.history,
        eventBody: body,
        notice: `2 ${TaskState.SUBMITTED} X ${taskId}`,
        owes: false,
        traceContext: null,
      };
    };
    // The middle one adds a history row at seq 0, which its task has: a unique violation.
    const { result, names } = await countingStatements(x.pool, () =>
      Promise.allSettled(tasks.map((t, i) => writes.write(historyWrite(t.id, i === 1 ? 0 : 1)))),
    );
    expect(names.filter((n) => n === "a2a_update_many")).toHaveLength(1);
    expect(names.filter((n) => n === "a2a_update")).toHaveLength(3);
    expect(result[0]).toEqual({ status: "fulfilled", value: { written: true, owed: 0 } });
    expect(result[1]!.status).toBe("rejected");
    expect(((result[1] as PromiseRejectedResult).reason as { code?: string }).code).toBe("23505");
    expect(result[2]).toEqual({ status: "fulfilled", value: { written: true, owed: 0 } });
    const versions = await x.pool.query<{ id: string; version: number }>("SELECT id, version FROM a2a_tasks WHERE id = ANY($1)", [tasks.map((t) => t.id)]);
    const byId = new Map(versions.rows.map((r) => [r.id, r.version]));
    expect(tasks.map((t) => byId.get(t.id))).toEqual([2, 1, 2]);
  });
});

describe("PostgreSQL task creates made together (#17)", () => {
  async function storedRows(ids: string[]) {
    const { rows } = await y.pool.query<{ id: string; owner: string; leased: boolean; events: string; history: string }>(
      `SELECT t.id, t.owner, t.lease_until > now() AS leased,
         (SELECT count(*) FROM a2a_task_events e WHERE e.task_id = t.id AND e.version = 1 AND e.kind = ${EVENT_KIND.created}) AS events,
         (SELECT count(*) FROM a2a_history h WHERE h.task_id = t.id) AS history
       FROM a2a_tasks t WHERE t.id = ANY($1)`,
      [ids],
    );
    return new Map(rows.map((r) => [r.id, r]));
  }

  it("go in one statement, each with its row, history, created event and a lease to this replica; another replica reads them whole", async () => {
    const tasks = Array.from({ length: 6 }, (_, i) => newTask({ micros: clock.next(), text: `first ${i}` }));
    const { result, names } = await countingStatements(x.pool, () => Promise.all(tasks.map((t) => x.repository.create(alice, t))));
    expect(names.filter((n) => n === "a2a_create_many")).toHaveLength(1);
    expect(names).not.toContain("a2a_create");
    expect(result.map((r) => r.version)).toEqual([1, 1, 1, 1, 1, 1]);
    const rows = await storedRows(tasks.map((t) => t.id));
    tasks.forEach((t) => expect(rows.get(t.id)).toEqual({ id: t.id, owner: "X", leased: true, events: "1", history: "1" }));
    for (const [i, t] of tasks.entries()) {
      const stored = await y.repository.get(alice, t.id);
      expect(stored?.task.contextId).toBe(t.contextId);
      expect(stored?.task.history[0]?.parts[0]?.content).toEqual({ case: "text", value: `first ${i}` });
    }
    // X goes on writing them from what it remembers of its creates.
    await Promise.all(tasks.map((t) => x.repository.update(alice, t.id, 1, statusChange(TaskState.WORKING, clock.next()))));
    expect((await y.repository.get(alice, tasks[0]!.id))?.version).toBe(2);
  });

  it("a create whose id is taken fails alone with DuplicateTaskError (the statement is sent again create by create); the others are stored", async () => {
    const taken = newTask({ micros: clock.next(), text: "already here" });
    await y.repository.create(alice, taken);
    const tasks = [
      newTask({ micros: clock.next(), text: "a" }),
      newTask({ id: taken.id, micros: clock.next(), text: "again" }),
      newTask({ micros: clock.next(), text: "c" }),
    ];
    const { result, names } = await countingStatements(x.pool, () => Promise.allSettled(tasks.map((t) => x.repository.create(alice, t))));
    expect(names.filter((n) => n === "a2a_create_many")).toHaveLength(1);
    expect(names.filter((n) => n === "a2a_create")).toHaveLength(3);
    expect(result[0]).toMatchObject({ status: "fulfilled", value: { version: 1 } });
    expect(result[1]!.status).toBe("rejected");
    expect((result[1] as PromiseRejectedResult).reason).toBeInstanceOf(DuplicateTaskError);
    expect(result[2]).toMatchObject({ status: "fulfilled", value: { version: 1 } });
    const rows = await storedRows(tasks.map((t) => t.id));
    expect(rows.get(taken.id)?.owner).toBe("Y"); // the taken one is untouched
    expect((await y.repository.get(alice, taken.id))?.task.history[0]?.parts[0]?.content).toEqual({ case: "text", value: "already here" });
    for (const t of [tasks[0]!, tasks[2]!]) expect(rows.get(t.id)).toEqual({ id: t.id, owner: "X", leased: true, events: "1", history: "1" });
  });
});
