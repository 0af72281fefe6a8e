import { create } from "@bufbuild/protobuf";
import { MessageSchema, Role, SendMessageRequestSchema, TaskState } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { EventHub } from "../../src/events/event-hub.js";
import type { TaskEvent } from "../../src/events/task-event.js";
import type { Agent } from "../../src/lifecycle/ports/agent.js";
import { silentLogger } from "../../src/lifecycle/ports/logger.js";
import { PageTokenCodec } from "../../src/lifecycle/reads/page-token.js";
import { IllegalTransitionError, type TaskRepository } from "../../src/lifecycle/ports/task-repository.js";
import { TaskService, type RequestContext } from "../../src/lifecycle/task-service.js";
import { TaskWriter, WRITTEN } from "../../src/lifecycle/writes/task-writer.js";
import { MemoryTaskRepository } from "../../src/storage/memory/memory-task-repository.js";
import { openSqliteTaskRepository, type SqliteTaskRepository } from "../../src/storage/sqlite/sqlite-task-repository.js";
import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { committed } from "../support/answered.js";
import { asyncOnly } from "../support/async-only.js";
import { newTask, scopeOf, statusChange } from "../support/tasks.js";

/*
 * TaskWriter and the lifecycle on both kinds of store: one that answers within the call
 * (the memory store) and one that answers later with promises (any networked store, here the
 * memory store behind test/support/async-only.ts). Same guards, same events, same order.
 */

const scope = scopeOf("", "writer-test");

async function writerOn(kind: "immediate" | "async") {
  const memory = new MemoryTaskRepository();
  const repository = kind === "immediate" ? memory : asyncOnly(memory);
  const hub = new EventHub();
  const task = newTask({ micros: 1_000, text: "hello" });
  const stored = await memory.create(scope, task);
  const events: TaskEvent[] = [];
  hub.subscribe(task.id, (event) => events.push(event));
  let idleCalls = 0;
  const writer = new TaskWriter({
    repository,
    hub,
    scope,
    taskId: task.id,
    contextId: task.contextId,
    version: stored.version,
    state: TaskState.SUBMITTED,
    onIdle: () => idleCalls++,
  });
  return { memory, repository, hub, task, writer, events, idle: () => idleCalls };
}

describe("TaskWriter on a store that answers within the call", () => {
  it("applies and publishes before write() returns, and hands back the shared WRITTEN promise", async () => {
    const { writer, events, memory, task, idle } = await writerOn("immediate");
    const result = writer.write(statusChange(TaskState.WORKING, 2_000));
    expect(result).toBe(WRITTEN);
    expect(events.map((e) => [e.kind, e.version])).toEqual([["status", 2]]);
    expect(writer.state).toBe(TaskState.WORKING);
    expect(writer.idle).toBe(true);
    expect(idle()).toBe(1);
    expect((await memory.get(scope, task.id))!.version).toBe(2);
  });

  it("refuses an illegal transition with a rejection, publishes nothing, and stays usable", async () => {
    const { writer, events } = await writerOn("immediate");
    await expect(writer.write(statusChange(TaskState.SUBMITTED, 2_000))).rejects.toBeInstanceOf(IllegalTransitionError);
    expect(events).toEqual([]);
    expect(writer.state).toBe(TaskState.SUBMITTED);
    await expect(writer.write(statusChange(TaskState.WORKING, 3_000))).resolves.toBeUndefined();
    expect(events.map((e) => e.version)).toEqual([2]);
    expect(writer.idle).toBe(true);
  });

  it("retries once against the stored version when another writer got there first", async () => {
    const { writer, events, repository, hub, task } = await writerOn("immediate");
    const other = new TaskWriter({
      repository,
      hub,
      scope,
      taskId: task.id,
      contextId: task.contextId,
      version: 1,
      state: TaskState.SUBMITTED,
      onIdle: () => {},
    });
    expect(other.write(statusChange(TaskState.WORKING, 2_000))).toBe(WRITTEN);
    // `writer` still believes version 1: its write is refused once (a rejection, a turn later), then applied at version 3.
    await writer.write(statusChange(TaskState.WORKING, 3_000));
    expect(events.map((e) => e.version)).toEqual([2, 3]);
  });

  it("calls onSettled() listeners within the write that settles the task, once, and not for progress", async () => {
    const { writer } = await writerOn("immediate");
    writer.write(statusChange(TaskState.WORKING, 2_000));
    const calls: string[] = [];
    writer.onSettled(() => calls.push("first"));
    writer.onSettled(() => calls.push("second"));
    expect(writer.idle).toBe(false); // someone waits: the service keeps the writer
    writer.write(statusChange(TaskState.WORKING, 2_500));
    expect(calls).toEqual([]);
    writer.write(statusChange(TaskState.INPUT_REQUIRED, 3_000));
    expect(calls).toEqual(["first", "second"]);
    expect(writer.idle).toBe(true);
    writer.write(statusChange(TaskState.WORKING, 4_000));
    writer.write(statusChange(TaskState.COMPLETED, 5_000));
    expect(calls).toEqual(["first", "second"]);
  });

  it("a writer whose task another instance took over wakes its waiters, and a waiter that comes later at once (a blocking SendMessage never waits for ever)", async () => {
    const { writer } = await writerOn("immediate");
    writer.write(statusChange(TaskState.WORKING, 2_000));
    const calls: string[] = [];
    writer.onSettled(() => calls.push("before"));
    writer.takenOver();
    expect(calls).toEqual(["before"]);
    writer.onSettled(() => calls.push("after")); // the reply of a run stopped before it got to wait
    expect(calls).toEqual(["before", "after"]);
    expect(writer.idle).toBe(true); // no one left waiting: the service may forget it
    await expect(writer.write(statusChange(TaskState.COMPLETED, 3_000))).rejects.toThrow(/taken over by another instance/);
  });
});

describe("TaskWriter on a store that answers later", () => {
  it("queues writes made while one is in flight and publishes them in version order", async () => {
    const { writer, events, idle } = await writerOn("async");
    const writes = [
      writer.write(statusChange(TaskState.WORKING, 2_000)),
      writer.write(statusChange(TaskState.WORKING, 3_000)),
      writer.write(statusChange(TaskState.COMPLETED, 4_000)),
    ];
    expect(writes[0]).not.toBe(WRITTEN);
    expect(events).toEqual([]); // nothing applied yet: the store answers later
    await Promise.all(writes);
    expect(events.map((e) => e.version)).toEqual([2, 3, 4]);
    expect(writer.state).toBe(TaskState.COMPLETED);
    await Promise.resolve();
    expect(writer.idle).toBe(true);
    expect(idle()).toBeGreaterThanOrEqual(1);
  });

  it("a refused write in the queue does not stop the ones after it", async () => {
    const { writer, events } = await writerOn("async");
    const refused = writer.write(statusChange(TaskState.SUBMITTED, 2_000));
    const accepted = writer.write(statusChange(TaskState.WORKING, 3_000));
    await expect(refused).rejects.toBeInstanceOf(IllegalTransitionError);
    await expect(accepted).resolves.toBeUndefined();
    expect(events.map((e) => e.version)).toEqual([2]);
  });
});

describe("TaskWriter on a store that commits later (SQLite group commit)", () => {
  let dir: string;
  let sqlite: SqliteTaskRepository;
  let reader: Database.Database;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "a2a-writer-"));
    sqlite = openSqliteTaskRepository({ file: join(dir, "tasks.db") });
    reader = new Database(join(dir, "tasks.db"), { readonly: true });
  });
  afterEach(async () => {
    reader.close();
    await sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const turnEnd = () => new Promise((resolve) => setImmediate(resolve));
  const onDisk = (id: string) => reader.prepare("SELECT version FROM tasks WHERE id = ?").pluck().get(id);

  async function deferredWriter() {
    const hub = new EventHub();
    const task = newTask({ micros: 1_000, text: "hello" });
    await sqlite.create(scope, task);
    await committed(sqlite); // stored before the writer's first write
    const events: TaskEvent[] = [];
    hub.subscribe(task.id, (event) => events.push(event));
    const writer = new TaskWriter({
      repository: sqlite,
      hub,
      scope,
      taskId: task.id,
      contextId: task.contextId,
      version: 1,
      state: TaskState.SUBMITTED,
      onIdle: () => {},
    });
    return { writer, events, task };
  }

  it("answers the agent at once but publishes, and counts as settled, only what is committed", async () => {
    const { writer, events, task } = await deferredWriter();
    const settledAt: unknown[] = [];
    writer.onSettled(() => settledAt.push(onDisk(task.id)));
    expect(writer.write(statusChange(TaskState.WORKING, 2_000))).toBe(WRITTEN);
    expect(writer.write(statusChange(TaskState.COMPLETED, 3_000))).toBe(WRITTEN);
    expect(writer.state).toBe(TaskState.COMPLETED); // the next write is checked against this
    expect({ settled: writer.settled, idle: writer.idle, events: events.length, settledAt }).toEqual({ settled: false, idle: false, events: 0, settledAt: [] });
    await turnEnd();
    expect(events.map((e) => [e.kind, e.version])).toEqual([
      ["status", 2],
      ["status", 3],
    ]);
    expect(settledAt).toEqual([3]); // the waiter was told once version 3 was on disk
    expect({ settled: writer.settled, idle: writer.idle }).toEqual({ settled: true, idle: true });
  });

  it("a lost commit wakes the waiters with the error, and the next write goes on from what is stored", async () => {
    const { writer, events, task } = await deferredWriter();
    let woken = 0;
    writer.onSettled(() => woken++);
    const db = (sqlite as unknown as { db: Database.Database }).db;
    db.exec("CREATE TEMP TRIGGER fail_all BEFORE UPDATE ON tasks BEGIN SELECT RAISE(ABORT, 'injected failure'); END");
    writer.write(statusChange(TaskState.WORKING, 2_000));
    await turnEnd(); // the batch's commit fails
    db.exec("DROP TRIGGER fail_all");
    expect(woken).toBe(1);
    expect(String(writer.commitFailure)).toContain("injected failure");
    expect({ state: writer.state, settled: writer.settled, events: events.length, onDisk: onDisk(task.id) }).toEqual({
      state: TaskState.SUBMITTED,
      settled: false,
      events: 0,
      onDisk: 1,
    });
    await writer.write(statusChange(TaskState.WORKING, 3_000)); // believed version 2; refused, retried at 1
    await turnEnd();
    expect(events.map((e) => e.version)).toEqual([2]);
    expect(writer.commitFailure).toBeUndefined();
  });

  describe("when the commit that holds a new task is lost", () => {
    const agent: Agent = {
      async execute(ctx) {
        await ctx.working();
        await ctx.complete("done");
      },
    };
    const request = () =>
      create(SendMessageRequestSchema, {
        message: create(MessageSchema, { messageId: "m-1", role: Role.USER, parts: [{ content: { case: "text", value: "2 + 2?" } }] }),
      });
    const rc = (): RequestContext => ({ caller: scope, requestedExtensions: [], activatedExtensions: new Set() });
    const failInserts = () =>
      (sqlite as unknown as { db: Database.Database }).db.exec(
        "CREATE TEMP TRIGGER fail_insert BEFORE INSERT ON tasks BEGIN SELECT RAISE(ABORT, 'injected failure'); END",
      );
    const serviceOnSqlite = () =>
      new TaskService({ repository: sqlite, hub: new EventHub(), agent, pageTokens: new PageTokenCodec(Buffer.alloc(32, 7)), logger: silentLogger });

    it("a blocking caller gets the store's error", async () => {
      failInserts();
      await expect(serviceOnSqlite().sendMessage(rc(), request())).rejects.toMatchObject({ message: "injected failure" });
    });

    it("a stream ends with the store's error instead of waiting forever, having sent nothing", async () => {
      failInserts();
      const seen: string[] = [];
      let failure: unknown;
      const sink = { next: () => seen.push("next"), end: () => seen.push("end"), fail: (error: unknown) => ((failure = error), seen.push("fail")) };
      await serviceOnSqlite().sendStreamingMessage(rc(), request(), sink);
      for (let i = 0; i < 3 && seen.length === 0; i++) await turnEnd();
      expect(seen).toEqual(["fail"]);
      expect(failure).toMatchObject({ message: "injected failure" });
    });
  });

  it("a blocking SendMessage runs the agent within one turn and replies with what is on disk", async () => {
    const agent: Agent = {
      async execute(ctx) {
        await ctx.working();
        await ctx.artifact({ name: "answer", parts: ["4"] });
        await ctx.complete();
      },
    };
    const service = new TaskService({
      repository: sqlite,
      hub: new EventHub(),
      agent,
      pageTokens: new PageTokenCodec(Buffer.alloc(32, 7)),
      logger: silentLogger,
    });
    const request = create(SendMessageRequestSchema, {
      message: create(MessageSchema, { messageId: "m-1", role: Role.USER, parts: [{ content: { case: "text", value: "2 + 2?" } }] }),
    });
    let turns = 0; // event-loop iterations until the reply: a tick in each one's check phase
    let counting = true;
    const tick = () => {
      if (!counting) return;
      turns++;
      setImmediate(tick);
    };
    setImmediate(tick);
    const response = await service.sendMessage({ caller: scope, requestedExtensions: [], activatedExtensions: new Set() }, request);
    counting = false;
    const task = response.payload.value as import("../../gen/es/lf/a2a/v1/a2a_pb.js").Task;
    expect(task.status?.state).toBe(TaskState.COMPLETED);
    expect(onDisk(task.id)).toBe(4); // created, working, artifact, completed: all committed before the reply
    expect(turns).toBeLessThanOrEqual(2); // one commit for the four writes (a commit per write took four turns)
  });
});

describe("blocking SendMessage on either kind of store", () => {
  const agent: Agent = {
    async execute(ctx) {
      await ctx.working();
      await ctx.artifact({ name: "answer", parts: ["4"] });
      await ctx.complete();
    },
  };
  const request = () =>
    create(SendMessageRequestSchema, {
      message: create(MessageSchema, { messageId: "m-1", role: Role.USER, parts: [{ content: { case: "text", value: "2 + 2?" } }] }),
    });
  const rc = (): RequestContext => ({ caller: scope, requestedExtensions: [], activatedExtensions: new Set() });
  const serviceOn = (repository: TaskRepository) =>
    new TaskService({ repository, hub: new EventHub(), agent, pageTokens: new PageTokenCodec(Buffer.alloc(32, 7)), logger: silentLogger });

  it.each(["immediate", "async"] as const)("%s: the reply is the completed task with its artifact and history", async (kind) => {
    const memory = new MemoryTaskRepository();
    const service = serviceOn(kind === "immediate" ? memory : asyncOnly(memory));
    const response = await service.sendMessage(rc(), request());
    expect(response.payload.case).toBe("task");
    const task = response.payload.value as import("../../gen/es/lf/a2a/v1/a2a_pb.js").Task;
    expect(task.status?.state).toBe(TaskState.COMPLETED);
    expect(task.artifacts.map((a) => a.name)).toEqual(["answer"]);
    expect(task.history.map((m) => [m.messageId, m.taskId, m.contextId])).toEqual([["m-1", task.id, task.contextId]]);
    const stored = await memory.get(scope, task.id);
    expect(stored?.version).toBe(4); // created, working, artifact, completed
    await new Promise((resolve) => setImmediate(resolve)); // the run's bookkeeping ends after the reply
    expect(service.runningCount).toBe(0);
  });

  it.each(["immediate", "async"] as const)("%s: a task that cannot be stored fails the call with the store's error instead of hanging", async (kind) => {
    const memory = new MemoryTaskRepository();
    const broken = new Error("disk full");
    const repository: TaskRepository =
      kind === "immediate"
        ? Object.assign(Object.create(memory) as MemoryTaskRepository, { create: () => Promise.reject(broken) })
        : asyncOnly(memory, { create: () => Promise.reject(broken) });
    const service = serviceOn(repository);
    await expect(service.sendMessage(rc(), request())).rejects.toBe(broken);
    expect((await memory.list(scope, { pageSize: 10, includeArtifacts: false })).totalSize).toBe(0);
  });
});

describe("what an agent hands in is copied unless the run made it", () => {
  it.each(["memory", "sqlite"] as const)(
    "%s: changing the agent's part objects, metadata and lists, or the incoming message (ctx.message), after the update changes nothing stored",
    async (kind) => {
      const dir = mkdtempSync(join(tmpdir(), "a2a-agent-input-"));
      const repository = kind === "memory" ? new MemoryTaskRepository() : openSqliteTaskRepository({ file: join(dir, "tasks.db") });
      try {
        const metadata = { source: "agent" };
        const extensions = ["urn:x"];
        const part = { content: { case: "text" as const, value: "original" } };
        const statusPart = { content: { case: "text" as const, value: "status original" } };
        const agent: Agent = {
          async execute(ctx) {
            await ctx.working([statusPart]);
            await ctx.artifact({ artifactId: "a-1", name: "answer", parts: [part, "plain"], metadata, extensions });
            part.content.value = "changed"; // while the task is still live in the store
            statusPart.content.value = "status changed";
            ctx.message.messageId = "changed";
            (ctx.message.parts[0]!.content as { value: string }).value = "message changed";
            metadata.source = "changed";
            extensions.push("urn:y");
            await ctx.complete("done"); // text only: kept as it is
          },
        };
        const service = new TaskService({ repository, hub: new EventHub(), agent, pageTokens: new PageTokenCodec(Buffer.alloc(32, 7)), logger: silentLogger });
        const request = create(SendMessageRequestSchema, {
          message: create(MessageSchema, { messageId: "m-1", role: Role.USER, parts: [{ content: { case: "text", value: "2 + 2?" } }] }),
        });
        const reply = await service.sendMessage({ caller: scope, requestedExtensions: [], activatedExtensions: new Set() }, request);
        const id = (reply.payload.value as { id: string }).id;
        const stored = (await repository.get(scope, id))!.task;
        const artifact = stored.artifacts[0]!;
        expect(artifact.parts.map((p) => p.content.value)).toEqual(["original", "plain"]);
        expect(artifact.metadata).toEqual({ source: "agent" });
        expect(artifact.extensions).toEqual(["urn:x"]);
        expect(stored.history.map((m) => m.parts[0]!.content.value)).toEqual(["2 + 2?", "status original", "done"]);
        expect(stored.history[0]!.messageId).toBe("m-1");
      } finally {
        await repository.close();
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
