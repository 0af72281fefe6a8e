/**
 * CancelTask (R-CANCEL-1..5, A-4) through the real gRPC server.
 */
import * as grpc from "@grpc/grpc-js";
import type { JsonObject } from "@bufbuild/protobuf";
import { createDemoAgent } from "../../src/agents/demo/demo-agent.js";
import type { Task as EsTask } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { AgentContext, Caller } from "../../src/lifecycle/ports/agent.js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import { TaskState, dispatchAgent, expectA2AError, gate, rpc, sendForTask, sendRequest, taskOf, userMessage } from "./e2e-helpers.js";

const hookCalls: Array<{ task: EsTask; caller: Caller; metadata: JsonObject | undefined }> = [];
const agents = dispatchAgent(
  {},
  {
    async cancel(task, caller, metadata) {
      hookCalls.push({ task, caller, metadata });
    },
  },
);
let s: A2ATestServer;
let demo: A2ATestServer;

beforeAll(async () => {
  s = await startA2AServer({ agent: agents.agent });
  demo = await startA2AServer({ agent: createDemoAgent({ stepDelayMs: 0, tickMs: 5 }) });
});
afterAll(async () => {
  await s.close();
  await demo.close();
});

/**
 * A behaviour that works until its signal aborts, and reports the abort reason. `onAbort`
 * is what the agent does then: stop quietly, or (a common pattern: an aborted fetch lands
 * in a catch block) try to fail or finish the task, which the cancel must win over.
 */
function untilCanceled(onAbort: (ctx: AgentContext) => Promise<void> = async () => {}) {
  const aborted = gate<string>();
  const done = gate();
  const word = agents.on(async (ctx) => {
    await ctx.working("working until canceled");
    await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve(), { once: true }));
    aborted.open(String((ctx.signal.reason as Error)?.message));
    await onAbort(ctx).catch(() => undefined);
    done.open();
  });
  return { word, aborted: aborted.promise, done: done.promise };
}

async function firstWorking() {
  for (;;) {
    const task = (await rpc(s).list({ status: TaskState.TASK_STATE_WORKING })).response!.tasks[0];
    if (task) return task;
    await new Promise((r) => setImmediate(r));
  }
}

test("R-CANCEL-1: a running task becomes CANCELED, the agent's signal aborts, and a blocking caller gets the CANCELED task", async () => {
  const { word, aborted } = untilCanceled();
  const blocking = rpc(s).send(sendRequest(userMessage(word)));
  const running = await firstWorking();
  const { response, error } = await rpc(s).cancel({ id: running.id });
  expect(error).toBeUndefined();
  expect(response!.status!.state).toBe(TaskState.TASK_STATE_CANCELED);
  expect(await aborted).toMatch(/canceled/);
  expect(taskOf((await blocking).response!).status!.state).toBe(TaskState.TASK_STATE_CANCELED);
  expect((await rpc(s).get({ id: running.id })).response!.status!.state).toBe(TaskState.TASK_STATE_CANCELED);
});

test("R-CANCEL-5 / agent interface: a running task is stopped through ctx.signal and the cancel hook runs too (agent.ts)", async () => {
  const { word, done } = untilCanceled();
  const task = await sendForTask(s, userMessage(word), { returnImmediately: true });
  expect((await rpc(s).cancel({ id: task.id })).response!.status!.state).toBe(TaskState.TASK_STATE_CANCELED);
  await done;
  expect(hookCalls.filter((c) => c.task.id === task.id).map((c) => c.task.id)).toEqual([task.id]);
});

test("R-CANCEL-1: the demo's long task is canceled mid-way and never reports", async () => {
  const task = await sendForTask(demo, userMessage("long 60"), { returnImmediately: true });
  const canceled = (await rpc(demo).cancel({ id: task.id })).response!;
  expect(canceled.status!.state).toBe(TaskState.TASK_STATE_CANCELED);
  expect(canceled.artifacts).toEqual([]);
});

test("R-CANCEL-1 / R-CANCEL-5: an interrupted task is CANCELED and the agent's cancel hook gets the task, the caller and the request metadata", async () => {
  const word = agents.on(async (ctx) => {
    await ctx.working();
    await ctx.requireInput("waiting for you");
  });
  const opened = await sendForTask(s, userMessage(word), undefined, "tenant-x");
  expect(opened.status!.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
  const { response } = await rpc(s).cancel({ id: opened.id, tenant: "tenant-x", metadata: { reason: "user closed the tab", attempt: 1 } });
  expect(response!.status!.state).toBe(TaskState.TASK_STATE_CANCELED);
  const call = hookCalls.find((c) => c.task.id === opened.id);
  expect(call).toBeDefined();
  expect(call!.metadata).toEqual({ reason: "user closed the tab", attempt: 1 });
  expect(call!.caller.tenant).toBe("tenant-x");
  expect(call!.task.status!.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
});

test("A-4 / R-CANCEL-3: canceling a CANCELED task again returns the same task", async () => {
  const task = await sendForTask(demo, userMessage("auth"));
  const first = (await rpc(demo).cancel({ id: task.id })).response!;
  const second = await rpc(demo).cancel({ id: task.id });
  expect(second.error).toBeUndefined();
  expect(second.response).toEqual(first);
  expect((await rpc(demo).get({ id: task.id })).response).toEqual(first);
});

test("A-4 / R-CANCEL-2: COMPLETED, FAILED and REJECTED tasks are FAILED_PRECONDITION / TASK_NOT_CANCELABLE and stay as they are", async () => {
  const expected = { story: "TASK_STATE_COMPLETED", fail: "TASK_STATE_FAILED", reject: "TASK_STATE_REJECTED" };
  for (const [opener, state] of Object.entries(expected)) {
    const task = await sendForTask(demo, userMessage(opener));
    const { error } = await rpc(demo).cancel({ id: task.id });
    const info = expectA2AError(error, grpc.status.FAILED_PRECONDITION, "TASK_NOT_CANCELABLE");
    expect(info.metadata).toEqual({ task_id: task.id, state });
    expect(error!.details).toContain(state);
    expect((await rpc(demo).get({ id: task.id })).response).toEqual(task);
  }
});

test("R-CANCEL-4: an unknown task is NOT_FOUND / TASK_NOT_FOUND", async () => {
  const { error } = await rpc(demo).cancel({ id: "never-existed" });
  const info = expectA2AError(error, grpc.status.NOT_FOUND, "TASK_NOT_FOUND");
  expect(info.metadata["task_id"]).toBe("never-existed");
});

test("R-CANCEL-5 / R-SEND-10: a canceled task is terminal: a follow-up is UNSUPPORTED_OPERATION", async () => {
  const task = await sendForTask(demo, userMessage("trip"));
  await rpc(demo).cancel({ id: task.id });
  const { error } = await rpc(demo).send(sendRequest(userMessage("Paris", { taskId: task.id })));
  expectA2AError(error, grpc.status.FAILED_PRECONDITION, "UNSUPPORTED_OPERATION");
});

test("R-CANCEL-1: concurrent cancels of one running task all answer CANCELED", async () => {
  const { word, done } = untilCanceled();
  const task = await sendForTask(s, userMessage(word), { returnImmediately: true });
  const results = await Promise.all([1, 2, 3, 4].map(() => rpc(s).cancel({ id: task.id })));
  for (const r of results)
    expect({ state: r.response?.status?.state, error: r.error?.details }).toEqual({ state: TaskState.TASK_STATE_CANCELED, error: undefined });
  await done;
  expect((await rpc(s).get({ id: task.id })).response!.status!.state).toBe(TaskState.TASK_STATE_CANCELED);
});

// The cancel must win over what an agent writes in reaction to its aborted signal: the client
// asked for CANCELED and got an answer before the agent could react (R-CANCEL-1, R-TASK-2).
test.each([
  ["fails the task", (ctx: AgentContext) => ctx.fail("aborted: the operation was canceled")],
  ["completes the task anyway", (ctx: AgentContext) => ctx.complete("finished anyway")],
])("R-CANCEL-1: an agent that %s when its signal aborts does not beat the cancel: CANCELED, and its late update is refused", async (_what, onAbort) => {
  const { word, done } = untilCanceled(onAbort);
  const task = await sendForTask(s, userMessage(word), { returnImmediately: true });
  const { response, error } = await rpc(s).cancel({ id: task.id });
  expect({ state: response?.status?.state, error: error?.details }).toEqual({ state: TaskState.TASK_STATE_CANCELED, error: undefined });
  await done;
  expect((await rpc(s).get({ id: task.id })).response!.status!.state).toBe(TaskState.TASK_STATE_CANCELED);
});
