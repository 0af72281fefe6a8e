/**
 * Push configs made by v0.3 calls (R-V03-70/71, BQ-21): they remember their generation and get
 * the v0.3 Task JSON at a real loopback receiver, beside a 1.0 config that keeps A-9's
 * StreamResponse; the generation survives a restart on SQLite. The v0.3 calls are made the way
 * the v0.3 endpoints make them: through the v1.0 face with asV03Call.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create, toBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import {
  Role,
  SendMessageRequestSchema,
  StreamResponseSchema,
  TaskSchema,
  TaskState,
  TaskPushNotificationConfigSchema,
  type SendMessageResponse,
  type TaskPushNotificationConfig,
} from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { Agent } from "../../src/lifecycle/ports/agent.js";
import { asV03Call, type A2AServiceHandlers, type CallContext } from "../../src/service/face.js";
import type { TaskRepository } from "../../src/lifecycle/index.js";
import { v03WebhookBody } from "../../src/v03/push/index.js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import { startReceiver, type Received, type Receiver } from "./receiver.js";

type Json = Record<string, any>;

/**
 * "ask": the task waits for input; a follow-up completes it. "go": works, then waits for the
 * test to open `gate` (its configs are made meanwhile), then works on, writes an artifact and completes.
 * Anything else: works, writes the artifact and completes at once.
 */
let openGate: () => void = () => {};
const gate = new Promise<void>((resolve) => (openGate = resolve));
const agent: Agent = {
  card: { skills: [{ id: "v03push", name: "v0.3 push", description: "Answers for the push test", tags: ["test"] } as never] },
  async execute(ctx) {
    const text = ctx.message.parts[0]?.content.case === "text" ? ctx.message.parts[0].content.value : "";
    if (text === "ask") return ctx.requireInput("where to?");
    await ctx.working("started");
    if (text === "go") {
      await gate;
      await ctx.working("halfway");
    }
    await ctx.artifact({ artifactId: "a1", name: "answer", parts: ["forty-two"] });
    await ctx.complete("done");
  },
};

let dir: string;
let receiver: Receiver;
let s: A2ATestServer;
const start = () => startA2AServer({ agent, env: { A2A_STORE: "sqlite", A2A_DATA_DIR: dir, A2A_PUSH_ALLOW_HOSTS: "127.0.0.1", A2A_PUSH_ALLOW_HTTP: "true" } });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "a2a-v03push-"));
  receiver = await startReceiver();
  s = await start();
});
afterAll(async () => {
  await s?.close();
  await receiver.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A call through the face as a binding makes it (a2a-version 1.0 in its metadata: the face checks it). */
function call(method: string): CallContext {
  const values = new Map([["a2a-version", "1.0"]]);
  return {
    method,
    metadata: { get: (key) => (values.has(key) ? [values.get(key)!] : []), getMap: () => Object.fromEntries(values) },
    signal: new AbortController().signal,
    onEnd: () => () => {},
    setLogField: () => {},
    setTaskId: () => {},
    setPrincipal: () => {},
    getAuthContext: () => ({}),
    setResponseHeader: () => {},
  };
}
const v03 = (method: string) => asV03Call(call(method));
const handlers = () => s.app.handlers as A2AServiceHandlers;

function send(text: string, configuration: MessageInitShape<typeof SendMessageRequestSchema>["configuration"], as = call("SendMessage"), taskId = "") {
  const request = create(SendMessageRequestSchema, {
    message: { messageId: `m-${text}-${Date.now()}-${Math.random()}`, role: Role.USER, taskId, parts: [{ content: { case: "text", value: text } }] },
    configuration,
  });
  return handlers().SendMessage(request, as);
}
const taskIdOf = (response: SendMessageResponse) => (response.payload.case === "task" ? response.payload.value.id : "");

function pushConfig(taskId: string, path: string, extra: MessageInitShape<typeof TaskPushNotificationConfigSchema> = {}): TaskPushNotificationConfig {
  return create(TaskPushNotificationConfigSchema, { taskId, url: receiver.url(path), token: `tok${path.replace("/", "-")}`, ...extra });
}

/** The requests that reached `path`, once one of them is `done`. */
async function until(path: string, done: (r: Received) => boolean): Promise<Received[]> {
  const at = () => receiver.requests.filter((r) => r.path === path);
  await receiver.waitFor(1, 10_000, () => (at().some(done) ? 1 : 0));
  return at();
}
const v03State = (state: string) => (r: Received) => (r.json as Json).status?.state === state;

describe("R-V03-71: webhooks of a config made by a v0.3 call", () => {
  test("R-V03-70, R-V03-71: CreateTaskPushNotificationConfig over v0.3 → each event POSTs the v0.3 Task JSON; a 1.0 config on the same task keeps the StreamResponse (A-9)", async () => {
    const taskId = taskIdOf(await send("go", { returnImmediately: true }));
    await handlers().CreateTaskPushNotificationConfig(
      pushConfig(taskId, "/v03", { authentication: { scheme: "Bearer", credentials: "s3cret" } }),
      v03("CreateTaskPushNotificationConfig"),
    );
    await handlers().CreateTaskPushNotificationConfig(pushConfig(taskId, "/v10"), call("CreateTaskPushNotificationConfig"));
    openGate();

    const got = await until("/v03", v03State("completed"));
    for (const r of got) {
      expect(r.headers["content-type"]).toBe("application/json");
      expect(r.headers["x-a2a-notification-token"]).toBe("tok-v03");
      expect(r.headers.authorization).toBe("Bearer s3cret");
      // The Standard Webhooks headers as for 1.0.
      expect(r.headers["webhook-id"]).toEqual(expect.any(String));
      expect(r.headers["webhook-timestamp"]).toMatch(/^\d+$/);
      expect(r.headers["webhook-signature"]).toMatch(/^v1a,/);
      expect(r.json).toMatchObject({ kind: "task", id: taskId, contextId: expect.any(String), status: { state: expect.any(String) } });
      expect(r.json).not.toHaveProperty("statusUpdate");
    }
    // Each webhook tells its own event's state, in order, kebab-case (v0.3 schema).
    // The artifact's webhook says the state the task was in at its event, though it is read later.
    expect(got.map((r) => (r.json as Json).status.state)).toEqual(["working", "working", "completed"]);
    const last = got[got.length - 1]!.json as Json;
    expect(last.artifacts).toEqual([{ artifactId: "a1", name: "answer", parts: [{ kind: "text", text: "forty-two" }] }]);
    expect(last.status.message).toMatchObject({ kind: "message", role: "agent", parts: [{ kind: "text", text: "done" }] });
    expect(last.history[0]).toMatchObject({ kind: "message", role: "user", parts: [{ kind: "text", text: "go" }] });

    const plain = await until("/v10", (r) => (r.json as Json).statusUpdate?.status?.state === "TASK_STATE_COMPLETED");
    expect(plain.map((r) => r.headers["content-type"])).toEqual(plain.map(() => "application/a2a+json"));
    expect(plain.map((r) => Object.keys(r.json)[0])).toEqual(["statusUpdate", "artifactUpdate", "statusUpdate"]);
  });

  test("R-V03-70: SendMessage's inline config over v0.3 gets the task snapshot first, as v0.3 JSON", async () => {
    const response = await send("now", { taskPushNotificationConfig: pushConfig("", "/inline") }, v03("SendMessage"));
    const taskId = taskIdOf(response);
    const got = await until("/inline", v03State("completed"));
    expect(got.every((r) => r.headers["content-type"] === "application/json" && (r.json as Json).kind === "task" && (r.json as Json).id === taskId)).toBe(true);
    expect(got.map((r) => (r.json as Json).status.state)).toContain("completed");
    // The first is the snapshot of the task as the call made it, with the message in its history.
    expect((got[0]!.json as Json).history[0]).toMatchObject({ kind: "message", role: "user", parts: [{ kind: "text", text: "now" }] });
  });

  test("R-V03-70: the generation survives a restart on SQLite: a follow-up after it still POSTs v0.3 JSON", async () => {
    const taskId = taskIdOf(await send("ask", {}));
    await handlers().CreateTaskPushNotificationConfig(pushConfig(taskId, "/restart"), v03("CreateTaskPushNotificationConfig"));
    await s.close();
    s = await start();
    await send("Lisbon", {}, call("SendMessage"), taskId);
    const got = await until("/restart", v03State("completed"));
    expect(got.map((r) => [r.headers["content-type"], (r.json as Json).kind])).toEqual(got.map(() => ["application/json", "task"]));
    expect((got[got.length - 1]!.json as Json).history.map((m: Json) => m.parts[0].text).slice(0, 3)).toEqual(["ask", "where to?", "Lisbon"]);
  });
});

describe("the v0.3 Task JSON of a webhook", () => {
  test("R-V03-20, R-V03-21, R-V03-36, R-V03-38: kinds, kebab-case states, file parts by bytes or uri, non-object data wrapped and flagged", async () => {
    const task = create(TaskSchema, {
      id: "t1",
      contextId: "c1",
      status: { state: TaskState.INPUT_REQUIRED },
      artifacts: [
        {
          artifactId: "a",
          parts: [
            { content: { case: "raw", value: new Uint8Array([104, 105]) }, mediaType: "text/plain", filename: "hi.txt" },
            { content: { case: "url", value: "https://files.example/x.png" }, mediaType: "image/png" },
            {
              content: {
                case: "data",
                value: create(ValueSchema, { kind: { case: "structValue", value: { fields: { n: { kind: { case: "numberValue", value: 1 } } } } } }),
              },
            },
            { content: { case: "data", value: create(ValueSchema, { kind: { case: "numberValue", value: 7 } }) } },
          ],
        },
      ],
    });
    // A snapshot entry is encoded as it is: the store is never read.
    const unread = { get: () => Promise.reject(new Error("a snapshot entry reads no task")) } as unknown as TaskRepository;
    const event = toBinary(StreamResponseSchema, create(StreamResponseSchema, { payload: { case: "task", value: task } }));
    const entry = { seq: 1, scope: { tenant: "", principal: "" }, taskId: "t1", configId: "p1", createdMs: 0, event };
    expect(JSON.parse(await v03WebhookBody(unread).encode(entry))).toEqual({
      kind: "task",
      id: "t1",
      contextId: "c1",
      status: { state: "input-required" },
      artifacts: [
        {
          artifactId: "a",
          parts: [
            { kind: "file", file: { bytes: "aGk=", mimeType: "text/plain", name: "hi.txt" } },
            { kind: "file", file: { uri: "https://files.example/x.png", mimeType: "image/png" } },
            { kind: "data", data: { n: 1 } },
            { kind: "data", data: { value: 7 }, metadata: { data_part_compat: true } },
          ],
        },
      ],
    });
  });
});
