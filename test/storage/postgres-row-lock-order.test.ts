import pg from "pg";
import { TaskState } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { silentLogger, type CoreLogger } from "../../src/lifecycle/ports/logger.js";
import { TaskNotifications } from "../../src/storage/postgres/notifications.js";
import { openPostgresStore, type PostgresStore } from "../../src/storage/postgres/postgres-store.js";
import { PostgresRunLeases } from "../../src/storage/postgres/run-leases.js";
import { createTestDatabase, testPostgresUrl, type TestDatabase } from "../support/postgres/database.js";
import { Clock, newTask, scopeOf, statusChange } from "../support/tasks.js";

/**
 * #17 (a defect seen under load): the statements that lock several task rows at once, lease
 * renewal and a batch of task writes, lock them in one order (by id), so they never deadlock
 * (SQLSTATE 40P01). Before, each locked rows in the order its plan met them: the batch in the
 * order of its sorted ids, the renewal in the heap's. Here the rows are stored in the reverse of
 * their ids' order, and renewals race batched writes of the same tasks, with a short
 * deadlock_timeout so that PostgreSQL reports a deadlock at once instead of after a second.
 */
const TASKS = 48;
const RENEWERS = 4;
const RUN_MS = 2000;
/** On a loaded machine the race goes on past RUN_MS until both sides ran often enough, up to this. */
const MAX_RUN_MS = 20_000;
const MIN_RENEWALS = 20;
const MIN_BATCHES = 5;

let db: TestDatabase;
let store: PostgresStore;
const alice = scopeOf("t1", "alice");
const clock = new Clock();

beforeAll(async () => {
  db = await createTestDatabase("lockorder");
  const admin = new pg.Client({ connectionString: testPostgresUrl() });
  await admin.connect();
  try {
    await admin.query(`ALTER DATABASE ${new URL(db.url).pathname.slice(1)} SET deadlock_timeout = '10ms'`);
  } finally {
    await admin.end();
  }
  // Pool of 9: three write statements in flight at most (a third of the pool).
  store = await openPostgresStore({ url: db.url, poolSize: 9, replicaId: "X", leaseMs: 60_000 });
});
afterAll(async () => {
  await store.close();
  await db.drop();
});

/** Records the SQLSTATE of every statement `pool` runs that fails (the store re-sends a failed batch write by write, hiding it). */
function failuresOf(pool: pg.Pool, codes: string[]): void {
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  pool.query = ((...args: unknown[]) => {
    const result = query(...args);
    if (result instanceof Promise) result.catch((error: { code?: string }) => void codes.push(error.code ?? String(error)));
    return result;
  }) as typeof pool.query;
}

/** A renewer's warnings carry the statement's error: its SQLSTATE is recorded. */
function recordingLogger(codes: string[]): CoreLogger {
  return {
    ...silentLogger,
    warn(fields: object) {
      codes.push((fields as { err?: { code?: string } }).err?.code ?? "no code");
    },
  };
}

describe("PostgreSQL row lock order (#17)", () => {
  it("lease renewals racing batched task writes over the same rows never deadlock (no SQLSTATE 40P01)", async () => {
    // Created one by one from the highest id down: the heap holds the rows in the reverse of id order.
    const ids = Array.from({ length: TASKS }, (_, i) => `lock-${String(i).padStart(3, "0")}`);
    const versions = new Map<string, number>();
    for (const id of [...ids].reverse()) {
      await store.repository.create(alice, newTask({ id, micros: clock.next() }));
      versions.set(id, 1);
    }

    const failures: string[] = [];
    failuresOf(store.pool, failures);
    const notifications = new TaskNotifications(db.url, silentLogger); // never started: the renewers only register with it
    const pools = Array.from({ length: RENEWERS }, () => new pg.Pool({ connectionString: db.url, max: 1 }));
    const renewers = pools.map((pool) => {
      failuresOf(pool, failures);
      const leases = new PostgresRunLeases({
        pool,
        repository: store.repository,
        notifications,
        replicaId: "X",
        leaseMs: 60_000,
        logger: recordingLogger(failures),
      });
      for (const id of ids) leases.hold(id, () => failures.push(`lost ${id}`));
      return leases;
    });

    let renewals = 0;
    let batches = 0;
    const started = Date.now();
    const racing = () => {
      const ran = Date.now() - started;
      return ran < RUN_MS || (ran < MAX_RUN_MS && (renewals <= MIN_RENEWALS || batches <= MIN_BATCHES));
    };
    try {
      const renewing = renewers.map(async (leases) => {
        while (racing()) {
          await leases.renew();
          renewals++;
        }
      });
      // Each round writes every task in one turn, so the store sends them in batched statements.
      const writing = (async () => {
        while (racing()) {
          await Promise.all(
            ids.map(async (id) => {
              versions.set(id, await store.repository.update(alice, id, versions.get(id)!, statusChange(TaskState.WORKING, clock.next())));
            }),
          );
          batches++;
        }
      })();
      await Promise.all([...renewing, writing]);
    } finally {
      await Promise.all(renewers.map((leases) => leases.close()));
      await Promise.all(pools.map((pool) => pool.end()));
    }

    expect(failures.filter((code) => code === "40P01")).toEqual([]);
    expect(failures).toEqual([]);
    // It raced for real: both sides ran many times, and every write landed.
    expect(renewals).toBeGreaterThan(MIN_RENEWALS);
    expect(batches).toBeGreaterThan(MIN_BATCHES);
    const { rows } = await store.pool.query<{ id: string; version: number; owner: string }>("SELECT id, version, owner FROM a2a_tasks WHERE id = ANY($1)", [
      ids,
    ]);
    expect(new Map(rows.map((r) => [r.id, r.version]))).toEqual(versions);
    for (const row of rows) expect(row.owner).toBe("X");
  }, 45_000);
});
