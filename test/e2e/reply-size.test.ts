/**
 * A-34 through the real gRPC server with a small A2A_MAX_MESSAGE_BYTES (64 KiB): ListTasks pages
 * end early to fit in one reply, and an agent cannot grow a task past the task size limit
 * (64 KiB less a quarter: 48 KiB), so every reply stays receivable.
 */
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import type { Task } from "../../gen/ts-proto/lf/a2a/v1/a2a.js";
import * as grpc from "@grpc/grpc-js";
import { MemoryTaskRepository } from "../../src/storage/memory/memory-task-repository.js";
import { TaskState, dispatchAgent, rpc, sendForTask, statusDetails, textOf, userMessage } from "./e2e-helpers.js";

const MAX_MESSAGE_BYTES = 64 * 1024;
const TASK_LIMIT = 48 * 1024;
let s: A2ATestServer;
const agents = dispatchAgent();
/** One artifact of 5 KiB: 40 such tasks make about 200 KiB, three times the maximum message size. */
const FIVE_KIB = agents.on(async (ctx) => {
  await ctx.artifact({ artifactId: "out", parts: ["x".repeat(5 * 1024)] }, { lastChunk: true });
  await ctx.complete("done");
});
/** Writes 10 KiB artifacts until one is refused, then completes saying what it was told. */
let refusal: unknown;
let accepted = 0;
const GREEDY = agents.on(async (ctx) => {
  accepted = 0;
  try {
    for (let i = 0; i < 100; i++) {
      await ctx.artifact({ artifactId: `a${i}`, parts: ["y".repeat(10 * 1024)] });
      accepted++;
    }
  } catch (error) {
    refusal = error;
  }
  await ctx.complete(`stopped after ${accepted} artifacts`);
});
/** Does not catch the refusal: the run ends with the error. */
const CARELESS = agents.on(async (ctx) => {
  for (let i = 0; i < 100; i++) await ctx.artifact({ artifactId: `a${i}`, parts: ["z".repeat(10 * 1024)] });
  await ctx.complete("never reached");
});

beforeAll(async () => {
  s = await startA2AServer({ agent: agents.agent, env: { A2A_MAX_MESSAGE_BYTES: String(MAX_MESSAGE_BYTES) } });
});
afterAll(() => s.close());

test("A-34: a ListTasks over tasks larger in total than the maximum message size comes back in several pages, each within it, covering every task exactly once", async () => {
  const made: Task[] = [];
  for (let i = 0; i < 40; i += 10) {
    made.push(...(await Promise.all(Array.from({ length: 10 }, () => sendForTask(s, userMessage(FIVE_KIB, { contextId: "ctx-sizes" }))))));
  }
  const seen: string[] = [];
  const pages: number[] = [];
  let pageToken = "";
  for (let page = 0; page < 100; page++) {
    const { response, error } = await rpc(s).list({ contextId: "ctx-sizes", pageSize: 100, includeArtifacts: true, pageToken });
    expect(error).toBeUndefined();
    expect(response!.totalSize).toBe(40);
    for (const task of response!.tasks) expect(task.artifacts[0]!.parts).toHaveLength(1);
    seen.push(...response!.tasks.map((t) => t.id));
    pages.push(response!.tasks.length);
    if (response!.nextPageToken === "") break;
    pageToken = response!.nextPageToken;
  }
  expect(pages.length).toBeGreaterThanOrEqual(4); // 200 KiB in replies of at most 64 KiB
  for (const n of pages) expect(n).toBeLessThanOrEqual(12);
  expect(seen).toHaveLength(40);
  expect(new Set(seen)).toEqual(new Set(made.map((t) => t.id)));
  // Without artifacts the same tasks are small: one page holds them all.
  const small = (await rpc(s).list({ contextId: "ctx-sizes", pageSize: 100 })).response!;
  expect(small.tasks).toHaveLength(40);
  expect(small.nextPageToken).toBe("");
});

test("A-34: an agent write that would grow the task past the task size limit is refused to the agent with an error naming the limit, logged, and the task stays as it was; the blocking reply is receivable", async () => {
  const { response, error } = await rpc(s).send({ message: userMessage(GREEDY), tenant: "" } as never);
  expect(error).toBeUndefined();
  const task = response!.payload!.$case === "task" ? response!.payload!.value : undefined;
  expect(task!.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
  expect(refusal).toBeInstanceOf(Error);
  expect((refusal as Error).message).toContain(`task size limit of ${TASK_LIMIT} bytes`);
  expect(accepted).toBeGreaterThanOrEqual(3);
  expect(accepted).toBeLessThan(5); // 10 KiB each under a 48 KiB limit
  expect(textOf(task!.status!.message)).toBe(`stopped after ${accepted} artifacts`);
  // Nothing of the refused write is kept: exactly the accepted artifacts, and GetTask can read it.
  const stored = (await rpc(s).get({ id: task!.id })).response!;
  expect(stored.artifacts.map((a) => a.artifactId)).toEqual(Array.from({ length: accepted }, (_, i) => `a${i}`));
  const logged = s.lines.find((l) => l.task_id === task!.id && /refused an agent event/.test(String(l.msg)));
  expect(logged).toBeDefined();
});

test("A-34: an agent that does not catch the refusal fails its task, and the blocking client receives that FAILED task saying why", async () => {
  const { response, error } = await rpc(s).send({ message: userMessage(CARELESS), tenant: "" } as never);
  expect(error).toBeUndefined();
  const task = response!.payload!.$case === "task" ? response!.payload!.value : undefined;
  expect(task!.status!.state).toBe(TaskState.TASK_STATE_FAILED);
  expect(textOf(task!.status!.message)).toContain(`task size limit of ${TASK_LIMIT} bytes`);
  expect(task!.artifacts.length).toBeLessThan(5);
  expect((await rpc(s).get({ id: task!.id })).response!.status!.state).toBe(TaskState.TASK_STATE_FAILED);
});

test("A-34: a task stored before the limit was lowered, too large for one reply on its own, is a clear RESOURCE_EXHAUSTED on ListTasks, and listing without its artifacts still works", async () => {
  const BIG = agents.on(async (ctx) => {
    await ctx.artifact({ artifactId: "big", parts: ["w".repeat(100 * 1024)] }, { lastChunk: true });
    await ctx.complete();
  });
  const repository = new MemoryTaskRepository();
  const roomy = await startA2AServer({ agent: agents.agent, repository }); // 4 MiB by default
  const tight = await startA2AServer({ agent: agents.agent, repository, env: { A2A_MAX_MESSAGE_BYTES: String(MAX_MESSAGE_BYTES) } });
  try {
    const big = await sendForTask(roomy, userMessage(BIG, { contextId: "ctx-big-one" }));
    const { error } = await rpc(tight).list({ contextId: "ctx-big-one", includeArtifacts: true });
    expect(error!.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(error!.details).toContain(`task ${big.id} is`);
    expect(error!.details).toContain(`maximum message size of ${MAX_MESSAGE_BYTES} bytes`);
    expect(statusDetails(error!).info?.reason).toBe("REPLY_TOO_LARGE");
    const bare = (await rpc(tight).list({ contextId: "ctx-big-one" })).response!;
    expect(bare.tasks.map((t) => t.id)).toEqual([big.id]);
  } finally {
    await tight.close();
    await roomy.close();
  }
});
