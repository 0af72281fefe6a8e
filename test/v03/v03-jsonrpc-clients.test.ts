/**
 * Issue 35 items 2, 5 and 8 over JSON-RPC: real v0.3 clients against the v0.3 endpoint
 * (/a2a/v0.3/jsonrpc, A-36) of the whole service with API-key auth: @a2a-js/sdk 0.3.14 (npm alias
 * a2a-sdk-v03), which finds the endpoint from the card's v0.3 fields, and the v0.3 compatibility
 * transport of @a2a-js/sdk 1.3.0. A task started over v0.3 is continued over v1.0 and read back.
 */
import { LegacyJsonRpcTransport } from "@a2a-js/sdk/compat/v0_3/client";
import { TaskState as V1TaskState } from "@a2a-js/sdk";
import { ClientFactory, JsonRpcTransportFactory, type Client } from "a2a-sdk-v03/client";
import type { Message, MessageSendParams, Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent } from "a2a-sdk-v03";
import { create } from "@bufbuild/protobuf";
import { AgentExtensionSchema, StreamResponseSchema, TaskSchema, TaskState, type StreamResponse } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { StreamResult } from "../../src/jsonrpc/jsonrpc-dialect.js";
import { createV03Dialect } from "../../src/jsonrpc/v03-jsonrpc-dialect.js";
import type { CallContext, StreamWriter } from "../../src/service/face.js";
import { aborted, collect, sendRequest } from "../interop/sdk-client.js";
import { startJsonRpcSetup, type JsonRpcSetup } from "../jsonrpc/jsonrpc-support.js";

const EXTENSION = "https://example.com/ext/v1";
let s: JsonRpcSetup;
let alice: Client;
let v03Endpoint: string;
beforeAll(async () => {
  s = await startJsonRpcSetup({}, { extensions: [create(AgentExtensionSchema, { uri: EXTENSION })] });
  v03Endpoint = `${s.base}/a2a/v0.3/jsonrpc`;
  alice = await v03Client(s.aliceKey);
  s.scripts.set("echo", async (ctx) => {
    await ctx.working("echoing");
    await ctx.artifact({ name: "echo", parts: ctx.message.parts.slice(1) });
    await ctx.complete("echoed");
  });
  s.scripts.set("ask", async (ctx) => {
    const answer = ctx.message.parts[1]?.content;
    if (ctx.task?.status?.state !== TaskState.INPUT_REQUIRED || answer?.case !== "text") return ctx.requireInput("what is your name?");
    await ctx.complete(`hello ${answer.value}`);
  });
  s.scripts.set("activate", async (ctx) => {
    ctx.activateExtension(EXTENSION);
    await ctx.complete("activated");
  });
  s.scripts.set("run until canceled", async (ctx) => {
    await ctx.working("running");
    await aborted(ctx.signal);
  });
});
afterAll(() => s.close());

function withKey(apiKey: string | undefined): typeof fetch {
  return (input, init) =>
    fetch(input, apiKey === undefined ? init : { ...init, headers: { ...(init?.headers as Record<string, string>), "X-API-Key": apiKey } });
}

/** The 0.3.14 client as a v0.3 user builds it: from the card at the server's base URL. */
function v03Client(apiKey?: string): Promise<Client> {
  const factory = new ClientFactory({ transports: [new JsonRpcTransportFactory({ fetchImpl: withKey(apiKey) })], preferredTransports: ["JSONRPC"] });
  return factory.createFromUrl(s.base);
}

type A2AStreamEventData = Message | Task | TaskStatusUpdateEvent | TaskArtifactUpdateEvent;

let counter = 0;
function message(texts: string[], ids: { taskId?: string; contextId?: string } = {}, extra: Partial<Message> = {}): Message {
  counter += 1;
  return { kind: "message", messageId: `v03-${counter}`, role: "user", parts: texts.map((text) => ({ kind: "text", text })), ...ids, ...extra };
}

function send(texts: string[], ids: { taskId?: string; contextId?: string } = {}, configuration?: MessageSendParams["configuration"]): MessageSendParams {
  return { message: message(texts, ids), ...(configuration === undefined ? {} : { configuration }) };
}

async function events(stream: AsyncGenerator<A2AStreamEventData>): Promise<A2AStreamEventData[]> {
  const all: A2AStreamEventData[] = [];
  for await (const event of stream) all.push(event);
  return all;
}

const asTask = (result: Task | Message): Task => {
  if (result.kind !== "task") throw new Error(`expected a task, got ${JSON.stringify(result)}`);
  return result;
};

describe("@a2a-js/sdk 0.3.14 over JSON-RPC", () => {
  test("R-V03-6, A-36: the 0.3.14 client finds the v0.3 JSON-RPC endpoint from the card", async () => {
    const card = await alice.getAgentCard();
    expect(card.additionalInterfaces).toEqual(expect.arrayContaining([{ url: v03Endpoint, transport: "JSONRPC" }]));
  });

  test("R-V03-10, R-V03-21, R-V03-30: message/send without blocking waits for the bare completed task (kind, kebab-case states)", async () => {
    const task = asTask(await alice.sendMessage(send(["echo", "payload"])));
    expect(task).toEqual(expect.objectContaining({ kind: "task", status: expect.objectContaining({ state: "completed" }) }));
    expect(task.artifacts?.[0]?.parts).toEqual([{ kind: "text", text: "payload" }]);
    expect(task.history?.[0]).toEqual(expect.objectContaining({ kind: "message", role: "user" }));
    const read = await alice.getTask({ id: task.id, historyLength: 0 });
    // R-V03-31: historyLength 0 = no limit on v0.3 (the whole history, user turn included).
    expect(read.history?.length).toBe(task.history?.length);
    expect((await alice.getTask({ id: task.id, historyLength: 1 })).history).toHaveLength(1);
  });

  test("R-V03-22, R-V03-37, R-V03-38: file parts (bytes with name and mimeType, uri) and data parts reach the agent whole and come back", async () => {
    const parts: Message["parts"] = [
      { kind: "text", text: "echo" },
      { kind: "file", file: { bytes: Buffer.from("hi there").toString("base64"), mimeType: "text/plain", name: "hi.txt" }, metadata: { m: 1 } },
      { kind: "file", file: { uri: "https://example.com/a.png", mimeType: "image/png" } },
      { kind: "data", data: { answer: 42, nested: { list: [1, "two"] } } },
    ];
    const task = asTask(await alice.sendMessage({ message: { ...message([]), parts } }));
    expect(task.artifacts?.[0]?.parts).toEqual(parts.slice(1));
  });

  test("R-V03-10, R-V03-32: message/stream yields the task, bare events with kinds, and ends on final: true", async () => {
    const all = await events(alice.sendMessageStream(send(["echo", "x"])));
    expect(all[0]?.kind).toBe("task");
    expect(all.map((e) => e.kind)).toEqual(expect.arrayContaining(["status-update", "artifact-update"]));
    const last = all.at(-1) as TaskStatusUpdateEvent;
    expect(last).toEqual(expect.objectContaining({ kind: "status-update", final: true, status: expect.objectContaining({ state: "completed" }) }));
    const updates = all.filter((e): e is TaskStatusUpdateEvent => e.kind === "status-update");
    expect(updates.filter((e) => e.final)).toHaveLength(1);
  });

  test("R-V03-30, R-V03-10: blocking: false returns at once; tasks/resubscribe follows it; tasks/cancel cancels it", async () => {
    const task = asTask(await alice.sendMessage(send(["run until canceled"], {}, { blocking: false })));
    const stream = events(alice.resubscribeTask({ id: task.id }));
    await waitFor(async () => (await alice.getTask({ id: task.id })).status.state === "working");
    const canceled = await alice.cancelTask({ id: task.id });
    expect(canceled.status.state).toBe("canceled");
    const last = (await stream).at(-1) as TaskStatusUpdateEvent;
    expect(last).toEqual(expect.objectContaining({ kind: "status-update", final: true, status: expect.objectContaining({ state: "canceled" }) }));
  });

  test("R-V03-33 (BQ-19): tasks/resubscribe to a finished task gives the task and a final status update, then ends", async () => {
    const task = asTask(await alice.sendMessage(send(["echo", "done"])));
    const all = await events(alice.resubscribeTask({ id: task.id }));
    expect(all.map((e) => e.kind)).toEqual(["task", "status-update"]);
    expect(all[1]).toEqual(expect.objectContaining({ final: true, taskId: task.id, status: expect.objectContaining({ state: "completed" }) }));
  });

  test("R-V03-10, R-V03-39: a multi-turn task: input-required, then the answer in the same task completes it", async () => {
    const first = asTask(await alice.sendMessage(send(["ask"])));
    expect(first.status.state).toBe("input-required");
    expect(first.status.message?.parts).toEqual([{ kind: "text", text: "what is your name?" }]);
    const second = asTask(await alice.sendMessage(send(["ask", "Ada"], { taskId: first.id, contextId: first.contextId })));
    expect(second.id).toBe(first.id);
    expect(second.status.state).toBe("completed");
    expect(second.status.message?.parts).toEqual([{ kind: "text", text: "hello Ada" }]);
  });

  test("R-V03-32: a stream that stops at input-required ends on final: true", async () => {
    const all = await events(alice.sendMessageStream(send(["ask"])));
    expect(all.at(-1)).toEqual(expect.objectContaining({ kind: "status-update", final: true, status: expect.objectContaining({ state: "input-required" }) }));
  });

  test("R-V03-10, R-V03-22, R-V03-34, R-V03-35, BQ-8: the four push config calls in the v0.3 shape", async () => {
    const task = asTask(await alice.sendMessage(send(["ask"])));
    const config = { url: "http://127.0.0.1:9/hook", token: "tok", authentication: { schemes: ["Bearer"], credentials: "secret" } };
    const set = await alice.setTaskPushNotificationConfig({ taskId: task.id, pushNotificationConfig: { id: "c1", ...config } });
    expect(set).toEqual({ taskId: task.id, pushNotificationConfig: { id: "c1", ...config } });
    // Without pushNotificationConfigId: the task's only config.
    expect(await alice.getTaskPushNotificationConfig({ id: task.id })).toEqual(set);
    await alice.setTaskPushNotificationConfig({ taskId: task.id, pushNotificationConfig: { id: "c2", url: "http://127.0.0.1:9/other" } });
    // R-V03-34: with several configs the config id is needed.
    await expect(alice.getTaskPushNotificationConfig({ id: task.id })).rejects.toThrow(/pushNotificationConfigId/);
    const listed = await alice.listTaskPushNotificationConfig({ id: task.id });
    expect(listed.map((c) => c.pushNotificationConfig.id).sort()).toEqual(["c1", "c2"]);
    await alice.deleteTaskPushNotificationConfig({ id: task.id, pushNotificationConfigId: "c2" });
    expect((await alice.listTaskPushNotificationConfig({ id: task.id })).map((c) => c.pushNotificationConfig.id)).toEqual(["c1"]);
    await alice.deleteTaskPushNotificationConfig({ id: task.id, pushNotificationConfigId: "c1" });
    await expect(alice.getTaskPushNotificationConfig({ id: task.id })).rejects.toThrow(/not found/i);
  });

  test("R-V03-10, R-V03-50: agent/getAuthenticatedExtendedCard with credentials gives the v0.3 extended card", async () => {
    const client = await v03Client(s.aliceKey);
    const card = await client.getAgentCard();
    expect(card.description).toBe("the extended card");
    expect(card.protocolVersion).toBe("0.3");
    expect(card.additionalInterfaces).toEqual(expect.arrayContaining([{ url: v03Endpoint, transport: "JSONRPC" }]));
  });
});

describe("@a2a-js/sdk 1.3.0's v0.3 compatibility client", () => {
  const legacy = () => new LegacyJsonRpcTransport({ endpoint: v03Endpoint, fetchImpl: withKey(s.aliceKey) });

  test("R-V03-10: send, get and stream through LegacyJsonRpcTransport", async () => {
    const transport = legacy();
    const result = await transport.sendMessage(sendRequest("story"));
    if (!("id" in result) || !("status" in result)) throw new Error(`expected a task: ${JSON.stringify(result)}`);
    expect(result.status?.state).toBe(V1TaskState.TASK_STATE_COMPLETED);
    expect((await transport.getTask({ tenant: "", id: result.id })).status?.state).toBe(V1TaskState.TASK_STATE_COMPLETED);
    const streamed = await collect(transport.sendMessageStream(sendRequest("story")));
    expect(streamed.at(-1)?.payload?.$case).toBe("statusUpdate");
  });
});

describe("one task, two generations (R-BIND-3)", () => {
  test("R-V03-10, A-36: started over v0.3, continued over v1.0 JSON-RPC with the same key, read back over v0.3; another key sees nothing", async () => {
    const first = asTask(await alice.sendMessage(send(["ask"])));
    const v1 = await s.client(s.aliceKey);
    const continued = await v1.sendMessage(sendRequest("ask", { taskId: first.id, contextId: first.contextId }));
    expect("status" in continued && continued.status?.state).toBe(V1TaskState.TASK_STATE_INPUT_REQUIRED);
    const answer = sendRequest("ask", { taskId: first.id, contextId: first.contextId });
    answer.message!.parts.push({ content: { $case: "text", value: "Bob" }, metadata: undefined, filename: "", mediaType: "" });
    await v1.sendMessage(answer);
    const read = await alice.getTask({ id: first.id });
    expect(read.status.state).toBe("completed");
    expect(read.status.message?.parts).toEqual([{ kind: "text", text: "hello Bob" }]);
    const bob = await v03Client(s.bobKey);
    await expect(bob.getTask({ id: first.id })).rejects.toThrow(/-32001|not found/i);
  });

  test("R-V03-10, A-36: the other way round: started over v1.0, continued, read, streamed and canceled over v0.3 with the same key", async () => {
    const v1 = await s.client(s.aliceKey);
    const asked = await v1.sendMessage(sendRequest("ask"));
    if (!("status" in asked)) throw new Error("expected a task");
    expect(asked.status?.state).toBe(V1TaskState.TASK_STATE_INPUT_REQUIRED);
    const answered = asTask(await alice.sendMessage(send(["ask", "Ada"], { taskId: asked.id, contextId: asked.contextId })));
    expect([answered.id, answered.status.state]).toEqual([asked.id, "completed"]);
    expect((await alice.getTask({ id: asked.id })).status.message?.parts).toEqual([{ kind: "text", text: "hello Ada" }]);

    const running = await v1.sendMessage(sendRequest("run until canceled", {}, { returnImmediately: true }));
    if (!("status" in running)) throw new Error("expected a task");
    const watched = events(alice.resubscribeTask({ id: running.id }));
    const canceled = await alice.cancelTask({ id: running.id });
    expect(canceled.status.state).toBe("canceled");
    const seen = await watched;
    expect(seen[0]).toMatchObject({ kind: "task", id: running.id });
    expect(seen.at(-1)).toMatchObject({ kind: "status-update", final: true, status: { state: "canceled" } });
  });
});

describe("observability labels the generation (issue 35 item 8)", () => {
  test("R-BIND-2: metrics and the RPC log line carry a2a_version, 0.3 for a v0.3 call and 1.0 for a v1.0 call", async () => {
    await expect(alice.getTask({ id: "v03-probe" })).rejects.toThrow();
    const v1 = await s.client(s.aliceKey);
    await expect(v1.getTask({ tenant: "", id: "v1-probe" })).rejects.toThrow();
    const metrics = await (await fetch(`${s.base}/metrics`)).text();
    const count = (service: string, version: string) =>
      new RegExp(
        `rpc_server_call_duration_seconds_count\\{rpc_system="jsonrpc",rpc_service="${service.replaceAll(".", "\\.")}",rpc_method="GetTask",rpc_grpc_status_code="5",a2a_version="${version.replace(".", "\\.")}"\\} [1-9]`,
      );
    expect(metrics).toMatch(count("a2a.v1.A2AService", "0.3"));
    expect(metrics).toMatch(count("lf.a2a.v1.A2AService", "1.0"));
    const line = (taskId: string) => s.server.lines.find((l) => l["task_id"] === taskId && l["msg"] === "rpc");
    expect(line("v03-probe")).toEqual(expect.objectContaining({ a2a_version: "0.3", service: "a2a.v1.A2AService", method: "GetTask", binding: "jsonrpc" }));
    expect(line("v1-probe")).toEqual(expect.objectContaining({ a2a_version: "1.0", service: "lf.a2a.v1.A2AService" }));
  });
});

describe("R-V03-32 (BQ-18): a v0.3 stream that ends on a settled Task snapshot", () => {
  // The core ends a stream on a snapshot when the task settled before the stream attached:
  // a race in a live server, so the dialect's rule is driven here by a face stream that does exactly that.
  test("gets a final status update appended; an unsettled snapshot does not", async () => {
    const method = createV03Dialect({ v1Path: "/a2a/jsonrpc" }).method("message/stream");
    if (typeof method === "string") throw new Error(method);
    const run = async (state: TaskState) => {
      const snapshot = create(StreamResponseSchema, { payload: { case: "task", value: create(TaskSchema, { id: "t", contextId: "c", status: { state } }) } });
      const handlers = { SendStreamingMessage: async (_request: unknown, _call: unknown, out: StreamWriter<StreamResponse>) => void out.write(snapshot) };
      const written: StreamResult[] = [];
      const out: StreamWriter<StreamResult> = { write: (event) => (written.push(event), true), waitForDrain: async () => {}, closed: false };
      await method.stream(
        { handlers, context: {} as CallContext },
        method.decode({ message: { kind: "message", messageId: "m", role: "user", parts: [{ kind: "text", text: "x" }] } }),
        out,
      );
      return written.map((event) => event.result);
    };
    expect(await run(TaskState.COMPLETED)).toEqual([
      expect.objectContaining({ kind: "task" }),
      { kind: "status-update", taskId: "t", contextId: "c", status: { state: "completed" }, final: true },
    ]);
    expect(await run(TaskState.WORKING)).toEqual([expect.objectContaining({ kind: "task" })]);
  });
});

describe("bad input on the v0.3 endpoint (R-V03-40)", () => {
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(v03Endpoint, { method: "POST", headers: { "Content-Type": "application/json", "X-API-Key": s.aliceKey, ...headers }, body: JSON.stringify(body) });
  type Reply = { id: unknown; error?: { code: number; message: string; data?: Array<Record<string, unknown>> }; result?: unknown };
  const call = async (method: string, params: unknown, headers: Record<string, string> = {}) => {
    const response = await post({ jsonrpc: "2.0", id: 7, method, params }, headers);
    return { status: response.status, headers: response.headers, body: (await response.json()) as Reply };
  };
  const violations = (reply: Reply) =>
    reply.error?.data?.flatMap((d) => (d["fieldViolations"] as Array<{ field: string }> | undefined) ?? []).map((v) => v.field);
  const sendParams = (parts: unknown[]) => ({ message: { kind: "message", messageId: "m-bad", role: "user", parts } });

  test("R-V03-11: an unknown method is -32601 with the request's id", async () => {
    const { body } = await call("tasks/explode", {});
    expect(body).toEqual({ jsonrpc: "2.0", id: 7, error: expect.objectContaining({ code: -32601 }) });
  });

  test("A-36: a v1.0 method name here is -32601 naming the 1.0 endpoint", async () => {
    const { body } = await call("GetTask", { id: "x" });
    expect(body.error?.code).toBe(-32601);
    expect(body.error?.message).toContain("/a2a/jsonrpc");
  });

  test("A-36: a v0.3 method name on the 1.0 endpoint is -32601 naming the v0.3 endpoint", async () => {
    const response = await s.post(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tasks/get", params: { id: "x" } }));
    const body = (await response.json()) as Reply;
    expect(body.error?.code).toBe(-32601);
    expect(body.error?.message).toContain("/a2a/v0.3/jsonrpc");
  });

  test("R-V03-20: a part without kind is -32602 naming the part's kind", async () => {
    const { body } = await call("message/send", sendParams([{ text: "no kind" }]));
    expect(body.error?.code).toBe(-32602);
    expect(violations(body)).toEqual(["message.parts[0].kind"]);
  });

  test("R-V03-38: a file part with both bytes and uri is -32602 naming the file", async () => {
    const { body } = await call("message/send", sendParams([{ kind: "file", file: { bytes: "aGk=", uri: "https://example.com/x" } }]));
    expect(body.error?.code).toBe(-32602);
    expect(violations(body)).toEqual(["message.parts[0].file"]);
  });

  test("R-V03-38: the specs' example names file.data and file.fileWithBytes are read as bytes, and answered as bytes", async () => {
    const parts = [
      { kind: "text", text: "echo" },
      { kind: "file", file: { data: Buffer.from("one").toString("base64"), mimeType: "text/plain" } },
      { kind: "file", file: { fileWithBytes: Buffer.from("two").toString("base64"), name: "two.txt" } },
    ];
    const { body } = await call("message/send", sendParams(parts));
    const result = body.result as { artifacts?: Array<{ parts: unknown[] }> };
    expect(result.artifacts?.[0]?.parts).toEqual([
      { kind: "file", file: { bytes: Buffer.from("one").toString("base64"), mimeType: "text/plain" } },
      { kind: "file", file: { bytes: Buffer.from("two").toString("base64"), name: "two.txt" } },
    ]);
  });

  test("R-V03-35: more than one push authentication scheme is -32602", async () => {
    const params = { taskId: "t", pushNotificationConfig: { url: "http://127.0.0.1:9/h", authentication: { schemes: ["Bearer", "Basic"] } } };
    const { body } = await call("tasks/pushNotificationConfig/set", params);
    expect(body.error?.code).toBe(-32602);
    expect(violations(body)).toEqual(["pushNotificationConfig.authentication.schemes"]);
  });

  test("R-V03-23: messageId beside message (the v0.3 §9.4 example) is -32602", async () => {
    const { body } = await call("message/send", {
      messageId: "m",
      message: { kind: "message", messageId: "m", role: "user", parts: [{ kind: "text", text: "x" }] },
    });
    expect(body.error?.code).toBe(-32602);
  });

  test("A-36, R-V03-3: A2A-Version 1.0 on the v0.3 endpoint is VERSION_NOT_SUPPORTED (-32009) naming the 1.0 endpoint; 0.3 and 0.3.0 are accepted", async () => {
    const { body } = await call("tasks/get", { id: "x" }, { "A2A-Version": "1.0" });
    expect(body.error?.code).toBe(-32009);
    expect(body.error?.message).toContain("/a2a/jsonrpc");
    expect(body.error?.data?.[0]).toEqual(
      expect.objectContaining({ reason: "VERSION_NOT_SUPPORTED", metadata: expect.objectContaining({ supported_versions: "0.3" }) }),
    );
    for (const version of ["0.3", "0.3.0", ""]) expect((await call("tasks/get", { id: "x" }, { "A2A-Version": version })).body.error?.code).toBe(-32001);
  });

  test("R-BIND-10, R-BIND-14: extensions requested in X-A2A-Extensions (or A2A-Extensions) are echoed in X-A2A-Extensions", async () => {
    const params = { message: { kind: "message", messageId: "m-ext", role: "user", parts: [{ kind: "text", text: "activate" }] } };
    for (const header of ["X-A2A-Extensions", "A2A-Extensions"]) {
      const { body, headers } = await call("message/send", { ...params, message: { ...params.message, messageId: `m-${header}` } }, { [header]: EXTENSION });
      expect(body.result).toEqual(expect.objectContaining({ kind: "task" }));
      expect(headers.get("x-a2a-extensions")).toBe(EXTENSION);
    }
  });

  test("R-BIND-5: no credential is 401 with a JSON-RPC error body", async () => {
    const response = await fetch(v03Endpoint, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tasks/get", params: { id: "x" } }),
    });
    expect(response.status).toBe(401);
    expect(((await response.json()) as Reply).error?.code).toBeLessThan(-31000);
  });
});

async function waitFor(check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
