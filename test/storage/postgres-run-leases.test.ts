import { TaskState } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { silentLogger } from "../../src/lifecycle/ports/logger.js";
import { TaskNotifications } from "../../src/storage/postgres/notifications.js";
import { openPostgresStore, type PostgresStore } from "../../src/storage/postgres/postgres-store.js";
import { PostgresRunLeases } from "../../src/storage/postgres/run-leases.js";
import { createTestDatabase, type TestDatabase } from "../support/postgres/database.js";
import { Clock, newTask, scopeOf, statusChange } from "../support/tasks.js";

/**
 * Run leases on PostgreSQL, two replicas' stores on one database (no server): who may run a
 * task, how a run hears it was lost, and how a dead replica's tasks are taken over once.
 */
let db: TestDatabase;
let x: PostgresStore;
let y: PostgresStore;
const alice = scopeOf("t1", "alice");
const clock = new Clock();

beforeAll(async () => {
  db = await createTestDatabase("leases");
  [x, y] = await Promise.all([
    openPostgresStore({ url: db.url, poolSize: 2, replicaId: "X", leaseMs: 600 }),
    openPostgresStore({ url: db.url, poolSize: 2, replicaId: "Y", leaseMs: 600 }),
  ]);
});
afterAll(async () => {
  await Promise.all([x.close(), y.close()]);
  await db.drop();
});

async function interruptedOnX(): Promise<string> {
  const task = newTask({ micros: clock.next(), text: "q" });
  await x.repository.create(alice, task); // leased to X
  await x.repository.update(alice, task.id, 1, statusChange(TaskState.WORKING, clock.next()));
  await x.repository.update(alice, task.id, 2, statusChange(TaskState.INPUT_REQUIRED, clock.next(), "more?"));
  return task.id;
}

function lostCalls(): { calls: Array<[string, TaskState | undefined]>; lost: (id: string, state: TaskState | undefined) => void } {
  const calls: Array<[string, TaskState | undefined]> = [];
  return { calls, lost: (id, state) => void calls.push([id, state]) };
}

async function until(check: () => boolean, ms = 3000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("PostgresRunLeases", () => {
  it("an interrupted task is nobody's: of two claims at once exactly one wins, and holds it against others", async () => {
    for (let round = 0; round < 5; round++) {
      const id = await interruptedOnX(); // the INPUT_REQUIRED write dropped X's lease
      const claims = await Promise.all([x.leases.claim(alice, id), y.leases.claim(alice, id)]);
      expect(claims.filter(Boolean)).toHaveLength(1);
      const loser = claims[0] ? y : x;
      expect(await loser.leases.claim(alice, id)).toBe(false);
      expect(await (claims[0] ? x : y).leases.claim(scopeOf("t1", "bob"), id)).toBe(false); // another scope never claims it
    }
  });

  it("a cancel written by another replica reaches the run's replica at once (its notice)", async () => {
    const task = newTask({ micros: clock.next(), text: "q" });
    await x.repository.create(alice, task);
    const { calls, lost } = lostCalls();
    x.leases.hold(task.id, lost);
    await y.repository.update(alice, task.id, 1, statusChange(TaskState.CANCELED, clock.next()));
    await until(() => calls.length > 0);
    expect(calls).toEqual([[task.id, TaskState.CANCELED]]);
  });

  it("R-SEND-10: a notice of the previous run's writes, heard only after the follow-up's claim, does not stop the follow-up's run; a later takeover still does, at once", async () => {
    // The LISTEN connection is not ordered with the pool's: under load X's notices of the writes
    // that ended its run (INPUT_REQUIRED) may reach Y after Y claimed the task for a follow-up.
    // Y's leases here hear only the notices the test hands them, and renew by themselves only
    // every 20 s: whatever they do within the test, a notice made them do.
    const deaf = new TaskNotifications(db.url, silentLogger); // never started
    const leases = new PostgresRunLeases({
      pool: y.pool,
      repository: y.repository,
      notifications: deaf,
      replicaId: "Y",
      leaseMs: 60_000,
      logger: silentLogger,
    });
    try {
      const id = await interruptedOnX();
      expect(await leases.claim(alice, id)).toBe(true);
      const { calls, lost } = lostCalls();
      leases.hold(id, lost);
      for (const [version, state] of [
        [1, TaskState.SUBMITTED],
        [2, TaskState.WORKING],
        [3, TaskState.INPUT_REQUIRED],
      ] as const) {
        leases.notice({ taskId: id, version, state, writer: "X" }); // as the LISTEN connection hands them over, late
      }
      await leases.renew(); // the renewal the late notices started, if any, has ended
      await leases.renew();
      expect(calls).toEqual([]);
      const { rows } = await y.pool.query("SELECT owner FROM a2a_tasks WHERE id = $1", [id]);
      expect(rows[0].owner).toBe("Y");
      // Y's lease really taken over (as after a stall longer than the lease): X's next write stops Y's run.
      await x.pool.query("UPDATE a2a_tasks SET owner = 'X', lease_until = now() + interval '1 minute' WHERE id = $1", [id]);
      await x.repository.update(alice, id, 3, statusChange(TaskState.WORKING, clock.next()));
      leases.notice({ taskId: id, version: 4, state: TaskState.WORKING, writer: "X" });
      await until(() => calls.length > 0);
      expect(calls).toEqual([[id, TaskState.WORKING]]);
    } finally {
      await leases.close();
    }
  });

  it("without notices, the next renewal finds the task settled elsewhere and says so", async () => {
    const deaf = new TaskNotifications(db.url, silentLogger); // never started
    const leases = new PostgresRunLeases({ pool: x.pool, repository: x.repository, notifications: deaf, replicaId: "X", leaseMs: 300, logger: silentLogger });
    try {
      const task = newTask({ micros: clock.next(), text: "q" });
      await x.repository.create(alice, task);
      const { calls, lost } = lostCalls();
      leases.hold(task.id, lost);
      await y.repository.update(alice, task.id, 1, statusChange(TaskState.FAILED, clock.next()));
      await until(() => calls.length > 0);
      expect(calls).toEqual([[task.id, TaskState.FAILED]]);
    } finally {
      await leases.close();
    }
  });

  it("a renewed lease is never taken over; a lease that ran out is taken over by one replica, once", async () => {
    const task = newTask({ micros: clock.next(), text: "q" });
    await x.repository.create(alice, task);
    await x.repository.update(alice, task.id, 1, statusChange(TaskState.WORKING, clock.next()));
    x.leases.hold(task.id, () => {});
    await new Promise((resolve) => setTimeout(resolve, 1000)); // more than the 600 ms lease: X renewed it
    expect((await y.leases.orphans()).map((o) => o.task.task.id)).not.toContain(task.id);
    x.leases.release(task.id, TaskState.WORKING); // X stops renewing (a dead replica does the same)
    await x.pool.query("UPDATE a2a_tasks SET owner = 'X', lease_until = now() - interval '1 second' WHERE id = $1", [task.id]);
    const [onX, onY] = await Promise.all([x.leases.orphans(), y.leases.orphans()]);
    const takers = [onX, onY].filter((list) => list.some((o) => o.task.task.id === task.id));
    expect(takers).toHaveLength(1);
    const taken = takers[0]!.find((o) => o.task.task.id === task.id)!;
    expect(taken.scope).toEqual(alice);
    expect(taken.task.version).toBe(2);
    expect(taken.task.task.status?.state).toBe(TaskState.WORKING);
    expect([...(await x.leases.orphans()), ...(await y.leases.orphans())].map((o) => o.task.task.id)).not.toContain(task.id);
  });
});
