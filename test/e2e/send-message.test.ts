/**
 * SendMessage through the real gRPC server and the independent ts-proto client: payload kinds,
 * blocking and return_immediately, history_length, context and task ids, follow-ups.
 * The demo agent shows the ordinary flows; a scripted agent controls timing exactly.
 */
import * as grpc from "@grpc/grpc-js";
import { createDemoAgent, TRIP_QUESTION } from "../../src/agents/demo/demo-agent.js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import {
  Role,
  TaskState,
  dispatchAgent,
  expectA2AError,
  expectBadField,
  gate,
  messageOf,
  partsText,
  rpc,
  sendForTask,
  sendRequest,
  taskOf,
  textOf,
  userMessage,
} from "./e2e-helpers.js";

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

describe("payload and blocking", () => {
  test("R-SEND-1: a message-only answer comes back as the message payload with a generated context id (R-CTX-1)", async () => {
    const sent = userMessage("hello there");
    const { response, error } = await rpc(demo).send(sendRequest(sent));
    expect(error).toBeUndefined();
    const message = messageOf(response!);
    expect(message.role).toBe(Role.ROLE_AGENT);
    expect(message.contextId).not.toBe("");
    expect(textOf(message)).toContain("hello there");
  });

  test("R-SEND-13 / R-SEND-14: agent messages get server-made ids, role AGENT, the context id, and no task id when there is no task", async () => {
    const a = messageOf((await rpc(demo).send(sendRequest(userMessage("hello", { contextId: "ctx-r-send-14" })))).response!);
    const b = messageOf((await rpc(demo).send(sendRequest(userMessage("hello", { contextId: "ctx-r-send-14" })))).response!);
    for (const m of [a, b]) {
      expect(m).toMatchObject({ role: Role.ROLE_AGENT, contextId: "ctx-r-send-14", taskId: "" });
      expect(m.messageId).not.toBe("");
    }
    expect(a.messageId).not.toBe(b.messageId);
  });

  test("R-SEND-1 / R-SEND-2 / R-ART-3: a task answer waits until COMPLETED and carries the chunked artifact assembled", async () => {
    const sent = userMessage("story");
    const task = await sendForTask(demo, sent);
    expect(task.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(task.id).not.toBe("");
    expect(task.contextId).not.toBe("");
    expect(task.status!.timestamp).toBeDefined();
    expect(task.artifacts).toHaveLength(1);
    const story = task.artifacts[0]!;
    expect(story.artifactId).toBe("story");
    expect(story.parts).toHaveLength(4);
    const text = partsText(story.parts);
    expect(text.startsWith("Once upon a time")).toBe(true);
    expect(text.endsWith("The end.")).toBe(true);
    expect(textOf(task.status!.message)).toBe("The story is complete.");
    // The client's message is recorded in history, as sent.
    expect(task.history[0]).toMatchObject({ messageId: sent.messageId, role: Role.ROLE_USER, taskId: task.id, contextId: task.contextId });
  });

  test("R-SEND-2 / A-1: a blocking call does not answer while the task works, then answers with the latest status and all artifacts", async () => {
    const release = gate();
    let answered = false;
    const word = agents.on(async (ctx) => {
      await ctx.working("started");
      await ctx.artifact({ artifactId: "a", parts: ["one "] });
      await release.promise;
      await ctx.artifact({ artifactId: "a", parts: ["two"] }, { append: true, lastChunk: true });
      await ctx.artifact({ artifactId: "b", parts: ["other"] }, { lastChunk: true });
      await ctx.complete("done");
    });
    const pending = rpc(scripted)
      .send(sendRequest(userMessage(word)))
      .then((r) => ((answered = true), r));
    // The task exists and works, yet the blocking call has not answered.
    const listed = await waitForState(scripted, TaskState.TASK_STATE_WORKING);
    expect(listed).toBeDefined();
    expect(answered).toBe(false);
    release.open();
    const task = taskOf((await pending).response!);
    expect(task.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(task.status!.message)).toBe("done");
    expect(task.artifacts.map((a) => [a.artifactId, a.parts.map((p) => (p.content?.$case === "text" ? p.content.value : ""))])).toEqual([
      ["a", ["one ", "two"]],
      ["b", ["other"]],
    ]);
  });

  test("R-SEND-3 / A-1: return_immediately answers while the task is SUBMITTED or WORKING, with the user's message in its history", async () => {
    const release = gate();
    const finished = gate();
    const word = agents.on(async (ctx) => {
      await ctx.working();
      await release.promise;
      await ctx.complete("finished later");
      finished.open();
    });
    const sent = userMessage(word);
    const task = await sendForTask(scripted, sent, { returnImmediately: true });
    expect([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING]).toContain(task.status!.state);
    expect(task.history.map((m) => m.messageId)).toContain(sent.messageId);
    release.open();
    await finished.promise;
    const later = await rpc(scripted).get({ id: task.id });
    expect(later.response!.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  test("R-SEND-2 / A-1: a blocking call answers at INPUT_REQUIRED (interrupted), with the agent's question", async () => {
    const task = await sendForTask(demo, userMessage("trip"));
    expect(task.status!.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(textOf(task.status!.message)).toBe(TRIP_QUESTION);
    // R-SEND-13 / R-SEND-14: the agent's status message belongs to the task.
    expect(task.status!.message).toMatchObject({ role: Role.ROLE_AGENT, taskId: task.id, contextId: task.contextId });
    expect(task.status!.message!.messageId).not.toBe("");
    expect(task.history.map((m) => m.messageId)).not.toContain("");
  });
});

describe("history_length (R-SEND-5, R-HIST)", () => {
  test("R-HIST-1: unset returns the whole history (user message, then the agent's status messages)", async () => {
    const task = await sendForTask(demo, userMessage("story"));
    expect(task.history.map((m) => m.role)).toEqual([Role.ROLE_USER, Role.ROLE_AGENT, Role.ROLE_AGENT]);
  });

  test("R-SEND-5 / R-HIST-2: history_length 0 returns no history", async () => {
    const task = await sendForTask(demo, userMessage("story"), { historyLength: 0 });
    expect(task.history).toEqual([]);
    expect(task.artifacts).toHaveLength(1); // the cap is on history only
  });

  test("R-SEND-5 / R-HIST-3: history_length N returns the N most recent messages", async () => {
    const one = await sendForTask(demo, userMessage("story"), { historyLength: 1 });
    expect(one.history.map(textOf)).toEqual(["The story is complete."]);
    const two = await sendForTask(demo, userMessage("story"), { historyLength: 2 });
    expect(two.history.map(textOf)).toEqual(["Writing a story.", "The story is complete."]);
    const many = await sendForTask(demo, userMessage("story"), { historyLength: 50 });
    expect(many.history).toHaveLength(3);
  });
});

describe("context and task ids (R-CTX)", () => {
  test("R-CTX-1: without a context id the server generates one and returns it in the task", async () => {
    const a = await sendForTask(demo, userMessage("story"));
    const b = await sendForTask(demo, userMessage("story"));
    expect(a.contextId).not.toBe("");
    expect(a.contextId).not.toBe(b.contextId);
    expect(a.history[0]!.contextId).toBe(a.contextId);
  });

  test("R-CTX-2: a client context id is accepted and kept, for a message answer and a task", async () => {
    const message = messageOf((await rpc(demo).send(sendRequest(userMessage("hello", { contextId: "client-ctx-1" })))).response!);
    expect(message.contextId).toBe("client-ctx-1");
    const task = await sendForTask(demo, userMessage("story", { contextId: "client-ctx-1" }));
    expect(task.contextId).toBe("client-ctx-1");
  });

  test("R-CTX-3 / R-SEND-11: task ids are the server's: a client task id that does not exist is NOT_FOUND / TASK_NOT_FOUND and makes no task", async () => {
    const before = (await rpc(demo).list()).response!.totalSize;
    const { error } = await rpc(demo).send(sendRequest(userMessage("story", { taskId: "my-own-task-id" })));
    const info = expectA2AError(error, grpc.status.NOT_FOUND, "TASK_NOT_FOUND");
    expect(info.metadata["task_id"]).toBe("my-own-task-id");
    expect((await rpc(demo).list()).response!.totalSize).toBe(before);
    expect((await rpc(demo).get({ id: "my-own-task-id" })).error!.code).toBe(grpc.status.NOT_FOUND);
  });

  test("R-CTX-6: a context id without a task id opens a new task in that conversation; parallel sends each get their own task", async () => {
    const first = await sendForTask(demo, userMessage("story", { contextId: "ctx-parallel" }));
    const parallel = await Promise.all([1, 2, 3].map(() => sendForTask(demo, userMessage("story", { contextId: "ctx-parallel" }))));
    const ids = new Set([first, ...parallel].map((t) => t.id));
    expect(ids.size).toBe(4);
    for (const t of parallel) expect(t).toMatchObject({ contextId: "ctx-parallel", status: { state: TaskState.TASK_STATE_COMPLETED } });
    const listed = await rpc(demo).list({ contextId: "ctx-parallel" });
    expect(listed.response!.totalSize).toBe(4);
  });
});

describe("follow-ups", () => {
  test("R-SEND-12 / R-CTX-4: INPUT_REQUIRED, then a follow-up with only the task id continues the task (context inferred) to COMPLETED", async () => {
    const opened = await sendForTask(demo, userMessage("trip"));
    expect(opened.status!.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const answer = userMessage("Paris", { taskId: opened.id });
    const done = await sendForTask(demo, answer);
    expect(done.id).toBe(opened.id);
    expect(done.contextId).toBe(opened.contextId);
    expect(done.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(done.artifacts.map((a) => a.artifactId)).toEqual(["itinerary"]);
    expect(partsText(done.artifacts[0]!.parts)).toContain("Paris");
    // Both user messages are in history, the follow-up with the task's context id.
    const users = done.history.filter((m) => m.role === Role.ROLE_USER);
    expect(users.map((m) => m.messageId)).toEqual([opened.history[0]!.messageId, answer.messageId]);
    expect(users[1]!.contextId).toBe(opened.contextId);
  });

  test("R-SEND-12: a follow-up that names the task's own context id is accepted too", async () => {
    const opened = await sendForTask(demo, userMessage("trip"));
    const done = await sendForTask(demo, userMessage("Rome", { taskId: opened.id, contextId: opened.contextId }));
    expect(done.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  test("R-IAUTH-4: a message to an AUTH_REQUIRED task is accepted and the task continues", async () => {
    const opened = await sendForTask(demo, userMessage("auth"));
    expect(opened.status!.state).toBe(TaskState.TASK_STATE_AUTH_REQUIRED);
    expect(textOf(opened.status!.message)).toMatch(/Authorization required/);
    const done = await sendForTask(demo, userMessage("authorized now", { taskId: opened.id }));
    expect(done.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  test("A-6 / R-CTX-5: a follow-up whose context id differs from the task's is INVALID_ARGUMENT on message.context_id; the task is unchanged", async () => {
    const opened = await sendForTask(demo, userMessage("trip"));
    const { error } = await rpc(demo).send(sendRequest(userMessage("Paris", { taskId: opened.id, contextId: "some-other-context" })));
    const description = expectBadField(error, "message.context_id");
    expect(description).toContain(opened.contextId);
    const after = (await rpc(demo).get({ id: opened.id })).response!;
    expect(after.status).toEqual(opened.status);
    expect(after.history).toEqual(opened.history);
  });

  test("A-5 / R-SEND-10 / R-TASK-2: a message to a terminal task is FAILED_PRECONDITION / UNSUPPORTED_OPERATION and the task stays as it was", async () => {
    for (const opener of ["story", "reject", "fail"]) {
      const finished = await sendForTask(demo, userMessage(opener));
      const before = (await rpc(demo).get({ id: finished.id })).response!;
      const { error } = await rpc(demo).send(sendRequest(userMessage("more please", { taskId: finished.id })));
      const info = expectA2AError(error, grpc.status.FAILED_PRECONDITION, "UNSUPPORTED_OPERATION");
      expect(info.metadata["task_id"]).toBe(finished.id);
      expect(error!.details).toMatch(/new task/);
      expect((await rpc(demo).get({ id: finished.id })).response).toEqual(before);
    }
  });

  test("R-SEND-15: referenced tasks reach the agent (ids the caller cannot see are left out)", async () => {
    const earlier = await sendForTask(demo, userMessage("story"));
    let seen: string[] = [];
    const word = agents.on(async (ctx) => {
      seen = ctx.referenceTasks.map((t) => `${t.id}:${t.status!.state}`);
      await ctx.reply("noted");
    });
    // Through the demo agent: the answer names the referenced task and its state.
    const reply = messageOf((await rpc(demo).send(sendRequest(userMessage("hello", { referenceTaskIds: [earlier.id, "unknown-task"] })))).response!);
    expect(textOf(reply)).toContain(`Referenced tasks: ${earlier.id} (TASK_STATE_COMPLETED)`);
    expect(textOf(reply)).not.toContain("unknown-task");
    // Through a scripted agent: ctx.referenceTasks holds the stored tasks.
    const other = await sendForScripted(async (ctx) => {
      await ctx.working();
      await ctx.complete();
    });
    await rpc(scripted).send(sendRequest(userMessage(word, { referenceTaskIds: [other.id, "unknown-task"] })));
    expect(seen).toEqual([`${other.id}:${TaskState.TASK_STATE_COMPLETED}`]);
  });
});

async function sendForScripted(fn: Parameters<typeof agents.on>[0]) {
  return sendForTask(scripted, userMessage(agents.on(fn)));
}

/** Waits (by listing, event-loop ticks apart) until some task of the scripted server is in `state`. */
async function waitForState(s: A2ATestServer, state: TaskState) {
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    const page = (await rpc(s).list({ status: state })).response!;
    if (page.tasks.length > 0) return page.tasks[0];
    await new Promise((r) => setImmediate(r));
  }
  throw new Error(`no task reached ${TaskState[state]}`);
}
