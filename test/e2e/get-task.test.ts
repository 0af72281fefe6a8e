/**
 * GetTask (R-GET, R-HIST) and tenant scoping through the real gRPC server.
 */
import * as grpc from "@grpc/grpc-js";
import { createDemoAgent } from "../../src/agents/demo/demo-agent.js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import { Role, TaskState, dispatchAgent, expectA2AError, gate, partsText, rpc, sendForTask, sendRequest, textOf, userMessage } from "./e2e-helpers.js";

let demo: A2ATestServer;
let scripted: A2ATestServer;
const agents = dispatchAgent();

beforeAll(async () => {
  demo = await startA2AServer({ agent: createDemoAgent({ stepDelayMs: 0, tickMs: 5 }) });
  scripted = await startA2AServer({ agent: agents.agent });
});
afterAll(async () => {
  await demo.close();
  await scripted.close();
});

test("R-GET-1: GetTask returns the task as stored: status, assembled artifacts and history, the same as the blocking answer", async () => {
  const sent = await sendForTask(demo, userMessage("story"));
  const { response, error } = await rpc(demo).get({ id: sent.id });
  expect(error).toBeUndefined();
  expect(response).toEqual(sent);
  expect(partsText(response!.artifacts[0]!.parts)).toMatch(/^Once upon a time.*The end\.$/s);
});

test("R-GET-1: GetTask during the work shows the current state and the artifacts so far", async () => {
  const release = gate();
  const word = agents.on(async (ctx) => {
    await ctx.working("chunk one is out");
    await ctx.artifact({ artifactId: "doc", parts: ["part 1 "] });
    await release.promise;
    await ctx.artifact({ artifactId: "doc", parts: ["part 2"] }, { append: true, lastChunk: true });
    await ctx.complete();
  });
  const pending = rpc(scripted).send(sendRequest(userMessage(word)));
  let current;
  for (;;) {
    const page = (await rpc(scripted).list({ status: TaskState.TASK_STATE_WORKING, includeArtifacts: true })).response!;
    current = page.tasks.find((t) => t.artifacts.length > 0);
    if (current) break;
    await new Promise((r) => setImmediate(r));
  }
  const midway = (await rpc(scripted).get({ id: current.id })).response!;
  expect(midway.status!.state).toBe(TaskState.TASK_STATE_WORKING);
  expect(textOf(midway.status!.message)).toBe("chunk one is out");
  expect(midway.artifacts.map((a) => partsText(a.parts))).toEqual(["part 1 "]);
  release.open();
  await pending;
  const after = (await rpc(scripted).get({ id: current.id })).response!;
  expect(after.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
  expect(after.artifacts.map((a) => partsText(a.parts))).toEqual(["part 1 part 2"]);
});

test("R-HIST-1..3: GetTask history_length unset / 0 / N returns all / none / the N most recent", async () => {
  const opened = await sendForTask(demo, userMessage("trip"));
  await sendForTask(demo, userMessage("Lisbon", { taskId: opened.id }));
  const all = (await rpc(demo).get({ id: opened.id })).response!.history;
  // trip, "Planning a trip.", question, Lisbon, "Looking up flights...", "Your trip ... is planned."
  expect(all.map((m) => m.role)).toEqual([Role.ROLE_USER, Role.ROLE_AGENT, Role.ROLE_AGENT, Role.ROLE_USER, Role.ROLE_AGENT, Role.ROLE_AGENT]);
  expect((await rpc(demo).get({ id: opened.id, historyLength: 0 })).response!.history).toEqual([]);
  expect((await rpc(demo).get({ id: opened.id, historyLength: 2 })).response!.history).toEqual(all.slice(-2));
  expect((await rpc(demo).get({ id: opened.id, historyLength: 1 })).response!.history).toEqual(all.slice(-1));
  expect((await rpc(demo).get({ id: opened.id, historyLength: 100 })).response!.history).toEqual(all);
  // A cap on what is returned, never on what is stored.
  expect((await rpc(demo).get({ id: opened.id })).response!.history).toHaveLength(6);
});

test("R-GET-2: an unknown task id is NOT_FOUND / TASK_NOT_FOUND with the id in the metadata and the message", async () => {
  const { error } = await rpc(demo).get({ id: "no-such-task" });
  const info = expectA2AError(error, grpc.status.NOT_FOUND, "TASK_NOT_FOUND");
  expect(info.metadata).toEqual({ task_id: "no-such-task" });
  expect(error!.details).toContain("no-such-task");
});

describe("A-22: tenant is part of the scope", () => {
  test("A-22 / R-GET-2: a task made under tenant a is NOT_FOUND under tenant b (or none), exactly like an unknown id", async () => {
    const task = await sendForTask(demo, userMessage("story"), undefined, "a");
    expect((await rpc(demo).get({ id: task.id, tenant: "a" })).response!.id).toBe(task.id);
    for (const tenant of ["b", ""]) {
      const hidden = await rpc(demo).get({ id: task.id, tenant });
      const unknown = await rpc(demo).get({ id: "x".repeat(task.id.length), tenant });
      expectA2AError(hidden.error, grpc.status.NOT_FOUND, "TASK_NOT_FOUND");
      expect(hidden.error!.details.replace(task.id, "ID")).toBe(unknown.error!.details.replace("x".repeat(task.id.length), "ID"));
    }
  });

  test("A-22 / R-LIST-1: ListTasks under one tenant never shows another tenant's tasks", async () => {
    const a = await sendForTask(demo, userMessage("story", { contextId: "ctx-tenants" }), undefined, "a");
    const b = await sendForTask(demo, userMessage("story", { contextId: "ctx-tenants" }), undefined, "b");
    const underA = (await rpc(demo).list({ tenant: "a", contextId: "ctx-tenants" })).response!;
    const underB = (await rpc(demo).list({ tenant: "b", contextId: "ctx-tenants" })).response!;
    expect(underA.tasks.map((t) => t.id)).toEqual([a.id]);
    expect(underB.tasks.map((t) => t.id)).toEqual([b.id]);
    expect((await rpc(demo).list({ contextId: "ctx-tenants" })).response!.totalSize).toBe(0);
  });

  test("A-22 / R-CANCEL-4 / R-SEND-11: cancel and follow-up under another tenant are NOT_FOUND, and the task is untouched", async () => {
    const opened = await sendForTask(demo, userMessage("trip"), undefined, "a");
    expectA2AError((await rpc(demo).cancel({ id: opened.id, tenant: "b" })).error, grpc.status.NOT_FOUND, "TASK_NOT_FOUND");
    const followUp = await rpc(demo).send(sendRequest(userMessage("Oslo", { taskId: opened.id }), undefined, "b"));
    expectA2AError(followUp.error, grpc.status.NOT_FOUND, "TASK_NOT_FOUND");
    const stored = (await rpc(demo).get({ id: opened.id, tenant: "a" })).response!;
    expect(stored.status).toEqual(opened.status);
    expect(stored.history).toEqual(opened.history);
  });

  test("A-22 / R-SEND-15: another tenant's task is not handed to the agent as a reference", async () => {
    const finish = agents.on(async (ctx) => (await ctx.working(), ctx.complete()));
    const hidden = await sendForTask(scripted, userMessage(finish), undefined, "a");
    let seen: string[] | undefined;
    const word = agents.on(async (ctx) => {
      seen = ctx.referenceTasks.map((t) => t.id);
      await ctx.reply("ok");
    });
    const visible = await sendForTask(scripted, userMessage(finish), undefined, "b");
    await rpc(scripted).send(sendRequest(userMessage(word, { referenceTaskIds: [hidden.id, visible.id] }), undefined, "b"));
    expect(seen).toEqual([visible.id]);
  });
});
