/**
 * One server for a cross-binding test file: SQLite, the HTTP listener (card + JSON-RPC, and
 * HTTP+JSON), API-key authentication with principals alice and bob, push on for
 * loopback; a driver per binding the card lists, found the way a client finds them (the card).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create, fromJson, type JsonValue } from "@bufbuild/protobuf";
import {
  AgentCardSchema,
  MessageSchema,
  PartSchema,
  Role,
  SendMessageRequestSchema,
  type AgentCard,
  type SendMessageRequest,
  type SendMessageResponse,
  type StreamResponse,
  type Task,
} from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { createDemoAgent } from "../../src/agents/demo/demo-agent.js";
import { apiKeyLine, newApiKey } from "../../src/auth/index.js";
import type { Agent, AgentContext } from "../../src/lifecycle/ports/agent.js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import type { BindingDriver } from "./drivers/driver.js";
import { grpcDriver } from "./drivers/grpc-driver.js";
import { jsonRpcDriver } from "./drivers/jsonrpc-driver.js";
import { restDriver } from "./drivers/rest-driver.js";

/** A run of the "ctl" behaviour, handed to the test: it publishes through `ctx`, then `finish()`. */
export interface HeldRun {
  readonly ctx: AgentContext;
  finish(): void;
}

export interface BindingsSetup {
  readonly server: A2ATestServer;
  readonly card: AgentCard;
  /** alice's drivers, one per binding the card lists (R-BIND-15). */
  readonly drivers: readonly BindingDriver[];
  readonly aliceKey: string;
  readonly bobKey: string;
  /** The next run of a message whose text starts with "ctl" ("mute": the agent says nothing; others: the demo agent). */
  nextHeldRun(): Promise<HeldRun>;
  /** A task alice made on `driver` (non-blocking, text "ctl …"), WORKING, with its run held for the test. */
  heldTask(driver: BindingDriver, text: string): Promise<{ task: Task; run: HeldRun }>;
  /** Closes the drivers, then the server. */
  close(): Promise<void>;
}

export async function startBindingsSetup(env: Record<string, string> = {}, card: Partial<Agent["card"]> = {}): Promise<BindingsSetup> {
  const dir = mkdtempSync(join(tmpdir(), "a2a-bindings-"));
  const aliceKey = newApiKey();
  const bobKey = newApiKey();
  const principal = (key: string, name: string) => apiKeyLine(key, { principal: name, tenants: undefined, scopes: [] });
  writeFileSync(join(dir, "keys"), `${principal(aliceKey, "alice")}\n${principal(bobKey, "bob")}\n`);
  const held = heldRuns();
  const demo = createDemoAgent({ stepDelayMs: 0, tickMs: 5 });
  const agent: Agent = {
    card: { ...demo.card, extendedCard: { description: "the extended card" }, ...card },
    execute: (ctx) => {
      const text = firstText(ctx);
      if (text.startsWith("mute")) return Promise.resolve(); // says nothing: InvalidAgentResponseError
      return text.startsWith("ctl") ? held.execute(ctx) : demo.execute(ctx);
    },
  };
  const server = await startA2AServer({
    agent,
    env: {
      A2A_STORE: "sqlite",
      A2A_DATA_DIR: dir,
      A2A_HTTP_LISTEN: "127.0.0.1:0",
      A2A_AUTH: "api-key",
      A2A_API_KEYS_FILE: join(dir, "keys"),
      A2A_PUSH_ALLOW_HOSTS: "127.0.0.1",
      A2A_PUSH_ALLOW_HTTP: "true",
      ...env,
    },
    advertiseBoundAddress: true,
  });
  const served = await fetchCard(`http://127.0.0.1:${server.app.cardPort}`);
  const drivers = driversFor(served, aliceKey);
  return {
    server,
    card: served,
    drivers,
    aliceKey,
    bobKey,
    nextHeldRun: held.next,
    async heldTask(driver, text) {
      const task = taskOf(await driver.send(sendRequest(text, { returnImmediately: true })));
      return { task, run: await held.next() };
    },
    async close() {
      for (const driver of drivers) driver.close();
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The v1.0 card as a client reads it (A2A-Version: 1.0 gives the pure v1.0 form, A-37). */
async function fetchCard(base: string): Promise<AgentCard> {
  const response = await fetch(`${base}/.well-known/agent-card.json`, { headers: { "A2A-Version": "1.0" } });
  return fromJson(AgentCardSchema, (await response.json()) as JsonValue, { ignoreUnknownFields: true });
}

/**
 * A driver for every v1.0 interface of the card, gRPC first. All three must be there: a card that
 * loses a binding fails the suite instead of shrinking it.
 */
function driversFor(card: AgentCard, apiKey: string): BindingDriver[] {
  const url = (binding: string) => card.supportedInterfaces.find((i) => i.protocolBinding === binding && i.protocolVersion === "1.0")?.url;
  const grpcUrl = url("GRPC");
  const jsonRpcUrl = url("JSONRPC");
  const restUrl = url("HTTP+JSON");
  if (grpcUrl === undefined || jsonRpcUrl === undefined || restUrl === undefined)
    throw new Error("the card must list GRPC, JSONRPC and HTTP+JSON 1.0 interfaces");
  return [grpcDriver(grpcUrl, apiKey), jsonRpcDriver(jsonRpcUrl, apiKey), restDriver(restUrl, apiKey)];
}

/**
 * The test drives each "ctl" run itself: the run starts working (a run answers its SendMessage
 * only once the agent says something, so a non-blocking send needs this), then waits in a
 * queue until the test takes it.
 */
function heldRuns(): { execute(ctx: AgentContext): Promise<void>; next(): Promise<HeldRun> } {
  const ready: HeldRun[] = [];
  const waiting: Array<(run: HeldRun) => void> = [];
  return {
    async execute(ctx) {
      await ctx.working();
      let finish!: () => void;
      const done = new Promise<void>((resolve) => (finish = resolve));
      const run = { ctx, finish };
      const waiter = waiting.shift();
      if (waiter) waiter(run);
      else ready.push(run);
      await done;
    },
    next() {
      const run = ready.shift();
      return run ? Promise.resolve(run) : new Promise((resolve) => waiting.push(resolve));
    },
  };
}

function firstText(ctx: AgentContext): string {
  const content = ctx.message.parts[0]?.content;
  return content?.case === "text" ? content.value : "";
}

/** A stream in progress: `opened` settles at its first event (fails if the stream ends first), `events` at its end. */
export function watchStream(start: (onEvent: (event: StreamResponse) => void) => Promise<StreamResponse[]>): {
  opened: Promise<void>;
  events: Promise<StreamResponse[]>;
} {
  let open!: () => void;
  const first = new Promise<void>((resolve) => (open = resolve));
  const events = start(() => open());
  const endedFirst = events.then(() => Promise.reject(new Error("the stream ended before its first event")));
  const opened = Promise.race([first, endedFirst]);
  // Awaiting either gives its failure; a test that failed for another reason still ends cleanly.
  for (const promise of [events, endedFirst, opened]) promise.catch(() => undefined);
  return { opened, events };
}

/** The task of a SendMessage answer (fails when the answer is a message). */
export function taskOf(response: SendMessageResponse): Task {
  if (response.payload.case !== "task") throw new Error(`expected a task, got ${response.payload.case}`);
  return response.payload.value;
}

let serial = 0;

/** A SendMessageRequest with one user text part (a fresh message id), on a task or context when given. */
export function sendRequest(text: string, extra: { taskId?: string; contextId?: string; returnImmediately?: boolean } = {}): SendMessageRequest {
  return create(SendMessageRequestSchema, {
    message: create(MessageSchema, {
      messageId: `m-${++serial}-${Date.now()}`,
      role: Role.USER,
      taskId: extra.taskId ?? "",
      contextId: extra.contextId ?? "",
      parts: [create(PartSchema, { content: { case: "text", value: text } })],
    }),
    configuration: extra.returnImmediately ? { returnImmediately: true } : undefined,
  });
}
