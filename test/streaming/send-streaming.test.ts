/**
 * SendStreamingMessage through the real server and the independent ts-proto client: order and
 * promptness of events, the closing rule, message-only answers, errors before the first
 * event, no bare messages inside a task stream, and the capability switch (R-CAP-2).
 */
import * as grpc from "@grpc/grpc-js";
import { TaskState } from "../../gen/ts-proto/lf/a2a/v1/a2a.js";
import type { AgentContext } from "../../src/lifecycle/ports/agent.js";
import { unary } from "../foundation/helpers.js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import { controlledAgent, describeEvent, sendRequest, streamSend, subscribe, taskIdOf, turn } from "./support.js";

let s: A2ATestServer;
const ctl = controlledAgent();
beforeAll(async () => {
  s = await startA2AServer({ agent: ctl.agent });
});
afterAll(() => s.close());

async function getState(taskId: string): Promise<TaskState | undefined> {
  const { response } = await unary(s.client, s.client.getTask, { tenant: "", id: taskId, historyLength: undefined }, s.metadata());
  return response?.status?.state;
}

/** A task left in the given settled state, made through a stream. */
async function taskIn(state: "completed" | "input"): Promise<string> {
  const reader = streamSend(s, sendRequest("setup"));
  const run = await ctl.nextRun();
  await run.ctx.working();
  if (state === "completed") await run.ctx.complete("done");
  else await run.ctx.requireInput("more please");
  run.finish();
  await reader.ended;
  return taskIdOf(reader);
}

test("R-STREAM-3, R-STREAM-5, R-STREAM-6: the task first, then each update as it happens (event k arrives before event k+1 exists), then OK after the terminal one", async () => {
  const reader = streamSend(s, sendRequest("work"));
  const run = await ctl.nextRun();
  await run.ctx.working("starting");
  // The task (SUBMITTED, as created) and the WORKING update.
  await reader.waitFor(2);
  expect(reader.cases()).toEqual(["task", "statusUpdate"]);
  const task = reader.events[0]!.payload!.$case === "task" ? reader.events[0]!.payload!.value : undefined;
  expect(task!.status!.state).toBe(TaskState.TASK_STATE_SUBMITTED);
  expect(task!.history.map((m) => m.parts[0]!.content)).toEqual([{ $case: "text", value: "work" }]);
  for (let k = 0; k < 5; k++) {
    await run.ctx.artifact({ artifactId: "out", name: `chunk-${k}`, parts: [`part ${k}`] }, { append: k > 0, lastChunk: k === 4 });
    // Not batched: this event reaches the client before the agent has made the next one.
    const events = await reader.waitFor(3 + k);
    const last = events[2 + k]!.payload;
    expect(last?.$case).toBe("artifactUpdate");
    if (last?.$case !== "artifactUpdate") return;
    expect(last.value).toMatchObject({ taskId: task!.id, contextId: task!.contextId, append: k > 0, lastChunk: k === 4 });
    expect(last.value.artifact?.name).toBe(`chunk-${k}`);
    expect(reader.end).toBeUndefined();
  }
  await run.ctx.complete("all done");
  run.finish();
  const end = await reader.ended;
  expect(end.code).toBe(grpc.status.OK);
  expect(reader.events.map(describeEvent)).toEqual([
    `task:${TaskState.TASK_STATE_SUBMITTED}`,
    `status:${TaskState.TASK_STATE_WORKING}:starting`,
    ...[0, 1, 2, 3, 4].map((k) => `artifact:out:chunk-${k}`),
    `status:${TaskState.TASK_STATE_COMPLETED}:all done`,
  ]);
  for (const e of reader.events.slice(1)) {
    const p = e.payload!;
    if (p.$case === "statusUpdate" || p.$case === "artifactUpdate") expect([p.value.taskId, p.value.contextId]).toEqual([task!.id, task!.contextId]);
  }
  expect(s.app.hub.listenerCount(task!.id)).toBe(0);
});

test.each([
  ["FAILED", (c: AgentContext) => c.fail("broke"), TaskState.TASK_STATE_FAILED],
  ["REJECTED", (c: AgentContext) => c.reject("no"), TaskState.TASK_STATE_REJECTED],
  ["INPUT_REQUIRED", (c: AgentContext) => c.requireInput("which city?"), TaskState.TASK_STATE_INPUT_REQUIRED],
])("A-2: the stream ends OK right after the event that moves the task to %s", async (_name, settle, state) => {
  const reader = streamSend(s, sendRequest("x"));
  const run = await ctl.nextRun();
  await run.ctx.working();
  await settle(run.ctx);
  // The stream ends although the agent's execute() has not returned yet.
  const end = await reader.ended;
  expect(end.code).toBe(grpc.status.OK);
  expect(reader.events.map((e) => e.payload?.$case)).toEqual(["task", "statusUpdate", "statusUpdate"]);
  const last = reader.events[2]!.payload;
  expect(last?.$case === "statusUpdate" && last.value.status?.state).toBe(state);
  run.finish();
  expect(await getState(taskIdOf(reader))).toBe(state);
});

test("A-2: the stream stays open through AUTH_REQUIRED and delivers what follows once credentials arrived out of band", async () => {
  const reader = streamSend(s, sendRequest("auth"));
  const run = await ctl.nextRun();
  await run.ctx.working();
  await run.ctx.requireAuth("sign in at https://example.invalid/login");
  await reader.waitFor(3);
  const auth = reader.events[2]!.payload;
  expect(auth?.$case === "statusUpdate" && auth.value.status?.state).toBe(TaskState.TASK_STATE_AUTH_REQUIRED);
  await turn();
  expect(reader.end).toBeUndefined();
  await run.ctx.working("signed in");
  await reader.waitFor(4);
  await run.ctx.complete("done");
  run.finish();
  expect((await reader.ended).code).toBe(grpc.status.OK);
  expect(reader.events.map(describeEvent)).toEqual([
    `task:${TaskState.TASK_STATE_SUBMITTED}`,
    `status:${TaskState.TASK_STATE_WORKING}:`,
    `status:${TaskState.TASK_STATE_AUTH_REQUIRED}:sign in at https://example.invalid/login`,
    `status:${TaskState.TASK_STATE_WORKING}:signed in`,
    `status:${TaskState.TASK_STATE_COMPLETED}:done`,
  ]);
});

test("R-STREAM-2: a message-only answer is exactly one message event, then the stream ends OK", async () => {
  const reader = streamSend(s, sendRequest("hi"));
  const run = await ctl.nextRun();
  await run.ctx.reply("hello there");
  const end = await reader.ended;
  run.finish();
  expect(end.code).toBe(grpc.status.OK);
  expect(reader.cases()).toEqual(["message"]);
  const message = reader.events[0]!.payload!.$case === "message" ? reader.events[0]!.payload!.value : undefined;
  expect(message!.parts[0]!.content).toEqual({ $case: "text", value: "hello there" });
  expect(message!.taskId).toBe("");
  expect(s.app.hub.listenerCount()).toBe(0);
});

test("A-18, R-STREAM-3: a follow-up on an INPUT_REQUIRED task streams the task snapshot first; agent messages travel as status.message, never as bare messages", async () => {
  const taskId = await taskIn("input");
  const reader = streamSend(s, sendRequest("Rome", { taskId }));
  const run = await ctl.nextRun();
  // A bare reply inside a task is refused to the agent; nothing reaches the stream.
  await expect(run.ctx.reply("a bare message")).rejects.toThrow(/task/);
  await run.ctx.working("booking Rome");
  await run.ctx.complete("booked");
  run.finish();
  expect((await reader.ended).code).toBe(grpc.status.OK);
  expect(reader.cases()).toEqual(["task", "statusUpdate", "statusUpdate"]);
  const snapshot = reader.events[0]!.payload!.$case === "task" ? reader.events[0]!.payload!.value : undefined;
  expect(snapshot!.id).toBe(taskId);
  expect(snapshot!.status!.state).toBe(TaskState.TASK_STATE_WORKING);
  expect(snapshot!.history.at(-1)!.parts[0]!.content).toEqual({ $case: "text", value: "Rome" });
  expect(reader.events.map(describeEvent).slice(1)).toEqual([
    `status:${TaskState.TASK_STATE_WORKING}:booking Rome`,
    `status:${TaskState.TASK_STATE_COMPLETED}:booked`,
  ]);
});

describe("R-STREAM-1: errors found before the first event are the call's status, with no event", () => {
  test("unknown task → NOT_FOUND / TASK_NOT_FOUND", async () => {
    const reader = streamSend(s, sendRequest("x", { taskId: "no-such-task" }));
    const end = await reader.ended;
    expect([end.code, end.reason]).toEqual([grpc.status.NOT_FOUND, "TASK_NOT_FOUND"]);
    expect(reader.events).toHaveLength(0);
  });

  test("terminal task → FAILED_PRECONDITION / UNSUPPORTED_OPERATION, and the task is unchanged", async () => {
    const taskId = await taskIn("completed");
    const reader = streamSend(s, sendRequest("again", { taskId }));
    const end = await reader.ended;
    expect([end.code, end.reason]).toEqual([grpc.status.FAILED_PRECONDITION, "UNSUPPORTED_OPERATION"]);
    expect(reader.events).toHaveLength(0);
    expect(await getState(taskId)).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  test("an invalid request (no parts) → INVALID_ARGUMENT", async () => {
    const request = sendRequest("x");
    request.message!.parts = [];
    const reader = streamSend(s, request);
    const end = await reader.ended;
    expect(end.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(reader.events).toHaveLength(0);
  });

  test("an agent that ends without answering → INVALID_AGENT_RESPONSE", async () => {
    const reader = streamSend(s, sendRequest("x"));
    (await ctl.nextRun()).finish();
    const end = await reader.ended;
    expect(end.reason).toBe("INVALID_AGENT_RESPONSE");
    expect(reader.events).toHaveLength(0);
  });
});

test("R-CAP-2: with A2A_STREAMING=false both streaming RPCs answer FAILED_PRECONDITION / UNSUPPORTED_OPERATION and no agent runs", async () => {
  let runs = 0;
  const off = await startA2AServer({
    env: { A2A_STREAMING: "false" },
    agent: { card: ctl.agent.card, execute: async (ctx) => (runs++, ctx.reply("no")) },
  });
  try {
    const send = streamSend(off, sendRequest("x"));
    const sub = subscribe(off, "some-task");
    for (const reader of [send, sub]) {
      const end = await reader.ended;
      expect([end.code, end.reason]).toEqual([grpc.status.FAILED_PRECONDITION, "UNSUPPORTED_OPERATION"]);
      expect(end.details).toMatch(/streaming/);
      expect(reader.events).toHaveLength(0);
    }
    expect(runs).toBe(0);
  } finally {
    await off.close();
  }
});
