/**
 * Issue 35 item 8 over gRPC: @a2a-js/sdk 0.3.14 (npm alias a2a-sdk-v03) ships a gRPC client
 * (a2a-sdk-v03/client/grpc, grpc-js with its own generated stubs of the v0.3 proto). Here it talks
 * to our a2a.v1.A2AService on the gRPC port (R-V03-2), with API-key authentication on: the key
 * travels as gRPC metadata (x-api-key) through the SDK's serviceParameters. The client is built
 * the way a v0.3 user builds it: ClientFactory reads the header-less card from the HTTP listener
 * and picks the card's GRPC 0.3 interface.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Message, MessageSendParams, Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent } from "a2a-sdk-v03";
import type { GetTaskPushNotificationConfigParams } from "a2a-sdk-v03";
import { ClientFactory, TaskNotCancelableError, TaskNotFoundError, type CallInterceptor, type Client } from "a2a-sdk-v03/client";
import { GrpcTransport, GrpcTransportFactory } from "a2a-sdk-v03/client/grpc";
import { TaskState } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { createDemoAgent } from "../../src/agents/demo/demo-agent.js";
import { apiKeyLine, newApiKey } from "../../src/auth/index.js";
import type { Agent, AgentContext } from "../../src/lifecycle/ports/agent.js";
import { gate } from "../e2e/e2e-helpers.js";
import { aborted } from "../interop/sdk-client.js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";

type StreamEvent = Message | Task | TaskStatusUpdateEvent | TaskArtifactUpdateEvent;

const aliceKey = newApiKey();
const bobKey = newApiKey();
const scripts = new Map<string, (ctx: AgentContext) => Promise<void>>();
let held = gate();
scripts.set("echo", async (ctx) => {
  await ctx.working("echoing");
  await ctx.artifact({ name: "echo", parts: ctx.message.parts.slice(1) });
  await ctx.complete("echoed");
});
scripts.set("ask", async (ctx) => {
  const answer = ctx.message.parts[1]?.content;
  if (ctx.task?.status?.state !== TaskState.INPUT_REQUIRED || answer?.case !== "text") return ctx.requireInput("what is your name?");
  await ctx.complete(`hello ${answer.value}`);
});
scripts.set("hold", async (ctx) => {
  await ctx.working("holding");
  await Promise.race([held.promise, aborted(ctx.signal)]);
  if (!ctx.signal.aborted) await ctx.complete("released");
});

let dir: string;
let s: A2ATestServer;
let base: string;
let alice: Client;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "a2a-v03-grpc-sdk-"));
  const keys = [
    apiKeyLine(aliceKey, { principal: "alice", tenants: undefined, scopes: [] }),
    apiKeyLine(bobKey, { principal: "bob", tenants: undefined, scopes: [] }),
  ];
  writeFileSync(join(dir, "keys"), `${keys.join("\n")}\n`);
  const demo = createDemoAgent({ stepDelayMs: 0, tickMs: 5 });
  const agent: Agent = {
    card: { ...demo.card, extendedCard: { description: "the extended card" } },
    execute(ctx) {
      const part = ctx.message.parts[0]?.content;
      return (scripts.get(part?.case === "text" ? part.value : "") ?? demo.execute.bind(demo))(ctx);
    },
  };
  s = await startA2AServer({
    agent,
    serveV03: true,
    advertiseBoundAddress: true,
    env: {
      A2A_HTTP_LISTEN: "127.0.0.1:0",
      A2A_AUTH: "api-key",
      A2A_API_KEYS_FILE: join(dir, "keys"),
      A2A_AUTH_FAILURE_RATE: "0",
      A2A_PUSH_ALLOW_HOSTS: "127.0.0.1",
      A2A_PUSH_ALLOW_HTTP: "true",
    },
  });
  base = `http://127.0.0.1:${s.app.cardPort}`;
  alice = await v03GrpcClient(aliceKey);
});
afterAll(async () => {
  await s.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The SDK's own way to add a credential to every call: an interceptor setting a service parameter (gRPC metadata). */
function apiKeyInterceptor(apiKey: string): CallInterceptor {
  return {
    async before(args) {
      args.options = { ...args.options, serviceParameters: { ...args.options?.serviceParameters, "x-api-key": apiKey } };
    },
    async after() {},
  };
}

/** The 0.3.14 client from the card at the server's base URL, gRPC only. */
function v03GrpcClient(apiKey?: string): Promise<Client> {
  const factory = new ClientFactory({
    transports: [new GrpcTransportFactory()],
    preferredTransports: ["GRPC"],
    clientConfig: { interceptors: apiKey === undefined ? [] : [apiKeyInterceptor(apiKey)] },
  });
  return factory.createFromUrl(base);
}

let counter = 0;
function send(texts: string[], ids: { taskId?: string; contextId?: string } = {}, configuration?: MessageSendParams["configuration"]): MessageSendParams {
  counter += 1;
  const message: Message = { kind: "message", messageId: `grpc-sdk-${counter}`, role: "user", parts: texts.map((text) => ({ kind: "text", text })), ...ids };
  return { message, ...(configuration === undefined ? {} : { configuration }) };
}

async function events(stream: AsyncGenerator<StreamEvent>): Promise<StreamEvent[]> {
  const all: StreamEvent[] = [];
  for await (const event of stream) all.push(event);
  return all;
}

const asTask = (result: Task | Message): Task => {
  if (result.kind !== "task") throw new Error(`expected a task, got ${JSON.stringify(result)}`);
  return result;
};

async function waitFor(check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("@a2a-js/sdk 0.3.14's gRPC client against a2a.v1.A2AService", () => {
  test("R-V03-6, R-V03-2: ClientFactory picks the card's GRPC 0.3 interface, the gRPC port itself", async () => {
    expect(alice.transport).toBeInstanceOf(GrpcTransport);
    const card = (await (await fetch(`${base}/.well-known/agent-card.json`)).json()) as { additionalInterfaces: unknown };
    expect(card.additionalInterfaces).toEqual(expect.arrayContaining([{ url: s.target, transport: "GRPC" }]));
  });

  test("R-V03-30: SendMessage blocking gives the completed task with its artifact and history", async () => {
    const task = asTask(await alice.sendMessage(send(["echo", "payload"])));
    expect(task.status.state).toBe("completed");
    expect(task.artifacts?.[0]?.parts).toEqual([{ kind: "text", text: "payload" }]);
    expect(task.history?.[0]).toEqual(expect.objectContaining({ kind: "message", role: "user" }));
    const read = await alice.getTask({ id: task.id });
    expect([read.id, read.status.state]).toEqual([task.id, "completed"]);
  });

  test("R-V03-32: SendStreamingMessage yields the task, status and artifact updates, and ends on the one final status update", async () => {
    const all = await events(alice.sendMessageStream(send(["echo", "x"])));
    expect(all[0]?.kind).toBe("task");
    expect(all.map((e) => e.kind)).toEqual(expect.arrayContaining(["status-update", "artifact-update"]));
    const updates = all.filter((e): e is TaskStatusUpdateEvent => e.kind === "status-update");
    expect(updates.filter((e) => e.final)).toHaveLength(1);
    expect(all.at(-1)).toEqual(expect.objectContaining({ kind: "status-update", final: true, status: expect.objectContaining({ state: "completed" }) }));
  });

  test("R-V03-30, R-V03-33: blocking false returns at once; TaskSubscription follows the live task; CancelTask cancels it and ends the stream", async () => {
    held = gate();
    const task = asTask(await alice.sendMessage(send(["hold"], {}, { blocking: false })));
    expect(["submitted", "working"]).toContain(task.status.state);
    await waitFor(async () => (await alice.getTask({ id: task.id })).status.state === "working");
    const stream = events(alice.resubscribeTask({ id: task.id }));
    const canceled = await alice.cancelTask({ id: task.id });
    expect([canceled.id, canceled.status.state]).toEqual([task.id, "canceled"]);
    const all = await stream;
    expect(all[0]).toEqual(expect.objectContaining({ kind: "task", id: task.id }));
    expect(all.at(-1)).toEqual(expect.objectContaining({ kind: "status-update", final: true, status: expect.objectContaining({ state: "canceled" }) }));
  });

  test("R-V03-33: TaskSubscription live until the agent finishes by itself", async () => {
    held = gate();
    const task = asTask(await alice.sendMessage(send(["hold"], {}, { blocking: false })));
    await waitFor(async () => (await alice.getTask({ id: task.id })).status.state === "working");
    const stream = alice.resubscribeTask({ id: task.id });
    // The snapshot arrives once the subscription is attached: only then is the agent let go.
    const snapshot = (await stream.next()).value;
    expect(snapshot).toEqual(expect.objectContaining({ kind: "task", id: task.id, status: expect.objectContaining({ state: "working" }) }));
    held.open();
    const all = await events(stream);
    expect(all.at(-1)).toEqual(expect.objectContaining({ kind: "status-update", final: true, status: expect.objectContaining({ state: "completed" }) }));
  });

  test("R-V03-33 (BQ-19): TaskSubscription to a finished task gives the task and a final status update, then ends", async () => {
    const task = asTask(await alice.sendMessage(send(["echo", "done"])));
    const all = await events(alice.resubscribeTask({ id: task.id }));
    expect(all.map((e) => e.kind)).toEqual(["task", "status-update"]);
    expect(all[1]).toEqual(expect.objectContaining({ final: true, taskId: task.id, status: expect.objectContaining({ state: "completed" }) }));
  });

  test("R-V03-39: a multi-turn task: input-required, then the answer in the same task completes it; a stream stopping there ends final", async () => {
    const first = asTask(await alice.sendMessage(send(["ask"])));
    expect(first.status.state).toBe("input-required");
    expect(first.status.message?.parts).toEqual([{ kind: "text", text: "what is your name?" }]);
    const second = asTask(await alice.sendMessage(send(["ask", "Ada"], { taskId: first.id, contextId: first.contextId })));
    expect([second.id, second.status.state]).toEqual([first.id, "completed"]);
    expect(second.status.message?.parts).toEqual([{ kind: "text", text: "hello Ada" }]);
    const streamed = await events(alice.sendMessageStream(send(["ask"])));
    expect(streamed.at(-1)).toEqual(
      expect.objectContaining({ kind: "status-update", final: true, status: expect.objectContaining({ state: "input-required" }) }),
    );
  });

  test("R-V03-34, R-V03-35: the four push config calls (Create, Get, List, Delete) in the v0.3 shape", async () => {
    const task = asTask(await alice.sendMessage(send(["ask"])));
    const config = { url: "http://127.0.0.1:9/hook", token: "tok", authentication: { schemes: ["Bearer"], credentials: "secret" } };
    const set = await alice.setTaskPushNotificationConfig({ taskId: task.id, pushNotificationConfig: { id: "c1", ...config } });
    expect(set).toEqual({ taskId: task.id, pushNotificationConfig: { id: "c1", ...config } });
    const byId: GetTaskPushNotificationConfigParams = { id: task.id, pushNotificationConfigId: "c1" };
    expect(await alice.getTaskPushNotificationConfig(byId)).toEqual(set);
    await alice.setTaskPushNotificationConfig({ taskId: task.id, pushNotificationConfig: { id: "c2", url: "http://127.0.0.1:9/other" } });
    const listed = await alice.listTaskPushNotificationConfig({ id: task.id });
    expect(listed.map((c) => c.pushNotificationConfig.id).sort()).toEqual(["c1", "c2"]);
    await alice.deleteTaskPushNotificationConfig({ id: task.id, pushNotificationConfigId: "c2" });
    expect((await alice.listTaskPushNotificationConfig({ id: task.id })).map((c) => c.pushNotificationConfig.id)).toEqual(["c1"]);
    await alice.deleteTaskPushNotificationConfig({ id: task.id, pushNotificationConfigId: "c1" });
    await expect(alice.getTaskPushNotificationConfig(byId)).rejects.toBeInstanceOf(TaskNotFoundError);
  });

  test("R-V03-50: GetAgentCard with the key gives the authenticated extended card in v0.3's shape", async () => {
    const client = await v03GrpcClient(aliceKey);
    const card = await client.getAgentCard();
    expect(card.description).toBe("the extended card");
    expect(card.protocolVersion).toBe("0.3");
    expect(card.additionalInterfaces).toEqual(expect.arrayContaining([expect.objectContaining({ url: s.target, transport: "GRPC" })]));
  });
});

describe("the API key as gRPC metadata, and typed errors", () => {
  test("R-BIND-5: the key reaches the server as x-api-key metadata; the call is alice's, and without it the call is UNAUTHENTICATED", async () => {
    const task = asTask(await alice.sendMessage(send(["echo", "mine"])));
    expect(s.lines.find((l) => l["task_id"] === task.id && l["msg"] === "rpc")).toEqual(
      expect.objectContaining({ principal: "apikey:alice", service: "a2a.v1.A2AService", a2a_version: "0.3" }),
    );
    const anonymous = await v03GrpcClient();
    const refused = await anonymous.getTask({ id: task.id }).catch((error: Error) => error);
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error & { cause?: { code?: number } }).cause?.code).toBe(16);
    // The card itself is public (HTTP), its extended form is not.
    await expect(anonymous.getAgentCard()).rejects.toThrow(/UNAUTHENTICATED|16/);
    // Another key is another caller: alice's task does not exist for bob.
    const bob = await v03GrpcClient(bobKey);
    await expect(bob.getTask({ id: task.id })).rejects.toBeInstanceOf(TaskNotFoundError);
  });

  test("R-V03-41: an unknown task is the SDK's TaskNotFoundError; cancelling a finished task is its TaskNotCancelableError", async () => {
    await expect(alice.getTask({ id: "no-such-task" })).rejects.toBeInstanceOf(TaskNotFoundError);
    await expect(events(alice.resubscribeTask({ id: "no-such-task" }))).rejects.toBeInstanceOf(TaskNotFoundError);
    const done = asTask(await alice.sendMessage(send(["echo", "finished"])));
    await expect(alice.cancelTask({ id: done.id })).rejects.toBeInstanceOf(TaskNotCancelableError);
  });
});
