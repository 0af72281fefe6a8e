/**
 * Issue 35 item 3: the A2A v0.3 HTTP+JSON binding at /a2a/v0.3/rest (A-36), through raw HTTP
 * against the real server (API keys for alice and bob): every route of the v0.3 proto, ProtoJSON
 * of the v0.3 messages (BQ-15), the lenient bodies (R-V03-16/17), the {"code","message"} errors
 * (R-V03-41), the version rules (A-36, R-V03-60), the same tasks over the v1.0 bindings, and the
 * real v0.3 client: @a2a-js/sdk 0.3.14's RestTransport, pointed at the base directly.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import type { Message as SdkMessage, Task as SdkTask } from "a2a-sdk-v03";
import { RestTransport, TaskNotCancelableError, TaskNotFoundError } from "a2a-sdk-v03/client";
import { StreamResponseSchema, TaskSchema, TaskState } from "../../gen/es/a2a/v1/a2a_pb.js";
import { jsonRpcFailure } from "../../src/jsonrpc/jsonrpc-errors.js";
import {
  ContentTypeNotSupportedError,
  ExtendedAgentCardNotConfiguredError,
  ExtensionSupportRequiredError,
  InvalidAgentResponseError,
  InvalidRequestError,
  LimitExceededError,
  PushNotificationNotSupportedError,
  TaskNotCancelableError as CoreTaskNotCancelableError,
  TaskNotFoundError as CoreTaskNotFoundError,
  UnsupportedOperationError,
  VersionNotSupportedError,
} from "../../src/lifecycle/model/errors.js";
import { createRestV03Binding } from "../../src/rest/index.js";
import { v03ErrorCode } from "../../src/rest/rest-v03-errors.js";
import { CallObservers } from "../../src/service/call-observer.js";
import { StatusError, toErrorStatus } from "../../src/service/error-status.js";
import type { StreamWriter } from "../../src/service/face.js";
import { Code } from "../../src/service/status-code.js";
import { startJsonRpcSetup, type JsonRpcSetup } from "../jsonrpc/jsonrpc-support.js";
import { readSse } from "../jsonrpc/sse-reader.js";

type Json = Record<string, unknown>;
interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: Json;
}

let s: JsonRpcSetup;
let v03: string;
let held: () => void = () => undefined;
beforeAll(async () => {
  s = await startJsonRpcSetup({ A2A_STREAM_HEARTBEAT: "off" });
  v03 = `${s.base}/a2a/v0.3/rest`;
  s.scripts.set("done", async (ctx) => {
    await ctx.working("working");
    await ctx.artifact({ artifactId: "a1", name: "result", parts: ["result"] });
    await ctx.complete("done");
  });
  s.scripts.set("hold", async (ctx) => {
    await ctx.working("holding");
    const released = new Promise<void>((resolve) => {
      held = resolve;
    });
    await Promise.race([released, new Promise((resolve) => ctx.signal.addEventListener("abort", resolve))]);
    if (!ctx.signal.aborted) await ctx.complete("released");
  });
});
afterAll(() => s.close());

/** A raw request below the v0.3 base: alice's key, no A2A-Version (v0.3 clients send none), JSON. */
function rawFetch(method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(v03 + path, {
    method,
    headers: { "X-API-Key": s.aliceKey, ...(body === undefined ? {} : { "Content-Type": "application/json" }), ...headers },
    ...(body === undefined ? {} : { body }),
  });
}

async function call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Answer> {
  const res = await rawFetch(method, path, body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body), headers);
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text === "" ? {} : (JSON.parse(text) as Json) };
}

/** A v0.3 ProtoJSON SendMessageRequest (R-V03-15: `content`, ROLE_USER). */
const send = (text: string, configuration: Json = { blocking: true }) => ({
  message: { messageId: `m-${Math.random()}`, role: "ROLE_USER", content: [{ text }] },
  configuration,
});

type Task = { id: string; contextId: string; status: { state: string }; history?: unknown[]; artifacts?: Json[] };

async function sendTask(text: string, configuration?: Json): Promise<Task> {
  const answer = await call("POST", "/v1/message:send", send(text, configuration));
  expect(answer.status).toBe(200);
  return answer.body["task"] as Task;
}

async function waitFor(id: string, state: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (((await call("GET", `/v1/tasks/${id}`)).body["status"] as { state?: string } | undefined)?.state === state) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`task ${id} never reached ${state}`);
}

const events = async (res: Response): Promise<Json[]> => (await readSse(res).rest()).map((e) => JSON.parse(e.data) as Json);
const lastOf = <T>(list: readonly T[]): T => list[list.length - 1]!;

describe("R-V03-15: every route of a2a.v1.A2AService, ProtoJSON of the v0.3 proto", () => {
  test("SendMessage blocking: 200 {task} in application/json, TASK_STATE_COMPLETED, artifacts with parts as {text}", async () => {
    const answer = await call("POST", "/v1/message:send", send("done"));
    expect([answer.status, answer.headers.get("content-type"), answer.headers.get("cache-control")]).toEqual([200, "application/json", "no-store"]);
    const task = answer.body["task"] as Task;
    expect(task.status.state).toBe("TASK_STATE_COMPLETED");
    expect(task.artifacts?.[0]).toEqual(expect.objectContaining({ artifactId: "a1", parts: [{ text: "result" }] }));
  });

  test("SendMessage non-blocking, snake_case names and a2a+json accepted; GetTask takes historyLength / history_length (R-V03-18)", async () => {
    const body = { message: { message_id: "m-snake", role: "ROLE_USER", content: [{ text: "done" }] }, configuration: { blocking: false } };
    const answer = await call("POST", "/v1/message:send", body, { "Content-Type": "application/a2a+json" });
    expect(answer.status).toBe(200);
    const id = (answer.body["task"] as Task).id;
    await waitFor(id, "TASK_STATE_COMPLETED");
    const one = await call("GET", `/v1/tasks/${id}?historyLength=1`);
    expect([one.status, one.body["id"], (one.body["history"] as unknown[]).length]).toEqual([200, id, 1]);
    const full = await call("GET", `/v1/tasks/${id}?history_length=5`);
    expect((full.body["history"] as unknown[]).length).toBeGreaterThan(1);
  });

  test("SendStreamingMessage: SSE of bare v0.3 StreamResponses, ending on a final status update", async () => {
    const res = await rawFetch("POST", "/v1/message:stream", JSON.stringify(send("done")));
    expect([res.status, res.headers.get("content-type")?.startsWith("text/event-stream")]).toEqual([200, true]);
    const all = await events(res);
    expect(Object.keys(all[0]!)).toEqual(["task"]);
    expect(all.some((e) => "artifactUpdate" in e)).toBe(true);
    expect(lastOf(all)["statusUpdate"]).toEqual(expect.objectContaining({ final: true, status: expect.objectContaining({ state: "TASK_STATE_COMPLETED" }) }));
  });

  test("R-V03-16: CancelTask takes an empty body, {} or null; the answer is the task, TASK_STATE_CANCELLED", async () => {
    for (const body of ["", "{}", "null"]) {
      const task = await sendTask("hold", { blocking: false });
      await waitFor(task.id, "TASK_STATE_WORKING");
      const res = await rawFetch("POST", `/v1/tasks/${task.id}:cancel`, body, { "Content-Type": "application/json" });
      const canceled = (await res.json()) as Task;
      expect([body, res.status, canceled.status.state]).toEqual([body, 200, "TASK_STATE_CANCELLED"]);
    }
  });

  test("TaskSubscription live (GET): the snapshot, then the updates, ending on the final status update", async () => {
    const task = await sendTask("hold", { blocking: false });
    await waitFor(task.id, "TASK_STATE_WORKING");
    const stream = readSse(await rawFetch("GET", `/v1/tasks/${task.id}:subscribe`));
    const first = JSON.parse((await stream.next())!.data) as Json;
    expect((first["task"] as Task).id).toBe(task.id);
    held();
    const rest = (await stream.rest()).map((e) => JSON.parse(e.data) as Json);
    expect(lastOf(rest)["statusUpdate"]).toEqual(expect.objectContaining({ final: true, status: expect.objectContaining({ state: "TASK_STATE_COMPLETED" }) }));
  });

  test("R-V03-33: TaskSubscription of a finished task (POST, body null): its snapshot and a final status update", async () => {
    const task = await sendTask("done");
    const all = await events(await rawFetch("POST", `/v1/tasks/${task.id}:subscribe`, "null"));
    expect(all.map((e) => Object.keys(e)[0])).toEqual(["task", "statusUpdate"]);
    expect(all[1]!["statusUpdate"]).toEqual(expect.objectContaining({ taskId: task.id, final: true }));
  });

  test("R-V03-17, R-V03-18: push configs — Create's three body shapes and the proto's task/* route, Get, List {configs}, Delete", async () => {
    const task = await sendTask("done");
    const base = `/v1/tasks/${task.id}/pushNotificationConfigs`;
    const url = "http://127.0.0.1:9/hook";
    const shapes: Array<[string, unknown]> = [
      [base, { pushNotificationConfig: { id: "c1", url, token: "tok" } }], // the proto's body: "config"
      [base, { config: { pushNotificationConfig: { id: "c2", url } } }], // v0.3 §7.5
      [base, { parent: `tasks/${task.id}`, configId: "c3", config: { pushNotificationConfig: { url } } }], // the whole request
      [`/v1/task/${task.id}/pushNotificationConfigs`, { push_notification_config: { id: "c4", url } }], // the annotated typo, snake_case
    ];
    for (const [path, body] of shapes) {
      const created = await call("POST", path, body);
      expect([created.status, created.body["name"]]).toEqual([200, expect.stringMatching(new RegExp(`^tasks/${task.id}/pushNotificationConfigs/c[1-4]$`))]);
    }
    const got = await call("GET", `${base}/c1`);
    expect(got.body).toEqual({ name: `${base.slice(4)}/c1`, pushNotificationConfig: expect.objectContaining({ id: "c1", url, token: "tok" }) });
    const listed = await call("GET", base);
    expect((listed.body["configs"] as Json[]).map((c) => c["name"]).sort()).toEqual(["c1", "c2", "c3", "c4"].map((c) => `${base.slice(4)}/${c}`));
    for (const c of ["c1", "c2", "c3", "c4"]) expect((await call("DELETE", `${base}/${c}`)).status).toBe(200);
    expect((await call("GET", base)).body).toEqual({ configs: [] });
  });

  test("GetAgentCard: GET /v1/card is the v0.3 AgentCard in ProtoJSON", async () => {
    const card = await call("GET", "/v1/card");
    expect([card.status, typeof card.body["name"], typeof card.body["capabilities"]]).toEqual([200, "string", "object"]);
  });
});

describe("one task, every binding (A-31)", () => {
  test("a task made over v0.3 REST is read over v1.0 REST and JSON-RPC with the same key, and is no task for another key", async () => {
    const task = await sendTask("done");
    const v1 = await fetch(`${s.base}/a2a/rest/tasks/${task.id}`, { headers: { "A2A-Version": "1.0", "X-API-Key": s.aliceKey } });
    expect([v1.status, ((await v1.json()) as Task).status.state]).toEqual([200, "TASK_STATE_COMPLETED"]);
    const rpc = (await (await s.post(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: task.id } }))).json()) as Json;
    expect((rpc["result"] as Task).id).toBe(task.id);
    const bob = await call("GET", `/v1/tasks/${task.id}`, undefined, { "X-API-Key": s.bobKey });
    expect([bob.status, bob.body["code"]]).toEqual([404, -32001]);
  });

  test("R-BIND-2: the call is observed as service a2a.v1.A2AService, binding rest", async () => {
    await call("GET", "/v1/tasks/seam-probe-v03");
    const metrics = await (await fetch(`${s.base}/metrics`)).text();
    expect(metrics).toMatch(
      /rpc_server_call_duration_seconds_count\{rpc_system="rest",rpc_service="a2a\.v1\.A2AService",rpc_method="GetTask",rpc_grpc_status_code="5",a2a_version="0\.3"\} [1-9]/,
    );
  });
});

describe("R-V03-41: errors are {code, message} with the HTTP status of R-BIND-38, in application/json", () => {
  test("TASK_NOT_FOUND 404 -32001; TASK_NOT_CANCELABLE 400 -32002; a missing key 401 with WWW-Authenticate", async () => {
    const missing = await call("GET", "/v1/tasks/no-such-task");
    expect([missing.status, missing.headers.get("content-type"), missing.body["code"], typeof missing.body["message"]]).toEqual([
      404,
      "application/json",
      -32001,
      "string",
    ]);
    expect(Object.keys(missing.body).sort()).toEqual(["code", "message"]);
    const task = await sendTask("done");
    const cancel = await call("POST", `/v1/tasks/${task.id}:cancel`);
    expect([cancel.status, cancel.body["code"]]).toEqual([400, -32002]);
    const res = await fetch(`${v03}/v1/card`, { headers: {} });
    const body = (await res.json()) as Json;
    expect([res.status, body["code"], res.headers.get("www-authenticate")]).toEqual([401, -31016, expect.stringContaining("ApiKey")]);
  });

  test("bad input: not JSON, not an object, a huge unknown enum name, a parent not the path's, no config, a wrong Content-Type — each refused, never echoed whole", async () => {
    const cases: Array<[string, string, string, number, number]> = [
      ["POST", "/v1/message:send", "{not json", 400, -32602],
      ["POST", "/v1/message:send", "[1]", 400, -32602],
      [
        "POST",
        "/v1/message:send",
        JSON.stringify({ message: { messageId: "m", role: `ROLE_${"SECRET".repeat(2000)}`, content: [{ text: "x" }] } }),
        400,
        -32602,
      ],
      [
        "POST",
        "/v1/tasks/t1/pushNotificationConfigs",
        JSON.stringify({ parent: "tasks/t2", config: { pushNotificationConfig: { url: "http://127.0.0.1:9/h" } } }),
        400,
        -32602,
      ],
      ["POST", "/v1/tasks/t1/pushNotificationConfigs", JSON.stringify({ config: {} }), 400, -32602],
    ];
    for (const [method, path, body, status, code] of cases) {
      const res = await rawFetch(method, path, body);
      const answer = (await res.json()) as Json;
      expect([path, body, res.status, answer["code"]]).toEqual([path, body, status, code]);
      expect(String(answer["message"]).length).toBeLessThan(400); // never the unbounded input
    }
    const plain = await rawFetch("POST", "/v1/message:send", JSON.stringify(send("done")), { "Content-Type": "text/plain" });
    expect([plain.status, ((await plain.json()) as Json)["code"]]).toEqual([415, -32005]);
  });

  test("the codes are the JSON-RPC binding's, failure by failure (the v0.3 table repeats it: bindings do not import each other)", () => {
    const failures: unknown[] = [
      new CoreTaskNotFoundError("t"),
      new CoreTaskNotCancelableError("t", "TASK_STATE_COMPLETED"),
      new PushNotificationNotSupportedError(),
      new UnsupportedOperationError("no"),
      new ContentTypeNotSupportedError("text/x", "part", ["text/plain"]),
      new InvalidAgentResponseError("no answer"),
      new ExtendedAgentCardNotConfiguredError(),
      new ExtensionSupportRequiredError(["urn:x"]),
      new VersionNotSupportedError("9.9", ["1.0"]),
      InvalidRequestError.field("f", "bad"),
      new LimitExceededError("TOO_MANY", "slow down", 1000),
      new StatusError(Code.UNAUTHENTICATED, "who"),
      new StatusError(Code.PERMISSION_DENIED, "no"),
      new StatusError(Code.FAILED_PRECONDITION, "not now"),
      new StatusError(Code.UNIMPLEMENTED, "none"),
      new Error("boom"),
    ];
    for (const failure of failures) {
      const status = toErrorStatus(failure, () => undefined);
      expect([status.message, v03ErrorCode(status)]).toEqual([status.message, jsonRpcFailure(status).error.code]);
    }
  });

  test("mid-stream: one `event: error` with the {code, message} body, then the end", async () => {
    const binding = createRestV03Binding({
      basePath: "/v03",
      v1BasePath: "/a2a/rest",
      handlers: () => ({
        async SendStreamingMessage(_request: unknown, _ctx: unknown, out: StreamWriter<unknown>) {
          out.write(create(StreamResponseSchema, { payload: { case: "task", value: create(TaskSchema, { id: "t1", status: { state: TaskState.WORKING } }) } }));
          throw new StatusError(Code.RESOURCE_EXHAUSTED, "the client fell too far behind");
        },
      }),
      admission: () => undefined,
      observers: new CallObservers([], () => undefined),
      maxBodyBytes: 1 << 20,
      closing: () => false,
    });
    const server: Server = createServer(binding);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v03/v1/message:stream`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(send("x")),
      });
      const all = await readSse(res).rest();
      expect(all.map((e) => e.event ?? "message")).toEqual(["message", "error"]);
      expect(JSON.parse(all[1]!.data)).toEqual({ code: -31008, message: "the client fell too far behind" });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe("A-36: the versions this base speaks", () => {
  test("A2A-Version absent, empty or 0.3 is served; 1.0 (header or query) is 400 -32009 naming /a2a/rest", async () => {
    for (const version of ["", "0.3", "0.3.0"]) expect((await call("GET", "/v1/card", undefined, { "A2A-Version": version })).status).toBe(200);
    const v1 = await call("GET", "/v1/card", undefined, { "A2A-Version": "1.0" });
    expect([v1.status, v1.body["code"]]).toEqual([400, -32009]);
    expect(v1.body["message"]).toContain("/a2a/rest");
    const query = await call("GET", "/v1/card?A2A-Version=1.0");
    expect([query.status, query.body["code"]]).toEqual([400, -32009]);
  });

  test("a v1.0 route here is 404 -32601 naming the 1.0 base; R-V03-60: GET /v1/tasks (no ListTasks in v0.3) too", async () => {
    for (const [method, path] of [
      ["POST", "/message:send"],
      ["GET", "/tasks"],
      ["GET", "/v1/tasks"],
      ["GET", "/extendedAgentCard"],
    ] as const) {
      const answer = await call(method, path, method === "POST" ? send("done") : undefined);
      expect([path, answer.status, answer.body["code"]]).toEqual([path, 404, -32601]);
      expect(answer.body["message"]).toContain("/a2a/rest");
    }
  });
});

describe("the v0.3 client: @a2a-js/sdk 0.3.14's RestTransport", () => {
  const sdk = (key: string) =>
    new RestTransport({
      endpoint: v03,
      fetchImpl: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), "X-API-Key": key } }),
    });
  const sdkMessage = (text: string): SdkMessage => ({ kind: "message", messageId: `m-${Math.random()}`, role: "user", parts: [{ kind: "text", text }] });

  test("sendMessage, getTask with historyLength, sendMessageStream to the final status update, the card", async () => {
    const client = sdk(s.aliceKey);
    const task = (await client.sendMessage({ message: sdkMessage("done"), configuration: { blocking: true } })) as SdkTask;
    expect([task.kind, task.status.state, task.artifacts?.[0]?.parts]).toEqual(["task", "completed", [{ kind: "text", text: "result" }]]);
    expect((await client.getTask({ id: task.id, historyLength: 1 })).history).toHaveLength(1);
    const streamed = [];
    for await (const event of client.sendMessageStream({ message: sdkMessage("done") })) streamed.push(event);
    expect(streamed[0]!.kind).toBe("task");
    expect(lastOf(streamed)).toEqual(expect.objectContaining({ kind: "status-update", final: true, status: expect.objectContaining({ state: "completed" }) }));
    expect((await client.getExtendedAgentCard()).name).toEqual(expect.any(String));
  });

  test("cancelTask, resubscribeTask (live), and the SDK's typed errors from the {code, message} body", async () => {
    const client = sdk(s.aliceKey);
    const held1 = (await client.sendMessage({ message: sdkMessage("hold"), configuration: { blocking: false } })) as SdkTask;
    await waitFor(held1.id, "TASK_STATE_WORKING");
    expect((await client.cancelTask({ id: held1.id })).status.state).toBe("canceled");
    const finished = (await client.sendMessage({ message: sdkMessage("done"), configuration: { blocking: true } })) as SdkTask;
    await expect(client.cancelTask({ id: finished.id })).rejects.toBeInstanceOf(TaskNotCancelableError);
    await expect(sdk(s.bobKey).getTask({ id: held1.id })).rejects.toBeInstanceOf(TaskNotFoundError);
    const held2 = (await client.sendMessage({ message: sdkMessage("hold"), configuration: { blocking: false } })) as SdkTask;
    await waitFor(held2.id, "TASK_STATE_WORKING");
    const seen = [];
    for await (const event of client.resubscribeTask({ id: held2.id })) {
      seen.push(event);
      if (seen.length === 1) held();
    }
    expect([seen[0]!.kind, lastOf(seen)]).toEqual(["task", expect.objectContaining({ kind: "status-update", final: true })]);
  });

  test("push configs: set, get, list, delete", async () => {
    const client = sdk(s.aliceKey);
    const task = (await client.sendMessage({ message: sdkMessage("done"), configuration: { blocking: true } })) as SdkTask;
    const pushNotificationConfig = { id: "sdk1", url: "http://127.0.0.1:9/sdk", token: "t" };
    const set = await client.setTaskPushNotificationConfig({ taskId: task.id, pushNotificationConfig });
    expect(set).toEqual({ taskId: task.id, pushNotificationConfig: expect.objectContaining(pushNotificationConfig) });
    const got = await client.getTaskPushNotificationConfig({ id: task.id, pushNotificationConfigId: "sdk1" });
    expect(got.pushNotificationConfig.url).toBe(pushNotificationConfig.url);
    expect((await client.listTaskPushNotificationConfig({ id: task.id })).map((c) => c.pushNotificationConfig.id)).toEqual(["sdk1"]);
    await client.deleteTaskPushNotificationConfig({ id: task.id, pushNotificationConfigId: "sdk1" });
    expect(await client.listTaskPushNotificationConfig({ id: task.id })).toEqual([]);
  });
});
