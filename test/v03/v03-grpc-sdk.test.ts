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
import type { Message, MessageSendParams, Task, TaskStatusUpdateEvent } from "a2a-sdk-v03";
import { ClientFactory, TaskNotFoundError, type CallInterceptor, type Client } from "a2a-sdk-v03/client";
import { GrpcTransport, GrpcTransportFactory } from "a2a-sdk-v03/client/grpc";
import { TaskState } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { createDemoAgent } from "../../src/agents/demo/demo-agent.js";
import { apiKeyLine, newApiKey } from "../../src/auth/index.js";
import type { Agent, AgentContext } from "../../src/lifecycle/ports/agent.js";
import { gate } from "../e2e/e2e-helpers.js";
import { aborted } from "../interop/sdk-client.js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";

type StreamEvent = Awaited<ReturnType<AsyncGenerator<unknown>["next"]>>["value"] & { kind: string };

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

async function events(stream: AsyncGenerator<unknown>): Promise<StreamEvent[]> {
  const all: StreamEvent[] = [];
  for await (const event of stream) all.push(event as StreamEvent);
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
    const card = await (await fetch(`${base}/.well-known/agent-card.json`)).json();
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
});
