/**
 * Issue 34 item 2: the §5.4 error table and the JSON-RPC envelope rules over JSON-RPC, through raw
 * HTTP requests (what a client of any make sends), and bad input of every kind.
 */
import { create } from "@bufbuild/protobuf";
import { AgentExtensionSchema } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { jsonRpcFailure } from "../../src/jsonrpc/jsonrpc-errors.js";
import { ExtendedAgentCardNotConfiguredError } from "../../src/lifecycle/model/errors.js";
import { toErrorStatus } from "../../src/service/error-status.js";
import { startJsonRpcSetup, type JsonRpcSetup } from "./jsonrpc-support.js";
import { readSse } from "./sse-reader.js";
import { openStreamCount } from "../../src/streams/index.js";

let s: JsonRpcSetup;
/** Push notifications off, an extension clients must activate, no extended card. */
let plain: JsonRpcSetup;
beforeAll(async () => {
  s = await startJsonRpcSetup();
  plain = await startJsonRpcSetup(
    { A2A_PUSH_NOTIFICATIONS: "false" },
    { extendedCard: undefined, extensions: [create(AgentExtensionSchema, { uri: "urn:test:required", required: true })] },
  );
});
afterAll(async () => {
  await s?.close();
  await plain?.close();
});

interface RpcAnswer {
  readonly status: number;
  readonly body: {
    jsonrpc: string;
    id: unknown;
    result?: Record<string, unknown>;
    error?: { code: number; message: string; data?: Array<Record<string, unknown>> };
  };
}

async function call(setup: JsonRpcSetup, method: string, params?: unknown, headers: Record<string, string> = {}, id: unknown = 7): Promise<RpcAnswer> {
  const res = await setup.post(JSON.stringify({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) }), headers);
  return { status: res.status, body: (await res.json()) as RpcAnswer["body"] };
}

const message = (text: string, extra: Record<string, unknown> = {}) => ({
  message: { messageId: `m-${Math.random()}`, role: "ROLE_USER", parts: [{ text }], ...extra },
});

/** The A2A ErrorInfo reason in `error.data`. */
const reasonOf = (answer: RpcAnswer) => answer.body.error?.data?.find((d) => String(d["@type"]).endsWith("google.rpc.ErrorInfo"))?.["reason"];

async function finishedTask(setup: JsonRpcSetup): Promise<string> {
  const sent = await call(setup, "SendMessage", message("story"));
  return (sent.body.result!["task"] as { id: string }).id;
}

describe("R-JRPC-17, R-BIND-38: every row of the §5.4 table, with ErrorInfo in error.data", () => {
  test("-32001 TaskNotFoundError, id echoed (R-JRPC-4, R-JRPC-16)", async () => {
    const answer = await call(s, "GetTask", { id: "no-such-task" }, {}, "abc");
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual(
      expect.objectContaining({
        jsonrpc: "2.0",
        id: "abc",
        error: expect.objectContaining({
          code: -32001,
          data: [
            {
              "@type": "type.googleapis.com/google.rpc.ErrorInfo",
              reason: "TASK_NOT_FOUND",
              domain: "a2a-protocol.org",
              metadata: { task_id: "no-such-task" },
            },
          ],
        }),
      }),
    );
  });

  test("-32002 TaskNotCancelableError", async () => {
    const answer = await call(s, "CancelTask", { id: await finishedTask(s) });
    expect([answer.body.error?.code, reasonOf(answer)]).toEqual([-32002, "TASK_NOT_CANCELABLE"]);
  });

  test("-32003 PushNotificationNotSupportedError", async () => {
    const answer = await call(
      plain,
      "CreateTaskPushNotificationConfig",
      { taskId: "t", url: "http://127.0.0.1:9/x" },
      { "A2A-Extensions": "urn:test:required" },
    );
    expect([answer.body.error?.code, reasonOf(answer)]).toEqual([-32003, "PUSH_NOTIFICATION_NOT_SUPPORTED"]);
  });

  test("-32004 UnsupportedOperationError (subscribe to a terminal task, before any SSE byte: R-JRPC-14)", async () => {
    const res = await s.post(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "SubscribeToTask", params: { id: await finishedTask(s) } }));
    expect(res.headers.get("content-type")).toBe("application/json");
    const body = (await res.json()) as RpcAnswer["body"];
    expect([body.id, body.error?.code]).toEqual([3, -32004]);
  });

  test("-32005 ContentTypeNotSupportedError, with the part's field in a BadRequest too", async () => {
    const strict = await startJsonRpcSetup({}, { acceptedInputMediaTypes: ["text/plain"] });
    try {
      const answer = await call(strict, "SendMessage", { message: { messageId: "m1", role: "ROLE_USER", parts: [{ raw: "iVA=", mediaType: "image/png" }] } });
      expect([answer.body.error?.code, reasonOf(answer)]).toEqual([-32005, "CONTENT_TYPE_NOT_SUPPORTED"]);
    } finally {
      await strict.close();
    }
  });

  test("-32006 InvalidAgentResponseError", async () => {
    s.scripts.set("say nothing", async () => {});
    const answer = await call(s, "SendMessage", message("say nothing"));
    expect([answer.body.error?.code, reasonOf(answer)]).toEqual([-32006, "INVALID_AGENT_RESPONSE"]);
  });

  // The app always builds an extended card when the capability is declared, so no request reaches -32007;
  // without the capability the answer is -32004 (R-CAP). The mapping itself is checked on the core's error.
  test("-32007 ExtendedAgentCardNotConfiguredError (mapping), and -32004 when the card does not declare the capability", async () => {
    const failure = jsonRpcFailure(toErrorStatus(new ExtendedAgentCardNotConfiguredError(), () => undefined));
    expect([failure.httpStatus, failure.error.code, failure.error.data?.[0]]).toEqual([
      200,
      -32007,
      expect.objectContaining({ reason: "EXTENDED_AGENT_CARD_NOT_CONFIGURED", domain: "a2a-protocol.org" }),
    ]);
    const answer = await call(plain, "GetExtendedAgentCard", undefined, { "A2A-Extensions": "urn:test:required" });
    expect([answer.body.error?.code, reasonOf(answer)]).toEqual([-32004, "UNSUPPORTED_OPERATION"]);
  });

  test("-32008 ExtensionSupportRequiredError", async () => {
    const answer = await call(plain, "GetTask", { id: "t" });
    expect([answer.body.error?.code, reasonOf(answer)]).toEqual([-32008, "EXTENSION_SUPPORT_REQUIRED"]);
  });

  test("-32009 VersionNotSupportedError naming the header, with supported_versions (R-JRPC-19, A-3, A-36)", async () => {
    const res = await s.post(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "t" } }), { "A2A-Version": "" });
    const body = (await res.json()) as RpcAnswer["body"];
    expect(body.error?.code).toBe(-32009);
    expect(body.error?.message).toMatch(/a2a-version/i);
    expect(body.error?.data?.[0]).toEqual(
      expect.objectContaining({ reason: "VERSION_NOT_SUPPORTED", metadata: expect.objectContaining({ supported_versions: "1.0" }) }),
    );
  });

  test("R-BIND-11, BQ-6: ?A2A-Version= stands in for a missing header; the header wins when both are sent", async () => {
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "nope" } });
    const post = (url: string, version?: string) =>
      fetch(url, {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-API-Key": s.aliceKey, ...(version ? { "A2A-Version": version } : {}) },
        body,
      });
    const byQuery = (await (await post(`${s.endpoint}?A2A-Version=1.0`)).json()) as RpcAnswer["body"];
    expect(byQuery.error?.code).toBe(-32001);
    const headerWins = (await (await post(`${s.endpoint}?A2A-Version=1.0`, "0.3")).json()) as RpcAnswer["body"];
    expect(headerWins.error?.code).toBe(-32009);
  });

  test("-32602 invalid params with a BadRequest naming the field (A-6, R-BIND-22)", async () => {
    const empty = await call(s, "GetTask", { id: "" });
    expect(empty.body.error?.code).toBe(-32602);
    expect(empty.body.error?.data?.[0]).toEqual(
      expect.objectContaining({ "@type": "type.googleapis.com/google.rpc.BadRequest", fieldViolations: [expect.objectContaining({ field: "id" })] }),
    );
    const unknownEnum = await call(s, "ListTasks", { status: "TASK_STATE_RUNNING" });
    expect(unknownEnum.body.error?.code).toBe(-32602);
    const arrayParams = await call(s, "GetTask", ["t"]);
    expect(arrayParams.body.error?.code).toBe(-32602);
  });

  test("R-BIND-25: ListTasks always has its list fields; includeArtifacts gives every task an artifacts list", async () => {
    s.scripts.set("no artifacts", async (ctx) => ctx.complete("done"));
    await call(s, "SendMessage", message("no artifacts"));
    const empty = await call(s, "ListTasks", { contextId: "no-such-context" });
    expect(empty.body.result).toEqual({ tasks: [], nextPageToken: "", pageSize: 50, totalSize: 0 });
    const listed = await call(s, "ListTasks", { includeArtifacts: true, pageSize: 100 });
    const tasks = listed.body.result?.["tasks"] as unknown as Array<Record<string, unknown>>;
    expect(tasks.length).toBeGreaterThan(0);
    for (const task of tasks) expect(Array.isArray(task["artifacts"])).toBe(true);
    const without = await call(s, "ListTasks", { pageSize: 100 });
    const plainTasks = (without.body.result?.["tasks"] ?? []) as unknown as Array<Record<string, unknown>>;
    expect(plainTasks.length).toBeGreaterThan(0);
    for (const task of plainTasks) expect(task["artifacts"]).toBeUndefined();
  });

  test("R-BIND-23: unknown fields in params are ignored", async () => {
    const answer = await call(s, "GetTask", { id: await finishedTask(s), someFutureField: 1 });
    expect(answer.body.result?.["id"]).toEqual(expect.any(String));
  });

  test("BQ-9: a wrong credential is 401 with -31016 before the body is read; another principal's task is -32001", async () => {
    const res = await s.post(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "t" } }), { "X-API-Key": "a2a_wrong" });
    const wrong = { status: res.status, body: (await res.json()) as RpcAnswer["body"] };
    expect([wrong.status, wrong.body.error?.code, wrong.body.id]).toEqual([401, -31016, null]);
    expect(res.headers.get("www-authenticate")).toContain('header="X-API-Key"'); // R-BIND-7
    const id = await finishedTask(s);
    const bob = await call(s, "GetTask", { id }, { "X-API-Key": s.bobKey });
    expect(bob.body.error?.code).toBe(-32001);
  });
});

describe("R-JRPC-1..10: the envelope and the HTTP layer", () => {
  test("R-JRPC-5: a body that is not JSON is -32700 with id null", async () => {
    const res = await s.post("{not json");
    expect(await res.json()).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "Invalid JSON payload" } });
  });

  test("R-JRPC-3, R-JRPC-10: wrong jsonrpc version, a notification, a bad id are -32600", async () => {
    const version = (await (await s.post(JSON.stringify({ jsonrpc: "1.0", id: 1, method: "GetTask" }))).json()) as RpcAnswer["body"];
    expect([version.id, version.error?.code]).toEqual([1, -32600]);
    const notification = (await (await s.post(JSON.stringify({ jsonrpc: "2.0", method: "GetTask", params: { id: "t" } }))).json()) as RpcAnswer["body"];
    expect([notification.id, notification.error?.code]).toEqual([null, -32600]);
    const badId = (await (await s.post(JSON.stringify({ jsonrpc: "2.0", id: { x: 1 }, method: "GetTask" }))).json()) as RpcAnswer["body"];
    expect([badId.id, badId.error?.code]).toEqual([null, -32600]);
  });

  test('R-JRPC-4: ids 0 and "" are echoed as sent', async () => {
    expect((await call(s, "GetTask", { id: "nope" }, {}, 0)).body.id).toBe(0);
    expect((await call(s, "GetTask", { id: "nope" }, {}, "")).body.id).toBe("");
  });

  test("R-JRPC-7: an unknown method, and a v0.3 method name, are -32601 with the id", async () => {
    expect((await call(s, "NoSuchMethod", {})).body.error?.code).toBe(-32601);
    const legacy = await call(s, "tasks/get", { id: "t" }, {}, 9);
    expect([legacy.body.id, legacy.body.error?.code]).toEqual([9, -32601]);
    expect(legacy.body.error?.message).toMatch(/v0\.3 method name.*A2A 1\.0/); // says which version this endpoint speaks
  });

  test("R-JRPC-9: a batch is one -32600 with id null", async () => {
    const res = await s.post(JSON.stringify([{ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "t" } }]));
    const body = (await res.json()) as RpcAnswer["body"];
    expect([res.status, body.id, body.error?.code]).toEqual([200, null, -32600]);
  });

  test("R-JRPC-1: another HTTP method is 405 with Allow: POST", async () => {
    const res = await fetch(s.endpoint, { method: "GET" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
  });

  test("R-JRPC-2, BQ-14: a non-JSON content type is 415 with -32600", async () => {
    const res = await s.post("{}", { "Content-Type": "text/plain" });
    expect(res.status).toBe(415);
    expect(((await res.json()) as RpcAnswer["body"]).error?.code).toBe(-32600);
    const charset = await s.post(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "x" } }), {
      "Content-Type": "application/json; charset=utf-8",
    });
    expect(((await charset.json()) as RpcAnswer["body"]).error?.code).toBe(-32001);
  });

  test("R-BIND-32: a body over A2A_MAX_MESSAGE_BYTES is 413 with -32600, the server unharmed", async () => {
    const limit = 4 * 1024 * 1024; // the default A2A_MAX_MESSAGE_BYTES
    const res = await s.post(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "x".repeat(limit + 10) } }));
    expect(res.status).toBe(413);
    expect(((await res.json()) as RpcAnswer["body"]).error?.code).toBe(-32600);
    expect((await call(s, "GetTask", { id: "still-up" })).body.error?.code).toBe(-32001);
  });

  test("R-BIND-36, R-STREAM-9: a stream the client abandons ends its subscription, not the task, and the server goes on", async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    s.scripts.set("abandoned", async (ctx) => {
      await ctx.working("working");
      await held;
      await ctx.complete("done");
    });
    const res = await fetch(s.endpoint, {
      method: "POST",
      headers: { "Content-Type": "application/json", "A2A-Version": "1.0", "X-API-Key": s.aliceKey },
      body: JSON.stringify({ jsonrpc: "2.0", id: 5, method: "SendStreamingMessage", params: message("abandoned") }),
    });
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const events = readSse(res);
    const first = JSON.parse((await events.next())!.data) as { id: number; result: { task: { id: string } } };
    expect(first.id).toBe(5);
    const taskId = first.result.task.id;
    await events.abandon(); // the client goes away mid-stream
    // Its subscription ends at once, while the task still runs (held by the script).
    for (let i = 0; i < 100 && openStreamCount() > 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(openStreamCount()).toBe(0);
    release();
    for (let i = 0; i < 100; i++) {
      const status = (await call(s, "GetTask", { id: taskId })).body.result?.["status"] as { state: string } | undefined;
      const state = status?.state;
      if (state === "TASK_STATE_COMPLETED") return;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error("the abandoned stream's task did not complete");
  });
});
