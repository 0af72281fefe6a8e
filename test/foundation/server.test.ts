import * as grpc from "@grpc/grpc-js";
import { create } from "@bufbuild/protobuf";
import { TaskSchema, TaskState, StreamResponseSchema } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { HealthCheckRequest, HealthCheckResponse_ServingStatus, HealthListRequest } from "../../gen/ts-proto/grpc/health/v1/health.js";
import {
  GetTaskRequest,
  ListTasksRequest,
  SendMessageRequest,
  SubscribeToTaskRequest,
  CancelTaskRequest,
  type StreamResponse,
} from "../../gen/ts-proto/lf/a2a/v1/a2a.js";
import type { A2AServiceHandlers, CallContext, StreamWriter } from "../../src/protocol/grpc-adapter.js";
import { rpcLine, startTestServer, unary, until, type TestServer } from "./helpers.js";

const A2A = "lf.a2a.v1.A2AService";
let t: TestServer | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const task = (id: string) => create(TaskSchema, { id, contextId: "ctx-1", status: { state: TaskState.WORKING } });

describe("A2A service adapter", () => {
  test("FND-UNIMPL: every A2A RPC a server does not provide answers UNIMPLEMENTED", async () => {
    t = await startTestServer({ handlers: {} });
    const { a2a } = t;
    const results = await Promise.all([
      unary(a2a, a2a.getTask, GetTaskRequest.fromPartial({ id: "x" })),
      unary(a2a, a2a.listTasks, ListTasksRequest.fromPartial({})),
      unary(a2a, a2a.cancelTask, CancelTaskRequest.fromPartial({ id: "x" })),
      unary(a2a, a2a.sendMessage, SendMessageRequest.fromPartial({})),
    ]);
    for (const r of results) expect(r.error?.code).toBe(grpc.status.UNIMPLEMENTED);
    const stream = a2a.subscribeToTask(SubscribeToTaskRequest.fromPartial({ id: "x" }));
    const error = await new Promise<grpc.ServiceError>((resolve) => stream.on("error", resolve));
    expect(error.code).toBe(grpc.status.UNIMPLEMENTED);
    expect(error.details).toBe(`method ${A2A}/SubscribeToTask is not implemented`);
  });

  test("FND-CODEC: a handler's protoc-gen-es message reaches an independent (ts-proto) client, with headers and one log line carrying task_id", async () => {
    const handlers: Partial<A2AServiceHandlers> = {
      async GetTask(request, call) {
        call.setLogField("task_id", request.id);
        call.setResponseHeader("a2a-extensions", "https://example.com/ext/v1");
        return task(request.id);
      },
    };
    t = await startTestServer({ handlers });
    const md = new grpc.Metadata();
    md.set("a2a-version", "1.0");
    const { response, headers } = await unary(t.a2a, t.a2a.getTask, GetTaskRequest.fromPartial({ id: "task-7" }), md);
    expect(response?.id).toBe("task-7");
    expect(response?.contextId).toBe("ctx-1");
    expect(headers.get("a2a-extensions")).toEqual(["https://example.com/ext/v1"]);
    await until(() => rpcLine(t!.lines, "GetTask") !== undefined, "the log line");
    expect(rpcLine(t.lines, "GetTask")).toMatchObject({
      level: 30,
      service: A2A,
      method: "GetTask",
      grpc_code: 0,
      grpc_status: "OK",
      task_id: "task-7",
      peer: expect.stringMatching(/^127\.0\.0\.1:\d+$/),
      duration_ms: expect.any(Number),
    });
    expect(t.lines.filter((l) => l["msg"] === "rpc")).toHaveLength(1);
  });

  test("R-SEC-6: credentials in request metadata never reach the log", async () => {
    t = await startTestServer({ handlers: { GetTask: async (r) => task(r.id) } });
    const md = new grpc.Metadata();
    md.set("authorization", "Bearer s3cret-token");
    md.set("cookie", "session=s3cret-cookie");
    md.set("x-trace-bin", Buffer.from("s3cret-bin"));
    await unary(t.a2a, t.a2a.getTask, GetTaskRequest.fromPartial({ id: "a" }), md);
    await until(() => rpcLine(t!.lines, "GetTask") !== undefined, "the log line");
    const text = JSON.stringify(t.lines);
    expect(text).not.toContain("s3cret");
    expect(rpcLine(t.lines, "GetTask")?.["metadata"]).toMatchObject({ authorization: "[redacted]", cookie: "[redacted]", "x-trace-bin": "[redacted]" });
  });

  test('R-ERR-5: an unexpected handler error is INTERNAL "internal error"; its message stays in the server log', async () => {
    t = await startTestServer({
      handlers: {
        async GetTask() {
          throw new Error("db password is hunter2");
        },
      },
    });
    const { error } = await unary(t.a2a, t.a2a.getTask, GetTaskRequest.fromPartial({ id: "a" }));
    expect(error?.code).toBe(grpc.status.INTERNAL);
    expect(error?.details).toBe("internal error");
    expect(JSON.stringify(error?.metadata.getMap())).not.toContain("hunter2");
    await until(() => rpcLine(t!.lines, "GetTask") !== undefined, "the log line");
    expect(rpcLine(t.lines, "GetTask")).toMatchObject({ level: 50, grpc_status: "INTERNAL", err: { message: "db password is hunter2" } });
  });

  test("FND-TOSTATUS: the toStatus mapping decides the status of a thrown error, with its trailers", async () => {
    t = await startTestServer({
      handlers: {
        async GetTask(r) {
          throw new Error(`missing ${r.id}`);
        },
      },
      toStatus: (e, call) => {
        const metadata = new grpc.Metadata();
        metadata.set("x-method", call.method);
        return { code: grpc.status.NOT_FOUND, details: (e as Error).message, metadata };
      },
    });
    const { error } = await unary(t.a2a, t.a2a.getTask, GetTaskRequest.fromPartial({ id: "t1" }));
    expect(error?.code).toBe(grpc.status.NOT_FOUND);
    expect(error?.details).toBe("missing t1");
    expect(error?.metadata.get("x-method")).toEqual(["GetTask"]);
  });

  test("FND-DECODE: a request that does not decode is INVALID_ARGUMENT and the server keeps serving", async () => {
    let called = false;
    t = await startTestServer({
      handlers: {
        async GetTask(r) {
          called = true;
          return task(r.id);
        },
      },
    });
    const raw = new grpc.Client(`127.0.0.1:${t.server.port}`, grpc.credentials.createInsecure());
    const error = await new Promise<grpc.ServiceError | null>((resolve) =>
      raw.makeUnaryRequest(
        `/${A2A}/GetTask`,
        (b: Buffer) => b,
        (b: Buffer) => b,
        Buffer.from([0x0a, 0xff, 0xff]),
        (e) => resolve(e),
      ),
    );
    raw.close();
    expect(error?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(error?.details).toBe("request is not a valid lf.a2a.v1.GetTaskRequest message");
    expect(called).toBe(false);
    const { response } = await unary(t.a2a, t.a2a.getTask, GetTaskRequest.fromPartial({ id: "ok" }));
    expect(response?.id).toBe("ok");
  });

  test("FND-LOG: a unary response over the send limit ends RESOURCE_EXHAUSTED, and the call's one log line says so", async () => {
    const big = create(TaskSchema, { id: "big", contextId: "ctx-1", status: { state: TaskState.COMPLETED }, metadata: { note: "x".repeat(4096) } });
    t = await startTestServer({
      maxMessageBytes: 2048,
      handlers: {
        async GetTask() {
          return big;
        },
      },
    });
    const { error } = await unary(t.a2a, t.a2a.getTask, GetTaskRequest.fromPartial({ id: "big" }));
    expect(error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    await until(() => rpcLine(t!.lines, "GetTask") !== undefined, "the log line");
    expect(rpcLine(t.lines, "GetTask")).toMatchObject({ grpc_code: grpc.status.RESOURCE_EXHAUSTED, grpc_status: "RESOURCE_EXHAUSTED" });
    expect(t.lines.filter((l) => l["msg"] === "rpc" && l["method"] === "GetTask")).toHaveLength(1);
  });

  test("FND-LOG: unary calls refused before their handler (undecodable, unimplemented) get their log line too", async () => {
    t = await startTestServer({ handlers: {} });
    const raw = new grpc.Client(`127.0.0.1:${t.server.port}`, grpc.credentials.createInsecure());
    await new Promise<void>((resolve) =>
      raw.makeUnaryRequest(
        `/${A2A}/GetTask`,
        (b: Buffer) => b,
        (b: Buffer) => b,
        Buffer.from([0x0a, 0xff, 0xff]),
        () => resolve(),
      ),
    );
    await new Promise<void>((resolve) =>
      raw.makeUnaryRequest(
        `/${A2A}/ListTasks`,
        (b: Buffer) => b,
        (b: Buffer) => b,
        Buffer.alloc(0),
        () => resolve(),
      ),
    );
    raw.close();
    await until(() => rpcLine(t!.lines, "ListTasks") !== undefined, "the log lines");
    expect(rpcLine(t.lines, "GetTask")).toMatchObject({
      grpc_code: grpc.status.INVALID_ARGUMENT,
      details: "request is not a valid lf.a2a.v1.GetTaskRequest message",
    });
    expect(rpcLine(t.lines, "ListTasks")).toMatchObject({ grpc_code: grpc.status.UNIMPLEMENTED });
  });

  test("FND-STREAM: a server stream sends headers first, every message in order, and ends OK when the handler resolves", async () => {
    t = await startTestServer({
      handlers: {
        async SubscribeToTask(request, call, out) {
          call.setResponseHeader("a2a-extensions", "urn:x");
          for (let i = 0; i < 3; i++) out.write(create(StreamResponseSchema, { payload: { case: "task", value: task(`${request.id}-${i}`) } }));
        },
      },
    });
    const stream = t.a2a.subscribeToTask(SubscribeToTaskRequest.fromPartial({ id: "s" }));
    const got: string[] = [];
    let headers: grpc.Metadata | undefined;
    stream.on("metadata", (md) => (headers = md));
    stream.on("data", (m: StreamResponse) => got.push(m.payload?.$case === "task" ? m.payload.value.id : "?"));
    const status = await new Promise<grpc.StatusObject>((resolve) => stream.on("status", resolve));
    expect(status.code).toBe(grpc.status.OK);
    expect(got).toEqual(["s-0", "s-1", "s-2"]);
    expect(headers?.get("a2a-extensions")).toEqual(["urn:x"]);
  });

  test("FND-CANCEL: a client cancel aborts the handler's signal and closes its writer", async () => {
    let seen: { call: CallContext; out: StreamWriter<unknown> } | undefined;
    t = await startTestServer({
      handlers: {
        SubscribeToTask: (_r, call, out) => {
          seen = { call, out };
          out.write(create(StreamResponseSchema, { payload: { case: "task", value: task("c") } }));
          return new Promise((resolve) => call.signal.addEventListener("abort", () => resolve()));
        },
      },
    });
    const stream = t.a2a.subscribeToTask(SubscribeToTaskRequest.fromPartial({ id: "c" }));
    stream.on("error", () => undefined);
    await new Promise((resolve) => stream.once("data", resolve));
    expect(seen?.out.closed).toBe(false);
    stream.cancel();
    await until(() => seen!.call.signal.aborted, "the abort");
    expect(seen!.out.closed).toBe(true);
    expect(seen!.out.write(create(StreamResponseSchema, {}))).toBe(false);
    await until(() => rpcLine(t!.lines, "SubscribeToTask") !== undefined, "the log line");
    expect(rpcLine(t.lines, "SubscribeToTask")).toMatchObject({ grpc_status: "CANCELLED" });
  });

  test("FND-DEADLINE: a passed deadline aborts the handler's signal and is logged as DEADLINE_EXCEEDED", async () => {
    let signal: AbortSignal | undefined;
    t = await startTestServer({
      handlers: {
        GetTask: (_r, call) => {
          signal = call.signal;
          return new Promise((_resolve, reject) => call.signal.addEventListener("abort", () => reject(new Error("aborted"))));
        },
      },
    });
    const { error } = await unary(t.a2a, t.a2a.getTask, GetTaskRequest.fromPartial({ id: "d" }), new grpc.Metadata(), { deadline: Date.now() + 150 });
    expect(error?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    await until(() => signal?.aborted === true, "the abort");
    await until(() => rpcLine(t!.lines, "GetTask") !== undefined, "the log line");
    expect(rpcLine(t.lines, "GetTask")).toMatchObject({ grpc_code: 4, grpc_status: "DEADLINE_EXCEEDED" });
  });

  test("FND-FLOW: write() reports back-pressure when the client stops reading, and waitForDrain resolves when it reads again", async () => {
    const big = "x".repeat(256 * 1024);
    let sawFalse = false;
    let drained = false;
    t = await startTestServer({
      handlers: {
        async SubscribeToTask(_r, _call, out) {
          for (let i = 0; i < 200 && !sawFalse; i++) {
            sawFalse = !out.write(create(StreamResponseSchema, { payload: { case: "task", value: create(TaskSchema, { id: big }) } }));
          }
          await out.waitForDrain();
          drained = true;
        },
      },
    });
    const stream = t.a2a.subscribeToTask(SubscribeToTaskRequest.fromPartial({ id: "f" }));
    stream.pause();
    await until(() => sawFalse, "write() to return false");
    expect(drained).toBe(false);
    stream.resume();
    stream.on("data", () => undefined);
    const status = await new Promise<grpc.StatusObject>((resolve) => stream.on("status", resolve));
    expect(drained).toBe(true);
    expect(status.code).toBe(grpc.status.OK);
  });
});

describe("health", () => {
  const check = (h: TestServer["health"], service: string) => unary(h, h.check, HealthCheckRequest.fromPartial({ service }));

  test("FND-HEALTH: Check answers SERVING for the server and the A2A service, NOT_FOUND for others; List lists both", async () => {
    t = await startTestServer({ handlers: {} });
    expect((await check(t.health, "")).response?.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    expect((await check(t.health, A2A)).response?.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    expect((await check(t.health, "nope")).error?.code).toBe(grpc.status.NOT_FOUND);
    const { response } = await unary(t.health, t.health.list, HealthListRequest.fromPartial({}));
    expect(Object.keys(response?.statuses ?? {}).sort()).toEqual(["", A2A]);
    expect(response?.statuses[A2A]?.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
  });

  test("FND-HEALTH-START: NOT_SERVING until the A2A handlers are installed", async () => {
    t = await startTestServer();
    expect((await check(t.health, "")).response?.status).toBe(HealthCheckResponse_ServingStatus.NOT_SERVING);
    t.server.useHandlers({});
    expect((await check(t.health, A2A)).response?.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
  });
});
