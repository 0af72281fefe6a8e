import { fromBinary, toBinary } from "@bufbuild/protobuf";
import pg from "pg";
import { StreamResponseSchema, TaskPushNotificationConfigSchema, TaskState } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { pushEventOf, pushSnapshotOf } from "../../src/storage/push-event.js";
import { EVENT_KIND, changeEventRow } from "../../src/storage/postgres/event-rows.js";
import { openPostgresStore, type PostgresStore } from "../../src/storage/postgres/postgres-store.js";
import { pushEventOfRow } from "../../src/storage/postgres/push-events.js";
import { PostgresPushStore } from "../../src/storage/postgres/push-store.js";
import { PushService } from "../../src/push/push-service.js";
import type { WebhookRequest } from "../../src/push/webhook-sender.js";
import { silentLogger } from "../../src/lifecycle/ports/logger.js";
import { encodeTask } from "../../src/codec/task-encoder.js";
import { createTestDatabase, type TestDatabase } from "../support/postgres/database.js";
import { Clock, artifactChange, newTask, scopeOf, statusChange, textArtifact } from "../support/tasks.js";
import { config, describePushStoreContract } from "./push-config-store.contract.js";

/**
 * Push configs and the outbox on PostgreSQL: the shared contract (as on memory and SQLite), then
 * what only a store shared by replicas has: lanes claimed by one replica at a time, claims that
 * expire, and a config put ordered with the task's concurrent writes.
 */
let db: TestDatabase;
let store: PostgresStore;
const LEASE_MS = 600;

beforeAll(async () => {
  db = await createTestDatabase("push");
  store = await openPostgresStore({ url: db.url, poolSize: 4, leaseMs: LEASE_MS });
});
afterAll(async () => {
  await store.close();
  await db.drop();
});

const empty = () => store.pool.query("TRUNCATE a2a_tasks CASCADE");

describePushStoreContract("PostgreSQL store", async () => {
  await empty();
  const { repository } = store;
  return { repo: repository, configs: repository.push, outbox: repository.push, cleanup: async () => {} };
});

describe("PostgreSQL push store: replicas", () => {
  const alice = scopeOf("t", "alice");
  const limits = { maxPerTask: 5 };
  const clock = new Clock();
  let other: PostgresStore;
  beforeEach(async () => {
    await empty();
    other = await openPostgresStore({ url: db.url, poolSize: 2, leaseMs: LEASE_MS });
  });
  afterEach(async () => {
    await other.close();
  });

  async function taskWithEvents(configIds: string[], events: number) {
    const t = (await store.repository.create(alice, newTask({ micros: clock.next(), text: "hi" }))).task;
    for (const id of configIds) await store.repository.push.put(alice, config(t.id, id), limits);
    for (let v = 1; v <= events; v++) await store.repository.update(alice, t.id, v, statusChange(TaskState.WORKING, clock.next()));
    return t;
  }

  test("the webhook event of an outbox row is byte for byte the StreamResponse the other stores keep", () => {
    const t = newTask({ micros: clock.next(), text: "hi" });
    const status = statusChange(TaskState.WORKING, clock.next());
    const artifact = artifactChange(textArtifact("a1", "x"));
    for (const change of [status, artifact]) {
      const row = changeEventRow(change, t.id, t.contextId);
      expect(Buffer.from(pushEventOfRow(row.kind, row.body))).toEqual(Buffer.from(pushEventOf(t.id, t.contextId, change)!));
    }
    expect(Buffer.from(pushEventOfRow(EVENT_KIND.created, encodeTask(t)))).toEqual(Buffer.from(pushSnapshotOf(t)));
  });

  test("A-29 across replicas: a lane claimed by one replica is not given to another until its holder finds nothing more", async () => {
    const t = await taskWithEvents(["c1", "c2"], 2);
    const a = store.repository.push;
    const b = other.repository.push;
    const mine = await a.claimLanes(1);
    expect(mine.map((e) => e.configId)).toEqual(["c1"]); // oldest head first
    const theirs = await b.claimLanes(10);
    expect(theirs.map((e) => e.configId)).toEqual(["c2"]);
    expect(await a.claimLanes(10)).toEqual([]);
    expect(await b.claimLanes(10)).toEqual([]);
    // The holder goes on down its lane; the other replica cannot step in.
    expect((await b.firstOf(t.id, "c1", mine[0]!.seq))?.seq).toBeUndefined();
    await a.remove(mine[0]!.seq);
    const next = await a.firstOf(t.id, "c1", mine[0]!.seq);
    expect(next?.seq).toBeGreaterThan(mine[0]!.seq);
    await a.remove(next!.seq);
    expect(await a.firstOf(t.id, "c1", next!.seq)).toBeUndefined(); // nothing more: the claim ends
    // A later event of that lane may go to either replica, once.
    await store.repository.update(alice, t.id, 3, statusChange(TaskState.COMPLETED, clock.next()));
    const claimed = [...(await b.claimLanes(10)), ...(await a.claimLanes(10))];
    expect(claimed.map((e) => e.configId)).toEqual(["c1"]);
  });

  test("A-29 across replicas: claims made at once by two replicas never share a lane", async () => {
    for (let i = 0; i < 6; i++) await taskWithEvents(["c1", "c2"], 1);
    const [x, y] = await Promise.all([store.repository.push.claimLanes(100), other.repository.push.claimLanes(100)]);
    const lanes = [...x!, ...y!].map((e) => `${e.taskId}/${e.configId}`);
    expect(lanes).toHaveLength(12);
    expect(new Set(lanes).size).toBe(12);
  });

  test("a replica that stops renewing its claims (it died) blocks its lanes for one lease, then another takes them", async () => {
    const t = await taskWithEvents(["c1"], 1);
    // A replica that claims and then dies: never started (so never renews), never closed (never releases).
    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    const held = await new PostgresPushStore({ pool, replicaId: "dead-replica", leaseMs: LEASE_MS }).claimLanes(10);
    await pool.end();
    expect(held).toHaveLength(1);
    const claimedAt = Date.now();
    expect(await other.repository.push.claimLanes(10)).toEqual([]);
    let taken: Awaited<ReturnType<typeof other.repository.push.claimLanes>> = [];
    while (taken.length === 0) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      taken = await other.repository.push.claimLanes(10);
    }
    expect(Date.now() - claimedAt).toBeGreaterThanOrEqual(LEASE_MS - 150);
    expect(taken.map((e) => [e.taskId, e.seq])).toEqual([[t.id, held[0]!.seq]]);
  });

  test("a replica renews its claims while it holds them, and gives them up when it closes", async () => {
    await taskWithEvents(["c1"], 1);
    const holder = await openPostgresStore({ url: db.url, poolSize: 1, leaseMs: LEASE_MS });
    try {
      expect(await holder.repository.push.claimLanes(10)).toHaveLength(1);
      await new Promise((resolve) => setTimeout(resolve, LEASE_MS * 2));
      expect(await other.repository.push.claimLanes(10)).toEqual([]); // renewed meanwhile
    } finally {
      await holder.close();
    }
    expect(await other.repository.push.claimLanes(10)).toHaveLength(1); // released at close: at once
  });

  test("A-29 across replicas: two push services on one database deliver every entry once, in order per (task, config), while tasks are written on both", async () => {
    const sent: Array<{ replica: string; lane: string; seq: number }> = [];
    const serviceOn = (replica: string, s: PostgresStore) =>
      new PushService({
        outbox: s.repository.push,
        configs: s.repository.push,
        logger: silentLogger,
        concurrency: 8,
        // At most 4 of the 24 lanes open a replica, each send a few ms: neither replica can take
        // every lane before the other joins (under CI load one once delivered all 120 alone).
        maxLanes: 4,
        retry: { maxAttempts: 3, backoffMs: 10, maxBackoffMs: 10, maxAgeMs: 60_000 },
        sender: {
          async send(request: WebhookRequest) {
            const [, seq, taskId] = /^msg_(\d+)_(.+)$/.exec(request.headers["webhook-id"]!)!;
            sent.push({ replica, lane: `${taskId}${request.url}`, seq: Number(seq) });
            await new Promise((resolve) => setTimeout(resolve, 4 + Math.random() * 4));
            return { kind: "answered", status: 200, retryAfter: undefined };
          },
        },
      });
    // Replicas with the default lease: a claim that ran out under a loaded machine's stalls would
    // be taken over while its holder still sends (at least once), which is not what this test is about.
    const [a, b] = await Promise.all([1, 2].map(() => openPostgresStore({ url: db.url, poolSize: 4 })));
    const services = [serviceOn("A", a!), serviceOn("B", b!)];
    try {
      await Promise.all(services.map((service) => service.start()));
      const TASKS = 12;
      const WRITES = 5;
      await Promise.all(
        Array.from({ length: TASKS }, async (_, i) => {
          const s = i % 2 === 0 ? a! : b!;
          const t = (await s.repository.create(alice, newTask({ micros: clock.next(), text: "hi" }))).task;
          for (const id of ["c1", "c2"]) await s.repository.push.put(alice, config(t.id, id), limits);
          for (let v = 1; v <= WRITES; v++) await s.repository.update(alice, t.id, v, statusChange(TaskState.WORKING, clock.next()));
        }),
      );
      const expected = TASKS * 2 * WRITES;
      const deadline = Date.now() + 20_000;
      while ((sent.length < expected || (await a!.repository.push.count()) > 0) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await new Promise((resolve) => setTimeout(resolve, 200)); // a second send, if any, would come now
      expect(sent).toHaveLength(expected);
      expect(new Set(sent.map((d) => d.seq)).size).toBe(expected);
      const lanes = new Map<string, number[]>();
      for (const d of sent) lanes.set(d.lane, [...(lanes.get(d.lane) ?? []), d.seq]);
      expect(lanes.size).toBe(TASKS * 2);
      for (const seqs of lanes.values()) expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
      expect(new Set(sent.map((d) => d.replica))).toEqual(new Set(["A", "B"]));
    } finally {
      for (const service of services) service.stop();
      await Promise.all([a!.close(), b!.close()]);
    }
  });

  test("A-29: a task write blocked by a config put that holds the task's row still owes the new config its event", async () => {
    const t = (await store.repository.create(alice, newTask({ micros: clock.next(), text: "hi" }))).task;
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      // What put() does, held open: the task's row locked, the config written, the snapshot queued.
      await client.query("BEGIN");
      await client.query("SELECT 1 FROM a2a_tasks WHERE id = $1 FOR UPDATE", [t.id]);
      await client.query("INSERT INTO a2a_push_configs (task_id, id, config) VALUES ($1, 'late', $2)", [
        t.id,
        toBinary(TaskPushNotificationConfigSchema, config(t.id, "late")),
      ]);
      await client.query("INSERT INTO a2a_push_outbox (task_id, config_id, created_ms, kind, body) VALUES ($1, 'late', 0, 1, $2)", [t.id, encodeTask(t)]);
      // The write starts now (its statement's snapshot has no config yet) and waits for the row.
      let done = false;
      const writing = store.repository.update(alice, t.id, 1, statusChange(TaskState.WORKING, clock.next())).then(() => (done = true));
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(done).toBe(false);
      await client.query("COMMIT");
      await writing;
    } finally {
      await client.end();
    }
    const entries = await store.repository.push.pendingAfter(0, 10);
    expect(entries.map((e) => fromBinary(StreamResponseSchema, e.event).payload.case)).toEqual(["task", "statusUpdate"]);
  });

  test("a replica's listeners hear of outbox rows another replica committed (the push notice on the task channel)", async () => {
    const t = (await other.repository.create(alice, newTask({ micros: clock.next(), text: "hi" }))).task;
    await other.repository.push.put(alice, config(t.id, "c1"), limits);
    let heard = 0;
    store.repository.push.onAdded((added) => (heard += added));
    await other.repository.update(alice, t.id, 1, statusChange(TaskState.WORKING, clock.next()));
    const deadline = Date.now() + 5000;
    while (heard === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(heard).toBe(1);
  });
});
