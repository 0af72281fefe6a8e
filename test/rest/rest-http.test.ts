/**
 * Issue 34 item 3 (and the REST parts of items 4, 5, 7): every HTTP+JSON route of the proto's
 * google.api.http options, tenant variants included, query parameters, path/body rules, bad
 * input, and the SSE streams (order, resume by Last-Event-ID, a client that leaves, an error
 * after the first event), through raw HTTP against the real server.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { StreamResponseSchema, TaskSchema } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { CallObservers } from "../../src/service/call-observer.js";
import { StatusError } from "../../src/service/error-status.js";
import type { StreamWriter } from "../../src/service/face.js";
import { Code } from "../../src/service/status-code.js";
import { STREAM_RESUME_EXTENSION, openStreamCount } from "../../src/streams/index.js";
import { createRestV1Binding } from "../../src/rest/index.js";
import { readSse } from "../jsonrpc/sse-reader.js";
import { message, reasonOf, startRestSetup, violatedFields, type RestSetup } from "./rest-support.js";

let s: RestSetup;
beforeAll(async () => {
  s = await startRestSetup({ A2A_STREAM_HEARTBEAT: "off", A2A_CORS_ORIGINS: "*" });
});
afterAll(() => s.close());

type Json = Record<string, unknown>;
const taskOf = (body: Json) => body["task"] as { id: string; contextId: string; status: { state: string } };

async function sendTask(text: string, path = "/message:send", extra: Json = {}): Promise<{ id: string; contextId: string; status: { state: string } }> {
  const answer = await s.call("POST", path, { ...message(text), ...extra });
  expect(answer.status).toBe(200);
  return taskOf(answer.body);
}

async function waitFor(path: string, state: string): Promise<Json> {
  for (let i = 0; i < 200; i++) {
    const answer = await s.call("GET", path);
    if ((answer.body["status"] as { state?: string } | undefined)?.state === state) return answer.body;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`${path} never reached ${state}`);
}

describe("R-HTTP-1: every route, from the proto's annotations", () => {
  test("R-BIND-15, R-BIND-16: the card lists HTTP+JSON 1.0 after gRPC and JSON-RPC, with the absolute base URL", async () => {
    const card = (await (await fetch(`${s.base}/.well-known/agent-card.json`)).json()) as { supportedInterfaces: Array<Record<string, string>> };
    // The 1.0 entries; the 0.3 ones follow (test/card/v03-card.test.ts).
    expect(card.supportedInterfaces.filter((i) => i.protocolVersion === "1.0").map((i) => i.protocolBinding)).toEqual(["GRPC", "JSONRPC", "HTTP+JSON"]);
    expect(card.supportedInterfaces[2]).toEqual(expect.objectContaining({ url: `${s.base}/a2a/rest`, protocolVersion: "1.0" }));
  });

  test("R-HTTP-7, R-HTTP-19: SendMessage and GetTask answer 200 ProtoJSON in application/a2a+json, never cached; historyLength from the query", async () => {
    const task = await sendTask("story");
    expect(task.status.state).toBe("TASK_STATE_COMPLETED");
    const read = await s.call("GET", `/tasks/${encodeURIComponent(task.id)}?historyLength=0`);
    expect([read.status, read.headers.get("content-type"), read.headers.get("cache-control")]).toEqual([200, "application/a2a+json", "no-store"]);
    expect(read.body["id"]).toBe(task.id);
    expect(read.body["history"]).toBeUndefined(); // R-BIND-24: 0 = no history
    const full = await s.call("GET", `/tasks/${task.id}?history_length=5`); // proto names too (R-HTTP-5)
    expect((full.body["history"] as unknown[]).length).toBeGreaterThan(0);
  });

  test("R-HTTP-6: ListTasks filters by contextId, status, pageSize, includeArtifacts, statusTimestampAfter; the list fields always there (R-BIND-25)", async () => {
    const task = await sendTask("story");
    const since = new Date(Date.now() - 60_000).toISOString();
    const q = `contextId=${task.contextId}&status=TASK_STATE_COMPLETED&pageSize=1&includeArtifacts=true&statusTimestampAfter=${since}`;
    const listed = await s.call("GET", `/tasks?${q}`);
    expect(listed.status).toBe(200);
    const tasks = listed.body["tasks"] as Array<Json>;
    expect(tasks.map((t) => t["id"])).toEqual([task.id]);
    expect(Array.isArray(tasks[0]!["artifacts"])).toBe(true);
    expect(listed.body).toEqual(expect.objectContaining({ pageSize: 1, totalSize: 1, nextPageToken: "" }));
    const none = await s.call("GET", "/tasks?status=TASK_STATE_CANCELED&contextId=no-such-context");
    expect(none.body).toEqual({ tasks: [], nextPageToken: "", pageSize: 50, totalSize: 0 });
  });

  test("CancelTask: POST /tasks/{id}:cancel with an empty body; the body's metadata is read", async () => {
    s.scripts.set("until canceled", async (ctx) => {
      await ctx.working("running");
      await new Promise((r) => ctx.signal.addEventListener("abort", r));
    });
    const task = await sendTask("until canceled", "/message:send", { configuration: { returnImmediately: true } });
    await waitFor(`/tasks/${task.id}`, "TASK_STATE_WORKING");
    const canceled = await s.call("POST", `/tasks/${task.id}:cancel`, { metadata: { why: "test" } });
    expect([canceled.status, (canceled.body["status"] as { state: string }).state]).toEqual([200, "TASK_STATE_CANCELED"]);
  });

  test("push configs: create, get, list, delete ({}), on the task_id and id path variables", async () => {
    const task = await sendTask("story");
    const base = `/tasks/${task.id}/pushNotificationConfigs`;
    const created = await s.call("POST", base, { id: "c1", url: "http://127.0.0.1:9/hook", token: "tok" });
    expect([created.status, created.body["taskId"], created.body["id"]]).toEqual([200, task.id, "c1"]);
    expect((await s.call("GET", `${base}/c1`)).body["url"]).toBe("http://127.0.0.1:9/hook");
    const listed = await s.call("GET", `${base}?pageSize=10`);
    expect((listed.body["configs"] as Json[]).map((c) => c["id"])).toEqual(["c1"]);
    expect(listed.body["nextPageToken"]).toBe(""); // R-BIND-25
    const deleted = await s.call("DELETE", `${base}/c1`);
    expect([deleted.status, deleted.body]).toEqual([200, {}]); // BQ-8
    expect(await s.call("GET", base).then((a) => a.body)).toEqual({ configs: [], nextPageToken: "" });
  });

  test("GetExtendedAgentCard: GET /extendedAgentCard, never cached", async () => {
    const card = await s.call("GET", "/extendedAgentCard");
    expect([card.status, card.body["description"], card.headers.get("cache-control")]).toEqual([200, "the extended card", "no-store"]);
  });

  test("R-HTTP-3: the /{tenant}/... variants set the tenant; each tenant sees its own tasks", async () => {
    const task = await sendTask("story", "/acme/message:send");
    expect((await s.call("GET", `/acme/tasks/${task.id}`)).status).toBe(200);
    const listed = await s.call("GET", `/acme/tasks?contextId=${task.contextId}`);
    expect((listed.body["tasks"] as Json[]).map((t) => t["id"])).toEqual([task.id]);
    expect(reasonOf(await s.call("GET", `/other/tasks/${task.id}`))).toBe("TASK_NOT_FOUND");
    expect((await s.call("GET", `/tasks?tenant=acme&contextId=${task.contextId}`)).body["totalSize"]).toBe(1); // tenant from the query
    expect((await s.call("GET", "/acme/extendedAgentCard")).status).toBe(200);
    const config = await s.call("POST", `/acme/tasks/${task.id}/pushNotificationConfigs`, { url: "http://127.0.0.1:9/t" });
    expect(config.body["tenant"]).toBe("acme");
  });

  test("R-HTTP-3: literal routes win over tenant routes; R-HTTP-2: a variable is one percent-decoded segment", async () => {
    const tasks = await s.call("GET", "/tasks/tasks"); // GetTask "tasks", not ListTasks of tenant "tasks"
    expect([reasonOf(tasks), (tasks.body.error?.details[0]?.["metadata"] as Json | undefined)?.["task_id"]]).toEqual(["TASK_NOT_FOUND", "tasks"]);
    const slash = await s.call("GET", "/tasks/a%2Fb");
    expect((slash.body.error?.details[0]?.["metadata"] as Json | undefined)?.["task_id"]).toBe("a/b");
    expect((await s.call("GET", "/tasks/a/b/c/d")).status).toBe(404);
    expect(reasonOf(await s.call("GET", "/tasks/a/b/c/d"))).toBeUndefined(); // no route, not a task
  });
});

describe("R-HTTP-4..6, BQ-13: path, query and body rules", () => {
  test("BQ-13: a body repeating a path field with another value is 400 naming it; the same value is fine", async () => {
    const task = await sendTask("story");
    const other = await s.call("POST", `/tasks/${task.id}:cancel`, { id: "another" });
    expect([other.status, violatedFields(other)]).toEqual([400, ["id"]]);
    const tenant = await s.call("POST", "/acme/message:send", { ...message("story"), tenant: "other" });
    expect(violatedFields(tenant)).toEqual(["tenant"]);
    const config = await s.call("POST", `/tasks/${task.id}/pushNotificationConfigs`, { task_id: "x", url: "http://127.0.0.1:9/h" });
    expect(violatedFields(config)).toEqual(["task_id"]);
    const same = await s.call("POST", `/tasks/${task.id}:cancel`, { id: task.id });
    expect(reasonOf(same)).toBe("TASK_NOT_CANCELABLE"); // reached the handler
  });

  test("R-HTTP-6: malformed query values are 400 INVALID_ARGUMENT naming the field, never echoing the value", async () => {
    const cases: Array<[string, string]> = [
      ["pageSize=abc", "page_size"],
      ["pageSize=1.5", "page_size"],
      ["pageSize=0", "page_size"],
      ["includeArtifacts=yes", "include_artifacts"],
      ["status=TASK_STATE_RUNNING", "status"], // R-BIND-22: never "no filter"
      ["historyLength=-1", "history_length"],
      ["statusTimestampAfter=yesterday", "status_timestamp_after"],
      ["pageSize=1&pageSize=2", "page_size"],
    ];
    for (const [query, field] of cases) {
      const answer = await s.call("GET", `/tasks?${query}`);
      expect([query, answer.status, answer.body.error?.status, violatedFields(answer)]).toEqual([query, 400, "INVALID_ARGUMENT", [field]]);
    }
    const long = await s.call("GET", `/tasks?status=${"X".repeat(5000)}`);
    expect(JSON.stringify(long.body)).not.toContain("XXXXXXXX");
  });

  test("R-BIND-23: unknown query parameters and body fields are ignored", async () => {
    expect((await s.call("GET", "/tasks?someFutureFilter=1&pageSize=1")).status).toBe(200);
    expect((await s.call("POST", "/message:send", { ...message("story"), someFutureField: 1 })).status).toBe(200);
  });

  test("CORS: the preflight of a REST path allows GET, POST and DELETE", async () => {
    const res = await fetch(`${s.rest}/tasks/t1`, { method: "OPTIONS", headers: { Origin: "https://app.example", "Access-Control-Request-Method": "DELETE" } });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-methods")?.split(", ").sort()).toEqual(["DELETE", "GET", "POST"]);
  });
});

describe("R-HTTP-13..17: SSE streams", () => {
  const stream = (path: string, body?: unknown, headers: Record<string, string> = {}, method = "POST") =>
    s.fetch(method, path, body === undefined ? undefined : JSON.stringify(body), { Accept: "text/event-stream", ...headers });

  test("R-HTTP-13, R-BIND-33/34: POST /message:stream: 200 text/event-stream, each data a bare StreamResponse, in order, no id or event", async () => {
    const res = await stream("/message:stream", message("story"));
    expect([res.status, res.headers.get("content-type"), res.headers.get("cache-control")]).toEqual([200, "text/event-stream", "no-cache"]);
    const events = await readSse(res).rest();
    expect(events.length).toBeGreaterThan(2);
    for (const event of events) expect([event.id, event.event]).toEqual([undefined, undefined]);
    const payloads = events.map((e) => JSON.parse(e.data) as Json);
    expect(Object.keys(payloads[0]!)).toEqual(["task"]);
    for (const p of payloads.slice(1)) expect(["statusUpdate", "artifactUpdate"]).toContain(Object.keys(p)[0]);
    expect((payloads.at(-1)!["statusUpdate"] as { status: { state: string } }).status.state).toBe("TASK_STATE_COMPLETED");
  });

  test("A-33: with the resume extension each SSE id is a cursor; GET :subscribe with Last-Event-ID resumes exactly after it; BQ-7: POST works too", async () => {
    let step!: () => void;
    let stepped = new Promise<void>((r) => (step = r));
    const next = async () => {
      await stepped;
      stepped = new Promise<void>((r) => (step = r));
    };
    s.scripts.set("resumable", async (ctx) => {
      await ctx.working("one");
      await next();
      await ctx.artifact({ artifactId: "a1", name: "piece", parts: ["piece"] });
      await next();
      await ctx.complete("done");
    });
    const extensions = { "A2A-Extensions": STREAM_RESUME_EXTENSION };
    const first = await stream("/message:stream", message("resumable"), extensions);
    expect(first.headers.get("a2a-extensions")).toBe(STREAM_RESUME_EXTENSION);
    const reader = readSse(first);
    const snapshot = (await reader.next())!;
    const working = (await reader.next())!;
    expect(working.id).toMatch(/^[A-Za-z0-9_-]+$/);
    const taskId = (JSON.parse(snapshot.data) as { task: { id: string } }).task.id;
    await reader.abandon();
    step();
    await new Promise((r) => setTimeout(r, 50));
    const resumed = await stream(`/tasks/${taskId}:subscribe`, undefined, { ...extensions, "Last-Event-ID": working.id! }, "GET");
    expect(resumed.status).toBe(200);
    const again = readSse(resumed);
    expect(Object.keys(JSON.parse((await again.next())!.data) as Json)).toEqual(["artifactUpdate"]);
    await again.abandon();
    const byPost = await stream(`/tasks/${taskId}:subscribe`, undefined, {}, "POST");
    const live = readSse(byPost);
    expect(Object.keys(JSON.parse((await live.next())!.data) as Json)).toEqual(["task"]); // a plain subscribe starts with the snapshot
    step();
    const rest = await live.rest();
    expect((JSON.parse(rest.at(-1)!.data) as { statusUpdate: { status: { state: string } } }).statusUpdate.status.state).toBe("TASK_STATE_COMPLETED");
  });

  test("A-33: a Last-Event-ID that is not our cursor is 400 naming the cursor, before any SSE byte", async () => {
    const res = await stream("/tasks/whatever:subscribe", undefined, { "A2A-Extensions": STREAM_RESUME_EXTENSION, "Last-Event-ID": "nope" }, "GET");
    expect([res.status, res.headers.get("content-type")]).toEqual([400, "application/a2a+json"]);
  });

  test("R-BIND-36, R-STREAM-9: a stream the client abandons ends its subscription, not the task; no stream left open", async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    s.scripts.set("abandoned", async (ctx) => {
      await ctx.working("working");
      await held;
      await ctx.complete("done");
    });
    const events = readSse(await stream("/message:stream", message("abandoned")));
    const taskId = (JSON.parse((await events.next())!.data) as { task: { id: string } }).task.id;
    await events.abandon();
    for (let i = 0; i < 100 && openStreamCount() > 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(openStreamCount()).toBe(0);
    release();
    await waitFor(`/tasks/${taskId}`, "TASK_STATE_COMPLETED");
  });
});

describe("R-HTTP-17: the binding itself, over a face that fails", () => {
  let server: Server;
  let url: string;
  let closing = false;
  beforeAll(async () => {
    const task = create(TaskSchema, { id: "t1", contextId: "c1", status: { state: 2 } });
    const handlers = {
      async SubscribeToTask(_request: unknown, _ctx: unknown, out: StreamWriter<unknown>) {
        out.write(create(StreamResponseSchema, { payload: { case: "task", value: task } }));
        throw new StatusError(Code.RESOURCE_EXHAUSTED, "the client fell too far behind");
      },
    };
    const binding = createRestV1Binding({
      basePath: "/rest",
      handlers: () => handlers,
      admission: () => undefined,
      checkVersion: () => undefined,
      observers: new CallObservers([], () => undefined),
      maxBodyBytes: 1024,
      closing: () => closing,
    });
    server = createServer(binding);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/rest`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  test("R-HTTP-17, R-BIND-34: an error after the first event is one `event: error` with the §11.6 body, then the end", async () => {
    const events = await readSse(await fetch(`${url}/tasks/t1:subscribe`)).rest();
    expect(events.map((e) => e.event)).toEqual([undefined, "error"]);
    expect(JSON.parse(events[1]!.data)).toEqual({ error: { code: 429, status: "RESOURCE_EXHAUSTED", message: expect.any(String), details: [] } });
  });

  test("503 UNAVAILABLE once shutdown has begun; 501 for a method the face does not implement", async () => {
    expect((await fetch(`${url}/tasks/t1`)).status).toBe(501);
    closing = true;
    const res = await fetch(`${url}/tasks/t1:subscribe`);
    expect([res.status, ((await res.json()) as { error: { status: string } }).error.status]).toEqual([503, "UNAVAILABLE"]);
  });
});
