/**
 * SubscribeToTask through the real server: snapshot then live events, refusals, interrupted
 * tasks, no gap and no duplicate at subscribe time under load, and many subscribers.
 */
import * as grpc from "@grpc/grpc-js";
import { TaskState, type StreamResponse, type Task } from "../../gen/ts-proto/lf/a2a/v1/a2a.js";
import type { ReadOptions, StoredTask, TaskScope } from "../../src/lifecycle/ports/task-repository.js";
import { MemoryTaskRepository } from "../../src/storage/memory/memory-task-repository.js";
import { unary, until } from "../foundation/helpers.js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import { controlledAgent, describeEvent, sendRequest, streamSend, subscribe, taskIdOf, turn, type ControlledRun, type StreamReader } from "./support.js";

/**
 * A memory store whose reads span a few event-loop turns, so writes race the snapshot read:
 * every other read answers with the state at its start (newer events must then come from the
 * events held during the read), the others with the state at its end (held events it already
 * contains must be dropped).
 */
class RacyReadRepository extends MemoryTaskRepository {
  reads = 0;
  raced = 0;
  override async get(scope: TaskScope, taskId: string, options?: ReadOptions): Promise<StoredTask | undefined> {
    const early = this.reads++ % 2 === 0;
    const before = await super.get(scope, taskId, options);
    for (let i = 0; i < 3; i++) await turn();
    const after = await super.get(scope, taskId, options);
    if (before && after && before.version !== after.version) this.raced++;
    return early ? before : after;
  }
}

let s: A2ATestServer;
const ctl = controlledAgent();
beforeAll(async () => {
  s = await startA2AServer({ agent: ctl.agent });
});
afterAll(() => s.close());

/** A WORKING task, its run, and the creator's stream. */
async function workingTask(server = s, agent = ctl): Promise<{ taskId: string; run: ControlledRun; creator: StreamReader }> {
  const creator = streamSend(server, sendRequest("start"));
  const run = await agent.nextRun();
  await run.ctx.working();
  await creator.waitFor(2);
  return { taskId: taskIdOf(creator), run, creator };
}

function snapshotOf(reader: StreamReader): Task {
  const p = reader.events[0]?.payload;
  if (p?.$case !== "task") throw new Error(`first event is ${p?.$case}`);
  return p.value;
}

test("R-SUB-3, R-SUB-4: the snapshot at subscription time first (with the artifacts so far), then live updates, then OK after the terminal one", async () => {
  const { taskId, run } = await workingTask();
  await run.ctx.artifact({ artifactId: "a1", name: "first", parts: ["one"] });
  const sub = subscribe(s, taskId);
  await sub.waitFor(1);
  const snapshot = snapshotOf(sub);
  expect(snapshot.id).toBe(taskId);
  expect(snapshot.status!.state).toBe(TaskState.TASK_STATE_WORKING);
  expect(snapshot.artifacts.map((a) => a.name)).toEqual(["first"]);
  await run.ctx.artifact({ artifactId: "a2", name: "second", parts: ["two"] });
  await sub.waitFor(2);
  await run.ctx.complete("done");
  run.finish();
  expect((await sub.ended).code).toBe(grpc.status.OK);
  expect(sub.events.map(describeEvent)).toEqual([
    `task:${TaskState.TASK_STATE_WORKING}`,
    "artifact:a2:second",
    `status:${TaskState.TASK_STATE_COMPLETED}:done`,
  ]);
});

test("R-SUB-2: a terminal task → FAILED_PRECONDITION / UNSUPPORTED_OPERATION; R-SUB-1: unknown → NOT_FOUND / TASK_NOT_FOUND", async () => {
  const { taskId, run } = await workingTask();
  await run.ctx.complete();
  run.finish();
  const terminal = subscribe(s, taskId);
  const unknown = subscribe(s, "no-such-task");
  const [t, u] = await Promise.all([terminal.ended, unknown.ended]);
  expect([t.code, t.reason]).toEqual([grpc.status.FAILED_PRECONDITION, "UNSUPPORTED_OPERATION"]);
  expect([u.code, u.reason]).toEqual([grpc.status.NOT_FOUND, "TASK_NOT_FOUND"]);
  expect(terminal.events).toHaveLength(0);
  expect(unknown.events).toHaveLength(0);
  expect(s.app.hub.listenerCount()).toBe(0);
});

test("A-19: an idle INPUT_REQUIRED task is subscribable; the stream stays open until the next qualifying transition", async () => {
  const { taskId, run } = await workingTask();
  await run.ctx.requireInput("which city?");
  run.finish();
  await until(() => s.app.service.runningCount === 0, "the run to end");
  const sub = subscribe(s, taskId);
  await sub.waitFor(1);
  expect(snapshotOf(sub).status!.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
  await turn();
  await turn();
  expect(sub.end).toBeUndefined(); // open, idle, nothing happening
  expect(s.app.hub.listenerCount(taskId)).toBe(1);
  // The follow-up arrives on another call; the subscriber sees the task resume and pause again.
  const followUp = unary(
    s.client,
    s.client.sendMessage,
    { tenant: "", message: sendRequest("Rome", { taskId }).message, configuration: undefined, metadata: undefined },
    s.metadata(),
  );
  const next = await ctl.nextRun();
  await sub.waitFor(2);
  await next.ctx.artifact({ artifactId: "plan", name: "plan", parts: ["Rome"] });
  await next.ctx.requireInput("which dates?");
  next.finish();
  expect((await sub.ended).code).toBe(grpc.status.OK);
  expect((await followUp).response?.payload?.$case).toBe("task");
  expect(sub.events.map(describeEvent)).toEqual([
    `task:${TaskState.TASK_STATE_INPUT_REQUIRED}`,
    `status:${TaskState.TASK_STATE_WORKING}:`,
    "artifact:plan:plan",
    `status:${TaskState.TASK_STATE_INPUT_REQUIRED}:which dates?`,
  ]);
});

test("A-19, A-2: a subscriber to an AUTH_REQUIRED task stays open through it and closes at the terminal state", async () => {
  const { taskId, run } = await workingTask();
  await run.ctx.requireAuth("sign in");
  const sub = subscribe(s, taskId);
  await sub.waitFor(1);
  expect(snapshotOf(sub).status!.state).toBe(TaskState.TASK_STATE_AUTH_REQUIRED);
  await run.ctx.working("signed in");
  await sub.waitFor(2);
  await run.ctx.complete("done");
  run.finish();
  expect((await sub.ended).code).toBe(grpc.status.OK);
  expect(sub.events.map(describeEvent)).toEqual([
    `task:${TaskState.TASK_STATE_AUTH_REQUIRED}`,
    `status:${TaskState.TASK_STATE_WORKING}:signed in`,
    `status:${TaskState.TASK_STATE_COMPLETED}:done`,
  ]);
});

/** Chunk index of an artifact update ("c17" → 17), or the number of chunks a snapshot holds. */
function chunkIndex(event: StreamResponse): number {
  const p = event.payload;
  if (p?.$case !== "artifactUpdate") throw new Error(`expected an artifact update, got ${describeEvent(event)}`);
  const content = p.value.artifact!.parts[0]!.content;
  return Number(content?.$case === "text" ? content.value.slice(1) : NaN);
}

/** Every subscriber sees its snapshot, then exactly the chunks after it (contiguous, no repeat), then COMPLETED. */
function expectNoGapNoDuplicate(reader: StreamReader, chunks: number): void {
  const snapshot = snapshotOf(reader);
  const held = snapshot.artifacts.find((a) => a.artifactId === "stream")?.parts.length ?? 0;
  const updates = reader.events.slice(1, -1).map(chunkIndex);
  const expected = Array.from({ length: chunks - held }, (_, i) => held + i);
  expect(updates).toEqual(expected);
  expect(describeEvent(reader.events.at(-1)!)).toBe(`status:${TaskState.TASK_STATE_COMPLETED}:done`);
}

async function hammer(server: A2ATestServer, agent: ReturnType<typeof controlledAgent>, chunks: number, subscribers: number): Promise<StreamReader[]> {
  const { run } = await workingTask(server, agent);
  const joinAt = new Set(Array.from({ length: subscribers }, () => Math.floor(Math.random() * chunks)));
  const readers: StreamReader[] = [];
  const taskId = run.ctx.taskId!;
  for (let i = 0; i < chunks; i++) {
    // Joins fire between writes; the request reaches the server while the agent keeps writing.
    if (joinAt.has(i)) readers.push(subscribe(server, taskId));
    await run.ctx.artifact({ artifactId: "stream", name: "stream", parts: [`c${i}`] }, { append: i > 0, lastChunk: false });
    if (i % 2 === 0) await turn();
  }
  // Everyone must have joined before the end, so that each stream is judged on a full run.
  await Promise.all(readers.map((r) => r.waitFor(1)));
  await run.ctx.complete("done");
  run.finish();
  const ends = await Promise.all(readers.map((r) => r.ended));
  expect(ends.every((e) => e.code === grpc.status.OK)).toBe(true);
  return readers;
}

test("R-SUB-3, R-SUB-4: no gap and no duplicate at subscribe time while the agent writes continuously (50 subscribers joining at random moments)", async () => {
  const readers = await hammer(s, ctl, 300, 50);
  const snapshotSizes = new Set<number>();
  for (const r of readers) {
    expectNoGapNoDuplicate(r, 300);
    snapshotSizes.add(snapshotOf(r).artifacts[0]?.parts.length ?? 0);
  }
  expect(snapshotSizes.size).toBeGreaterThan(5); // they really joined at different moments
});

test("R-SUB-3, R-SUB-4: no gap and no duplicate when events arrive while the snapshot is being read (slow store reads)", async () => {
  const slowCtl = controlledAgent();
  const repository = new RacyReadRepository();
  const slow = await startA2AServer({ agent: slowCtl.agent, repository });
  try {
    const readers = await hammer(slow, slowCtl, 400, 40);
    for (const r of readers) expectNoGapNoDuplicate(r, 400);
    expect(repository.raced).toBeGreaterThan(10); // writes really landed during snapshot reads
    expect(slow.app.hub.listenerCount()).toBe(0);
  } finally {
    await slow.close();
  }
});

test("R-SUB-5: 25 streams on one task all get every event in the same order; cancelling one leaves the others and the task alone", async () => {
  const { taskId, run, creator } = await workingTask();
  const readers = Array.from({ length: 25 }, () => subscribe(s, taskId));
  await Promise.all(readers.map((r) => r.waitFor(1)));
  expect(s.app.hub.listenerCount(taskId)).toBe(26);
  for (let i = 0; i < 10; i++) await run.ctx.artifact({ artifactId: `a${i}`, name: `n${i}`, parts: [`p${i}`] });
  await Promise.all(readers.map((r) => r.waitFor(11)));
  const leaver = readers[7]!;
  leaver.call.cancel();
  await until(() => s.app.hub.listenerCount(taskId) === 25, "the cancelled stream's listener to go");
  expect((await leaver.ended).code).toBe(grpc.status.CANCELLED);
  for (let i = 10; i < 20; i++) await run.ctx.artifact({ artifactId: `a${i}`, name: `n${i}`, parts: [`p${i}`] });
  await run.ctx.complete("done");
  run.finish();
  const stayers = readers.filter((r) => r !== leaver);
  for (const e of await Promise.all(stayers.map((r) => r.ended))) expect(e.code).toBe(grpc.status.OK);
  await creator.ended;
  const expected = [
    `task:${TaskState.TASK_STATE_WORKING}`,
    ...Array.from({ length: 20 }, (_, i) => `artifact:a${i}:n${i}`),
    `status:${TaskState.TASK_STATE_COMPLETED}:done`,
  ];
  for (const r of stayers) expect(r.events.map(describeEvent)).toEqual(expected);
  expect(creator.events.map(describeEvent).slice(2)).toEqual(expected.slice(1));
  expect(leaver.events.map(describeEvent)).toEqual(expected.slice(0, 11));
  const { response } = await unary(s.client, s.client.getTask, { tenant: "", id: taskId, historyLength: undefined }, s.metadata());
  expect(response!.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
  expect(response!.artifacts).toHaveLength(20);
  expect(s.app.hub.listenerCount()).toBe(0);
});
