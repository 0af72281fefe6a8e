/**
 * A2A v0.3 over gRPC (issue 35): a2a.v1.A2AService on the same port as lf.a2a.v1.A2AService,
 * through ts-proto's independent grpc-js client of the v0.3 proto, with API-key authentication on.
 * One server for the file; tasks are the same tasks over both services, for the same caller.
 */
import * as grpc from "@grpc/grpc-js";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { GetAgentCardRequestSchema } from "../../gen/es/a2a/v1/a2a_pb.js";
import { AgentCardSchema } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { TaskState, type A2AServiceClient, type Task } from "../../gen/ts-proto/a2a/v1/a2a.js";
import { TaskState as V1TaskState } from "../../gen/ts-proto/lf/a2a/v1/a2a.js";
import { apiKeyLine, newApiKey } from "../../src/auth/index.js";
import { createA2AHandlers } from "../../src/service/a2a-handlers.js";
import type { CallContext } from "../../src/service/face.js";
import { BacklogBudget } from "../../src/streams/index.js";
import { createV03Handlers } from "../../src/v03/v03-service.js";
import { dispatchAgent, expectA2AError, expectBadField, gate, rpc, sendRequest, statusDetails, userMessage } from "../e2e/e2e-helpers.js";
import { loopbackResolver } from "../push/push-helpers.js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import { collect, reflectedServices, shapes, unary, v03Client, v03Message, v03Send } from "./v03-grpc-client.js";

const EXTENSION = "https://example.test/ext/v03-echo";
const agents = dispatchAgent({
  extensions: [{ uri: EXTENSION, description: "echo test", required: false }],
  extendedCard: { description: "for signed-in callers", skills: [{ id: "secret", name: "Extended", description: "extended only", tags: ["x"] }] },
} as never);
const DONE = agents.on(async (ctx) => {
  await ctx.working();
  await ctx.artifact({ parts: ["result"] });
  await ctx.complete("done");
});
const ASK = agents.on(async (ctx) => {
  if (ctx.task === undefined) return ctx.requireInput("which one?");
  await ctx.complete("thanks");
});
let held = gate();
const HOLD = agents.on(async (ctx) => {
  await ctx.working("holding");
  await Promise.race([held.promise, new Promise((resolve) => ctx.signal.addEventListener("abort", resolve))]);
  if (!ctx.signal.aborted) await ctx.complete("released");
});
/** Echoes the parts it received (after its first, the trigger word) as an artifact, plus a non-object data part. */
const ECHO = agents.on(async (ctx) => {
  await ctx.artifact({ parts: [...ctx.message.parts.slice(1), { content: { case: "data", value: [1, "two"] } }] });
  await ctx.complete();
});
const EXT = agents.on(async (ctx) => {
  ctx.activateExtension(EXTENSION);
  await ctx.complete("with extension");
});

const alice = newApiKey();
const bob = newApiKey();
let dir: string;
let s: A2ATestServer;
let v03: A2AServiceClient;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "a2a-v03-grpc-"));
  const keys = [
    apiKeyLine(alice, { principal: "alice", tenants: undefined, scopes: [] }),
    apiKeyLine(bob, { principal: "bob", tenants: undefined, scopes: [] }),
  ];
  writeFileSync(join(dir, "keys"), `${keys.join("\n")}\n`);
  s = await startA2AServer({
    agent: agents.agent,
    serveV03: true,
    pushResolver: loopbackResolver(),
    env: { A2A_AUTH: "api-key", A2A_API_KEYS_FILE: join(dir, "keys"), A2A_AUTH_FAILURE_RATE: "0" },
  });
  v03 = v03Client(s.target);
});
afterAll(async () => {
  v03.close();
  await s.close();
  rmSync(dir, { recursive: true, force: true });
});

/** v0.3 metadata: no a2a-version (what v0.3 clients send), the caller's key. */
function as(key: string, extra: Record<string, string> = {}): grpc.Metadata {
  const md = new grpc.Metadata();
  md.set("x-api-key", key);
  for (const [k, v] of Object.entries(extra)) md.set(k, v);
  return md;
}
const v1As = (key: string) => s.metadata({ "x-api-key": key });

async function sendV03(text: string, configuration?: Parameters<typeof v03Send>[1], extra: Partial<Parameters<typeof v03Message>[1]> = {}): Promise<Task> {
  const { response, error } = await unary(v03, v03.sendMessage, v03Send(v03Message(text, extra), configuration), as(alice));
  expect(error).toBeUndefined();
  if (response?.payload?.$case !== "task") throw new Error(`expected a task, got ${JSON.stringify(response)}`);
  return response.payload.value;
}

describe("SendMessage and GetTask", () => {
  test("R-V03-30: without a configuration SendMessage blocks until the task completes; content, artifacts and CANCELLED-style enums are v0.3's", async () => {
    const task = await sendV03(DONE);
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(task.status?.update?.content[0]?.part).toEqual({ $case: "text", value: "done" });
    expect(task.artifacts[0]?.parts[0]?.part).toEqual({ $case: "text", value: "result" });
    expect(task.history[0]?.content[0]?.part).toEqual({ $case: "text", value: DONE });
  });

  test("R-V03-30: configuration.blocking false returns at once, with the task still running", async () => {
    held = gate();
    const task = await sendV03(HOLD, { blocking: false });
    expect([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING]).toContain(task.status?.state);
    held.open();
  });

  test("R-V03-31: GetTask history_length 0 is the whole history, N the last N; R-V03-13: a malformed name is INVALID_ARGUMENT on name", async () => {
    const first = await sendV03(ASK);
    expect(first.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    await sendV03(ASK, undefined, { taskId: first.id, contextId: first.contextId });
    const all = await unary(v03, v03.getTask, { name: `tasks/${first.id}`, historyLength: 0 }, as(alice));
    expect(all.error).toBeUndefined();
    expect(all.response!.history.length).toBeGreaterThanOrEqual(3);
    const last = await unary(v03, v03.getTask, { name: `tasks/${first.id}`, historyLength: 1 }, as(alice));
    expect(last.response!.history).toHaveLength(1);
    expectBadField((await unary(v03, v03.getTask, { name: first.id, historyLength: 0 }, as(alice))).error, "name");
    expectBadField((await unary(v03, v03.getTask, { name: `tasks/${first.id}`, historyLength: -1 }, as(alice))).error, "history_length");
  });

  test("bad input: a request without a message and a part without content are INVALID_ARGUMENT naming the v0.3 field", async () => {
    expectBadField((await unary(v03, v03.sendMessage, {}, as(alice))).error, "request");
    const empty = v03Message(DONE, { content: [{ part: undefined }] });
    expectBadField((await unary(v03, v03.sendMessage, v03Send(empty), as(alice))).error, "request.content[0]");
  });

  test("BQ-10: what the v1.0 face refuses is named by the v0.3 field path (request.*, config.push_notification_config.*, name)", async () => {
    expectBadField((await unary(v03, v03.sendMessage, v03Send(v03Message(DONE, { messageId: "" })), as(alice))).error, "request.message_id");
    const streamed = await collect(v03.sendStreamingMessage(v03Send(v03Message(DONE, { messageId: "" })), as(alice)));
    expectBadField(streamed.error, "request.message_id");
    const task = await sendV03(ASK);
    const badUrl = { id: "", url: "not a url", token: "", authentication: undefined };
    const created = await unary(
      v03,
      v03.createTaskPushNotificationConfig,
      { parent: `tasks/${task.id}`, configId: "", config: { name: "", pushNotificationConfig: badUrl } },
      as(alice),
    );
    expectBadField(created.error, "config.push_notification_config.url");
    expectBadField((await unary(v03, v03.getTask, { name: `tasks/${"x".repeat(2000)}`, historyLength: 0 }, as(alice))).error, "name");
  });

  test("R-V03-62: X-A2A-Extensions activates an extension on a v0.3 call and is echoed in both headers", async () => {
    const { response, error, headers } = await unary(v03, v03.sendMessage, v03Send(v03Message(EXT)), as(alice, { "x-a2a-extensions": EXTENSION }));
    expect(error).toBeUndefined();
    expect(response?.payload?.$case).toBe("task");
    expect(headers.get("x-a2a-extensions")).toEqual([EXTENSION]);
    expect(headers.get("a2a-extensions")).toEqual([EXTENSION]);
  });
});

test("R-V03-22 on the wire: file bytes, file uri and data parts go in and come back as v0.3 parts; a non-object data value as {value} (R-V03-36)", async () => {
  const bytes = new Uint8Array([0, 1, 2, 255]);
  const task = await sendV03(ECHO, undefined, {
    content: [
      { part: { $case: "text", value: ECHO } },
      { part: { $case: "file", value: { file: { $case: "fileWithBytes", value: bytes }, mimeType: "application/octet-stream" } } },
      { part: { $case: "file", value: { file: { $case: "fileWithUri", value: "https://files.example/a.pdf" }, mimeType: "application/pdf" } } },
      { part: { $case: "data", value: { data: { k: [1, { n: null }] } } } },
    ],
  });
  expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  expect(task.artifacts[0]?.parts.map((p) => p.part)).toEqual([
    { $case: "file", value: { file: { $case: "fileWithBytes", value: Buffer.from(bytes) }, mimeType: "application/octet-stream" } },
    { $case: "file", value: { file: { $case: "fileWithUri", value: "https://files.example/a.pdf" }, mimeType: "application/pdf" } },
    { $case: "data", value: { data: { k: [1, { n: null }] } } },
    { $case: "data", value: { data: { value: [1, "two"] } } },
  ]);
});

describe("streams", () => {
  test("R-V03-32: SendStreamingMessage marks only the closing status update final", async () => {
    const { events, error } = await collect(v03.sendStreamingMessage(v03Send(v03Message(DONE)), as(alice)));
    expect(error).toBeUndefined();
    const seen = shapes(events);
    expect(seen[seen.length - 1]).toBe(`status:${TaskState.TASK_STATE_COMPLETED}:final`);
    expect(seen.filter((e) => e.endsWith(":final"))).toHaveLength(1);
    expect(seen).toContain(`status:${TaskState.TASK_STATE_WORKING}`);
    expect(seen).toContain("artifact");
  });

  test("R-V03-32 / A-2: a stream that stops at INPUT_REQUIRED ends on a final status update", async () => {
    const { events } = await collect(v03.sendStreamingMessage(v03Send(v03Message(ASK)), as(alice)));
    expect(shapes(events).at(-1)).toBe(`status:${TaskState.TASK_STATE_INPUT_REQUIRED}:final`);
  });

  test("TaskSubscription to a running task follows it to its final status update", async () => {
    held = gate();
    const task = await sendV03(HOLD, { blocking: false });
    const call = v03.taskSubscription({ name: `tasks/${task.id}` }, as(alice));
    const done = collect(call);
    await new Promise((resolve) => call.once("data", resolve)); // subscribed: the snapshot came
    held.open();
    const { events, error } = await done;
    expect(error).toBeUndefined();
    expect(shapes(events).at(-1)).toBe(`status:${TaskState.TASK_STATE_COMPLETED}:final`);
  });

  test("BQ-19 / R-V03-33: TaskSubscription to a finished task is its snapshot and a final status update, then the stream closes", async () => {
    const task = await sendV03(DONE);
    const { events, error } = await collect(v03.taskSubscription({ name: `tasks/${task.id}` }, as(alice)));
    expect(error).toBeUndefined();
    expect(shapes(events)).toEqual([`task:${TaskState.TASK_STATE_COMPLETED}`, `status:${TaskState.TASK_STATE_COMPLETED}:final`]);
    expect(events[0]?.payload?.$case === "task" && events[0].payload.value.id).toBe(task.id);
  });
});

describe("CancelTask", () => {
  test("a running task canceled over v0.3 is TASK_STATE_CANCELLED (two L)", async () => {
    held = gate();
    const task = await sendV03(HOLD, { blocking: false });
    const { response, error } = await unary(v03, v03.cancelTask, { name: `tasks/${task.id}` }, as(alice));
    expect(error).toBeUndefined();
    expect(response!.status?.state).toBe(TaskState.TASK_STATE_CANCELLED);
    held.open();
  });
});

describe("push notification configs", () => {
  test("R-V03-13 / R-V03-14 / R-V03-35: create, get, list and delete by resource name, schemes[] kept", async () => {
    const task = await sendV03(ASK);
    const config = { id: "", url: "https://hooks.example/v03", token: "tok", authentication: { schemes: ["Bearer"], credentials: "c" } };
    const created = await unary(
      v03,
      v03.createTaskPushNotificationConfig,
      { parent: `tasks/${task.id}`, configId: "cfg-1", config: { name: "", pushNotificationConfig: config } },
      as(alice),
    );
    expect(created.error).toBeUndefined();
    const name = `tasks/${task.id}/pushNotificationConfigs/cfg-1`;
    expect(created.response).toEqual({ name, pushNotificationConfig: { ...config, id: "cfg-1" } });
    const got = await unary(v03, v03.getTaskPushNotificationConfig, { name }, as(alice));
    expect(got.response).toEqual(created.response);
    const listed = await unary(v03, v03.listTaskPushNotificationConfig, { parent: `tasks/${task.id}`, pageSize: 0, pageToken: "" }, as(alice));
    expect(listed.response!.configs.map((c) => c.name)).toEqual([name]);
    expect((await unary(v03, v03.deleteTaskPushNotificationConfig, { name }, as(alice))).error).toBeUndefined();
    expectA2AError((await unary(v03, v03.getTaskPushNotificationConfig, { name }, as(alice))).error, grpc.status.NOT_FOUND, "TASK_NOT_FOUND");
  });

  test("R-V03-13: malformed names and parents are INVALID_ARGUMENT naming the field; two schemes are refused (R-V03-35)", async () => {
    const task = await sendV03(ASK);
    expectBadField((await unary(v03, v03.getTaskPushNotificationConfig, { name: `tasks/${task.id}` }, as(alice))).error, "name");
    expectBadField(
      (await unary(v03, v03.listTaskPushNotificationConfig, { parent: `task/${task.id}`, pageSize: 0, pageToken: "" }, as(alice))).error,
      "parent",
    );
    const two = { id: "x", url: "https://hooks.example/v03", token: "", authentication: { schemes: ["Bearer", "Basic"], credentials: "c" } };
    const refused = await unary(
      v03,
      v03.createTaskPushNotificationConfig,
      { parent: `tasks/${task.id}`, configId: "", config: { name: "", pushNotificationConfig: two } },
      as(alice),
    );
    expectBadField(refused.error, "config.push_notification_config.authentication.schemes");
  });
});

describe("GetAgentCard", () => {
  test("BQ-16 / R-V03-52: an authenticated caller gets the extended card as the v0.3 proto card", async () => {
    const { response, error } = await unary(v03, v03.getAgentCard, {}, as(alice));
    expect(error).toBeUndefined();
    expect(response!.protocolVersion).toBe("0.3");
    expect(response!.skills.map((k) => k.id)).toEqual(["secret"]);
    expect(response!.capabilities?.extensions.map((e) => e.uri)).toContain(EXTENSION);
    expect(Object.keys(response!.securitySchemes).length).toBeGreaterThan(0);
  });
});

describe("one task, two generations, one owner (A-31)", () => {
  test("a task made over v0.3 is read, continued and canceled over lf.a2a.v1 by the same key, and invisible to another principal", async () => {
    const task = await sendV03(ASK);
    const read = await rpc(s).get({ id: task.id }, v1As(alice));
    expect(read.response?.status?.state).toBe(V1TaskState.TASK_STATE_INPUT_REQUIRED);
    const continued = await rpc(s).send(sendRequest(userMessage(ASK, { taskId: task.id, contextId: task.contextId })), v1As(alice));
    expect(continued.error).toBeUndefined();
    const back = await unary(v03, v03.getTask, { name: `tasks/${task.id}`, historyLength: 0 }, as(alice));
    expect(back.response!.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);

    const other = await sendV03(ASK);
    const canceled = await rpc(s).cancel({ id: other.id }, v1As(alice));
    expect(canceled.response?.status?.state).toBe(V1TaskState.TASK_STATE_CANCELED);

    expectA2AError((await rpc(s).get({ id: task.id }, v1As(bob))).error, grpc.status.NOT_FOUND, "TASK_NOT_FOUND");
    expectA2AError((await unary(v03, v03.getTask, { name: `tasks/${task.id}`, historyLength: 0 }, as(bob))).error, grpc.status.NOT_FOUND, "TASK_NOT_FOUND");
  });

  test("a v0.3 call without a credential is UNAUTHENTICATED, as on v1.0", async () => {
    const { error } = await unary(v03, v03.getTask, { name: "tasks/t", historyLength: 0 }, new grpc.Metadata());
    expect(error?.code).toBe(grpc.status.UNAUTHENTICATED);
  });
});

describe("versions (R-V03-2)", () => {
  test("a2a.v1.A2AService takes a2a-version 0.3; 1.0 there is FAILED_PRECONDITION VERSION_NOT_SUPPORTED, supported 0.3, pointing to lf.a2a.v1.A2AService", async () => {
    const ok = await unary(v03, v03.getAgentCard, {}, as(alice, { "a2a-version": "0.3" }));
    expect(ok.error).toBeUndefined();
    const { error } = await unary(v03, v03.getAgentCard, {}, as(alice, { "a2a-version": "1.0" }));
    const info = expectA2AError(error, grpc.status.FAILED_PRECONDITION, "VERSION_NOT_SUPPORTED");
    expect(info.metadata.supported_versions).toBe("0.3");
    expect(error!.details).toContain("lf.a2a.v1.A2AService");
  });

  test("lf.a2a.v1.A2AService still refuses a missing a2a-version (A-3), and names a2a.v1.A2AService for 0.3", async () => {
    const md = new grpc.Metadata();
    md.set("x-api-key", alice);
    const { error } = await rpc(s).get({ id: "t" }, md);
    const info = expectA2AError(error, grpc.status.FAILED_PRECONDITION, "VERSION_NOT_SUPPORTED");
    expect(info.metadata.supported_versions).toBe("1.0");
    expect(error!.details).toContain("a2a.v1.A2AService for A2A 0.3");
    expect(statusDetails(error!).info?.reason).toBe("VERSION_NOT_SUPPORTED");
  });
});

test("reflection lists both A2A services", async () => {
  expect(await reflectedServices(s.target)).toEqual(["a2a.v1.A2AService", "grpc.health.v1.Health", "lf.a2a.v1.A2AService"]);
});

describe("BQ-16 without authentication (the face alone, no server)", () => {
  test("GetAgentCard answers the public card when the extended card needs a credential nobody can present", async () => {
    const card = create(AgentCardSchema, { name: "public", capabilities: { extendedAgentCard: true } });
    const extendedCard = create(AgentCardSchema, { name: "extended", capabilities: { extendedAgentCard: true } });
    const v1Handlers = createA2AHandlers({
      service: undefined as never, // GetExtendedAgentCard never reaches the core
      card,
      extendedCard,
      allowMissingVersion: false,
      streamLimits: { streamBytes: 1, streamEntries: 1, entryBytes: 1, shared: new BacklogBudget(1) },
    });
    const call: CallContext = {
      method: "GetAgentCard",
      metadata: new grpc.Metadata(),
      signal: new AbortController().signal,
      onEnd: () => () => {},
      setLogField: () => {},
      setTaskId: () => {},
      setPrincipal: () => {},
      getAuthContext: () => ({}),
      setResponseHeader: () => {},
    };
    const served = await createV03Handlers(v1Handlers, { card }).GetAgentCard!(create(GetAgentCardRequestSchema), call);
    expect(served.name).toBe("public");
    expect(served.supportsAuthenticatedExtendedCard).toBe(true);
  });
});
