import { create, fromBinary } from "@bufbuild/protobuf";
import { StreamResponseSchema, TaskPushNotificationConfigSchema, TaskState, type TaskPushNotificationConfig } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { TaskNotFoundError } from "../../src/lifecycle/model/errors.js";
import { PushConfigLimitError, type PushConfigStore } from "../../src/push/ports/push-config-store.js";
import type { OutboxEntry, PushOutbox } from "../../src/push/ports/push-outbox.js";
import type { TaskRepository } from "../../src/lifecycle/ports/task-repository.js";
import { webhookBody } from "../../src/push/body-encoding.js";
import { Clock, artifactChange, historyChange, newTask, scopeOf, statusChange, textArtifact } from "../support/tasks.js";

/**
 * The behaviour every push config store and outbox must show (R-PUSH-2..6, A-7, A-8, A-29),
 * on the task store they live beside. An implementation's test file calls this with a factory
 * for a fresh, empty store.
 */
export type PushStoreFactory = () => Promise<{
  repo: TaskRepository;
  configs: PushConfigStore;
  outbox: PushOutbox;
  cleanup(): Promise<void>;
}>;

const alice = scopeOf("t", "alice");
const bob = scopeOf("t", "bob");
const LIMITS = { maxPerTask: 3 };

export function config(taskId: string, id: string, url = `https://hooks.example/${id}`): TaskPushNotificationConfig {
  return create(TaskPushNotificationConfigSchema, { taskId, id, url, token: `tok-${id}`, authentication: { scheme: "Bearer", credentials: "secret" } });
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

export function describePushStoreContract(name: string, factory: PushStoreFactory): void {
  describe(`${name}: push configs (contract)`, () => {
    let s: Awaited<ReturnType<PushStoreFactory>>;
    const clock = new Clock();
    beforeEach(async () => {
      s = await factory();
    });
    afterEach(async () => {
      await s.cleanup();
    });
    const task = async (scope = alice) => (await s.repo.create(scope, newTask({ micros: clock.next(), text: "hi" }))).task;

    test("R-PUSH-2/R-PUSH-3: a config put is returned by get as stored, token and authentication included", async () => {
      const t = await task();
      await s.configs.put(alice, config(t.id, "c1"), LIMITS);
      const got = await s.configs.get(alice, t.id, "c1");
      expect(got?.url).toBe("https://hooks.example/c1");
      expect(got?.token).toBe("tok-c1");
      expect(got?.authentication?.credentials).toBe("secret");
      expect(await s.configs.get(alice, t.id, "missing")).toBeUndefined();
    });

    test("R-PUSH-2: put on a task the scope does not have is TaskNotFound (A-31: another principal's task too)", async () => {
      const t = await task();
      await expect(s.configs.put(alice, config("nope", "c1"), LIMITS)).rejects.toBeInstanceOf(TaskNotFoundError);
      await expect(s.configs.put(bob, config(t.id, "c1"), LIMITS)).rejects.toBeInstanceOf(TaskNotFoundError);
    });

    test("R-PUSH-6/A-31: another principal sees none of a task's configs", async () => {
      const t = await task();
      await s.configs.put(alice, config(t.id, "c1"), LIMITS);
      expect(await s.configs.get(bob, t.id, "c1")).toBeUndefined();
      expect(await s.configs.list(bob, t.id, { limit: 10 })).toEqual([]);
      await s.configs.delete(bob, t.id, "c1");
      expect(await s.configs.get(alice, t.id, "c1")).toBeDefined();
    });

    test("A-8: a put with an existing id replaces the config; the per-task limit counts distinct ids", async () => {
      const t = await task();
      for (const id of ["a", "b", "c"]) await s.configs.put(alice, config(t.id, id), LIMITS);
      await s.configs.put(alice, config(t.id, "b", "https://hooks.example/new"), LIMITS);
      expect((await s.configs.get(alice, t.id, "b"))?.url).toBe("https://hooks.example/new");
      await expect(s.configs.put(alice, config(t.id, "d"), LIMITS)).rejects.toBeInstanceOf(PushConfigLimitError);
      expect((await s.configs.list(alice, t.id, { limit: 10 })).map((c) => c.id)).toEqual(["a", "b", "c"]);
    });

    test("R-PUSH-4: list is ordered by id and pages with afterId", async () => {
      const t = await task();
      for (const id of ["m", "a", "z"]) await s.configs.put(alice, config(t.id, id), LIMITS);
      expect((await s.configs.list(alice, t.id, { limit: 2 })).map((c) => c.id)).toEqual(["a", "m"]);
      expect((await s.configs.list(alice, t.id, { limit: 2, afterId: "m" })).map((c) => c.id)).toEqual(["z"]);
    });

    test("R-PUSH-5: delete removes the config and its pending deliveries, and is idempotent", async () => {
      const t = await task();
      await s.configs.put(alice, config(t.id, "c1"), LIMITS);
      await s.configs.put(alice, config(t.id, "c2"), LIMITS);
      await s.repo.update(alice, t.id, 1, statusChange(TaskState.WORKING, clock.next()));
      expect(await s.outbox.count()).toBe(2);
      await s.configs.delete(alice, t.id, "c1");
      await s.configs.delete(alice, t.id, "c1");
      expect(await s.configs.get(alice, t.id, "c1")).toBeUndefined();
      expect((await s.outbox.pendingAfter(0, 10)).map((e) => e.configId)).toEqual(["c2"]);
    });

    test("A-29: every status and artifact write owes one entry per config, in commit order; history owes none", async () => {
      const t = await task();
      const other = await task();
      await s.configs.put(alice, config(t.id, "c1"), LIMITS);
      await s.configs.put(alice, config(t.id, "c2"), LIMITS);
      await s.repo.update(alice, t.id, 1, statusChange(TaskState.WORKING, clock.next()));
      await s.repo.update(alice, other.id, 1, statusChange(TaskState.WORKING, clock.next()));
      await s.repo.update(alice, t.id, 2, artifactChange(textArtifact("a1", "x")));
      await s.repo.update(alice, t.id, 3, historyChange("more"));
      await s.repo.update(alice, t.id, 4, statusChange(TaskState.COMPLETED, clock.next()));
      const entries = await s.outbox.pendingAfter(0, 100);
      expect(entries.map((e) => `${e.configId}:${fromBinary(StreamResponseSchema, e.event).payload.case}`)).toEqual([
        "c1:statusUpdate",
        "c2:statusUpdate",
        "c1:artifactUpdate",
        "c2:artifactUpdate",
        "c1:statusUpdate",
        "c2:statusUpdate",
      ]);
      expect(entries.every((e) => e.taskId === t.id && e.scope.principal === "alice")).toBe(true);
      const seqs = entries.map((e) => e.seq);
      expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
      const last = fromBinary(StreamResponseSchema, entries[5]!.event);
      expect(last.payload.case === "statusUpdate" && last.payload.value.status?.state).toBe(TaskState.COMPLETED);
      expect(last.payload.case === "statusUpdate" && last.payload.value.contextId).toBe(t.contextId);
    });

    test("A-29: the outbox pages by seq, and firstOf gives a lane's oldest entry; remove takes one out", async () => {
      const t = await task();
      await s.configs.put(alice, config(t.id, "c1"), LIMITS);
      await s.repo.update(alice, t.id, 1, statusChange(TaskState.WORKING, clock.next()));
      await s.repo.update(alice, t.id, 2, statusChange(TaskState.WORKING, clock.next()));
      await s.repo.update(alice, t.id, 3, statusChange(TaskState.COMPLETED, clock.next()));
      const [first, second, third] = await s.outbox.pendingAfter(0, 10);
      expect((await s.outbox.pendingAfter(first!.seq, 1)).map((e) => e.seq)).toEqual([second!.seq]);
      expect((await s.outbox.firstOf(t.id, "c1"))?.seq).toBe(first!.seq);
      await s.outbox.remove(first!.seq);
      await s.outbox.remove(first!.seq);
      expect((await s.outbox.firstOf(t.id, "c1", first!.seq))?.seq).toBe(second!.seq);
      expect((await s.outbox.firstOf(t.id, "c1", third!.seq))?.seq).toBeUndefined();
      expect(await s.outbox.count()).toBe(2);
      expect((await s.outbox.pendingAfter(0, 10)).map((e) => e.seq)).toEqual([second!.seq, third!.seq]);
      expect(third!.createdMs).toBeGreaterThan(Date.now() - 60_000);
    });

    test("A-10: a config put with snapshot gets the task itself first, then its events", async () => {
      const t = await task();
      await s.configs.put(alice, config(t.id, "c1"), { ...LIMITS, snapshot: true });
      await s.repo.update(alice, t.id, 1, statusChange(TaskState.WORKING, clock.next()));
      const entries = await s.outbox.pendingAfter(0, 10);
      const kinds = entries.map((e) => fromBinary(StreamResponseSchema, e.event).payload);
      expect(kinds.map((p) => p.case)).toEqual(["task", "statusUpdate"]);
      expect(kinds[0]!.case === "task" && kinds[0]!.value.id).toBe(t.id);
      expect(kinds[0]!.case === "task" && kinds[0]!.value.history.length).toBe(1);
    });

    test("A-29: an inline config put in the turn its task is created commits with it: snapshot first", async () => {
      const fresh = newTask({ micros: clock.next(), text: "inline" });
      const created = s.repo.create(alice, fresh);
      if (!(created instanceof Promise)) {
        // A store that answers within the call: the put and the agent's write in the creation's turn.
        await Promise.all([
          s.configs.put(alice, config(fresh.id, "inline"), { ...LIMITS, snapshot: true }),
          s.repo.update(alice, fresh.id, 1, statusChange(TaskState.WORKING, clock.next())),
        ]);
        await turn();
        await turn();
      } else {
        // A store that answers later (PostgreSQL): the put is awaited, the agent's write races it.
        await created;
        await Promise.all([
          s.configs.put(alice, config(fresh.id, "inline"), { ...LIMITS, snapshot: true }),
          s.repo.update(alice, fresh.id, 1, statusChange(TaskState.WORKING, clock.next())),
        ]);
      }
      const entries = await s.outbox.pendingAfter(0, 10);
      // Either the snapshot was taken before the write, which the config then owes, or after it,
      // and it shows it: never a snapshot without the write and no event for it.
      const payloads = entries.map((e) => fromBinary(StreamResponseSchema, e.event).payload);
      const snapshot = payloads[0]!;
      expect(snapshot.case).toBe("task");
      const sawWorking = snapshot.case === "task" && snapshot.value.status?.state === TaskState.WORKING;
      expect(payloads.map((p) => p.case)).toEqual(sawWorking ? ["task"] : ["task", "statusUpdate"]);
      expect((await s.configs.get(alice, fresh.id, "inline"))?.url).toBe("https://hooks.example/inline");
    });

    test("R-V03-70: a config keeps the protocol version of the call that made it (1.0 when none is said); a replace takes the new one", async () => {
      const t = await task();
      await s.configs.put(alice, config(t.id, "old"), LIMITS);
      await s.configs.put(alice, config(t.id, "v03"), { ...LIMITS, protocolVersion: "0.3" });
      expect((await s.configs.getForDelivery(alice, t.id, "old"))?.protocolVersion).toBe("1.0");
      const made = await s.configs.getForDelivery(alice, t.id, "v03");
      expect(made?.protocolVersion).toBe("0.3");
      expect(made?.config).toEqual(await s.configs.get(alice, t.id, "v03"));
      expect(await s.configs.getForDelivery(bob, t.id, "v03")).toBeUndefined();
      await s.configs.put(alice, config(t.id, "v03"), { ...LIMITS, protocolVersion: "1.0" });
      expect((await s.configs.getForDelivery(alice, t.id, "v03"))?.protocolVersion).toBe("1.0");
      await s.configs.put(alice, config(t.id, "old"), { ...LIMITS, protocolVersion: "0.3" });
      expect((await s.configs.getForDelivery(alice, t.id, "old"))?.protocolVersion).toBe("0.3");
      await s.configs.delete(alice, t.id, "old");
      expect(await s.configs.getForDelivery(alice, t.id, "old")).toBeUndefined();
    });

    test("R-V03-70: an inline config put in the turn its task is created keeps its version too", async () => {
      const fresh = newTask({ micros: clock.next(), text: "inline" });
      const created = s.repo.create(alice, fresh);
      if (created instanceof Promise) await created;
      await s.configs.put(alice, config(fresh.id, "inline"), { ...LIMITS, snapshot: true, protocolVersion: "0.3" });
      await s.repo.update(alice, fresh.id, 1, statusChange(TaskState.WORKING, clock.next()));
      expect((await s.configs.getForDelivery(alice, fresh.id, "inline"))?.protocolVersion).toBe("0.3");
    });

    test("A-29: listeners hear of added entries after the commit, outside the write", async () => {
      const t = await task();
      await s.configs.put(alice, config(t.id, "c1"), LIMITS);
      let heard = 0;
      s.outbox.onAdded((added) => (heard += added)); // a store may also wake listeners with 0 (a poll)
      const written = s.repo.update(alice, t.id, 1, statusChange(TaskState.WORKING, clock.next()));
      if (!(written instanceof Promise)) {
        expect(heard).toBe(0); // answered within the call
      } else {
        await written;
        expect(heard).toBe(0); // the write has returned, and its listeners still wait for the next turn
      }
      await turn();
      await turn();
      expect(heard).toBe(1);
    });

    test("R-PUSH-2: configs are accepted on a terminal task (it owes nothing more)", async () => {
      const t = await task();
      await s.repo.update(alice, t.id, 1, statusChange(TaskState.WORKING, clock.next()));
      await s.repo.update(alice, t.id, 2, statusChange(TaskState.COMPLETED, clock.next()));
      await s.configs.put(alice, config(t.id, "late"), LIMITS);
      expect((await s.configs.list(alice, t.id, { limit: 10 })).length).toBe(1);
      expect(await s.outbox.count()).toBe(0);
    });

    test("retention removes a task's configs and its pending deliveries with it", async () => {
      const t = await task();
      const kept = await task();
      await s.configs.put(alice, config(t.id, "c1"), LIMITS);
      await s.configs.put(alice, config(kept.id, "k1"), LIMITS);
      await s.repo.update(alice, t.id, 1, statusChange(TaskState.WORKING, clock.next()));
      const done = clock.next();
      await s.repo.update(alice, t.id, 2, statusChange(TaskState.COMPLETED, done));
      await s.repo.update(alice, kept.id, 1, statusChange(TaskState.WORKING, clock.next()));
      expect(await s.outbox.count()).toBe(3);
      expect(await s.repo.purgeTerminalBefore(done + 1)).toBe(1);
      expect(await s.configs.get(alice, t.id, "c1")).toBeUndefined();
      expect((await s.outbox.pendingAfter(0, 10)).map((e) => e.configId)).toEqual(["k1"]);
      // A task made later with configs starts clean.
      const next = await task();
      await s.configs.put(alice, config(next.id, "c1"), LIMITS);
      expect((await s.configs.list(alice, next.id, { limit: 10 })).map((c) => c.id)).toEqual(["c1"]);
    });

    test("A-29: listeners are handed the committed entries themselves, in seq order, as pendingAfter reads them", async () => {
      const t = await task();
      await s.configs.put(alice, config(t.id, "c1"), LIMITS);
      await s.configs.put(alice, config(t.id, "c2"), LIMITS);
      const handed: Array<{ added: number; entries: readonly OutboxEntry[] | undefined }> = [];
      s.outbox.onAdded((added, entries) => handed.push({ added, entries }));
      await s.repo.update(alice, t.id, 1, statusChange(TaskState.WORKING, clock.next()));
      await s.repo.update(alice, t.id, 2, artifactChange(textArtifact("a1", "x")));
      await turn();
      const stored = await s.outbox.pendingAfter(0, 10);
      expect(handed.reduce((n, h) => n + h.added, 0)).toBe(4);
      if (handed.every((h) => h.entries === undefined)) {
        // A store several processes deliver from hands none over: each process claims lanes and reads them.
        expect(s.outbox.claimLanes).toBeDefined();
        return;
      }
      const entries = handed.flatMap((h) => h.entries ?? []);
      const view = (e: OutboxEntry) => ({ seq: e.seq, taskId: e.taskId, configId: e.configId, scope: e.scope, event: Buffer.from(e.event) });
      expect(entries.map(view)).toEqual(stored.map(view));
      expect(entries.map((e) => e.seq)).toEqual([...entries.map((e) => e.seq)].sort((x, y) => x - y));
      // A body handed over with an entry is the one delivery would make from its stored event.
      for (const e of entries) if (e.body !== undefined) expect(e.body).toBe(webhookBody(e.event));
      expect(entries.some((e) => e.body !== undefined)).toBe(true);
    });

    test("#16: an entry keeps the trace context of its write, as the store's source gave it (none without a source)", async () => {
      const t = await task();
      await s.configs.put(alice, config(t.id, "c1"), LIMITS);
      await s.repo.update(alice, t.id, 1, statusChange(TaskState.WORKING, clock.next()));
      let current: string | undefined = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
      s.outbox.useTraceContext?.(() => current);
      await s.repo.update(alice, t.id, 2, statusChange(TaskState.INPUT_REQUIRED, clock.next()));
      current = undefined;
      await s.repo.update(alice, t.id, 3, historyChange("more"));
      await s.repo.update(alice, t.id, 4, statusChange(TaskState.WORKING, clock.next()));
      const kept = s.outbox.useTraceContext === undefined ? undefined : "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
      expect((await s.outbox.pendingAfter(0, 10)).map((e) => e.traceContext)).toEqual([undefined, kept, undefined]);
    });

    test("A-29: the configs' revision changes when a config is replaced or deleted and when tasks are purged", async () => {
      const revision = s.configs.revision;
      if (revision === undefined) {
        // Only a store shared by replicas has none (its configs change elsewhere too): its lanes always read back.
        expect(s.outbox.claimLanes).toBeDefined();
        return;
      }
      const t = await task();
      await s.configs.put(alice, config(t.id, "c1"), LIMITS);
      let seen = revision();
      const changed = () => {
        const now = revision();
        const did = now !== seen;
        seen = now;
        return did;
      };
      await s.configs.put(alice, config(t.id, "c1", "https://hooks.example/elsewhere"), LIMITS);
      expect(changed()).toBe(true);
      await s.configs.delete(alice, t.id, "c1");
      expect(changed()).toBe(true);
      await s.configs.put(alice, config(t.id, "c2"), LIMITS); // purged with its task below
      changed();
      await s.repo.update(alice, t.id, 1, statusChange(TaskState.WORKING, clock.next()));
      const done = clock.next();
      await s.repo.update(alice, t.id, 2, statusChange(TaskState.COMPLETED, done));
      expect(changed()).toBe(false);
      expect(await s.repo.purgeTerminalBefore(done + 1)).toBe(1);
      expect(changed()).toBe(true);
    });
  });
}
