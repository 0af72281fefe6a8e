import * as grpc from "@grpc/grpc-js";
import { create } from "@bufbuild/protobuf";
import { AsyncLocalStorage } from "node:async_hooks";
import { StreamResponseSchema, TaskSchema, TaskState } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { HealthCheckRequest } from "../../gen/ts-proto/grpc/health/v1/health.js";
import { GetTaskRequest, ListTasksRequest, SubscribeToTaskRequest } from "../../gen/ts-proto/lf/a2a/v1/a2a.js";
import type { CallEnded, CallObserver, CallStart } from "../../src/service/call-observer.js";
import type { A2AServiceHandlers } from "../../src/protocol/grpc-adapter.js";
import { rpcLine, startTestServer, unary, until, type TestServer } from "../foundation/helpers.js";

/*
 * The one call seam (src/protocol/call-observer.ts): every call, unary or streaming, A2A or
 * health, is reported to the same observers at its start and its end, with one "call ended"
 * record; the RPC log line is one of those observers.
 */

const A2A = "lf.a2a.v1.A2AService";
let t: TestServer | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const task = (id: string) => create(TaskSchema, { id, contextId: "ctx-1", status: { state: TaskState.WORKING } });

/** An observer that keeps what it was told, as a metrics or tracing observer would see it. */
function recorder() {
  const events: Array<{ hook: "started" | "around" | "ended"; method: string; state?: unknown }> = [];
  const ended: CallEnded[] = [];
  const starts: Array<{ method: string; traceparent: unknown; streaming: boolean }> = [];
  const observer: CallObserver<{ startedFor: string }> = {
    started(call: CallStart) {
      events.push({ hook: "started", method: call.method });
      starts.push({ method: call.method, traceparent: call.metadata.get("traceparent")[0], streaming: call.streaming });
      return { startedFor: call.method };
    },
    around(call, state, run) {
      events.push({ hook: "around", method: call.method, state });
      return run();
    },
    ended(call, state) {
      events.push({ hook: "ended", method: call.method, state });
      ended.push({ ...call, peer: call.peer }); // a copy, as a metrics observer would take its labels
    },
  };
  return { observer, events, ended, starts };
}

const handlers: Partial<A2AServiceHandlers> = {
  async GetTask(request, call) {
    call.setPrincipal("alice");
    call.setTaskId(request.id);
    return task(request.id);
  },
  async SubscribeToTask(request, call, out) {
    call.setPrincipal("alice");
    call.setTaskId(request.id);
    out.write(create(StreamResponseSchema, { payload: { case: "task", value: task(request.id) } }));
  },
};

function streamStatus(stream: grpc.ClientReadableStream<unknown>): Promise<grpc.StatusObject> {
  stream.on("data", () => undefined);
  stream.on("error", () => undefined);
  return new Promise((resolve) => stream.on("status", resolve));
}

describe("the call seam: one record and one log line per call", () => {
  test("FND-LOG: a unary and a streaming call each get exactly one log line, with the same fields (task_id, principal, status, duration, peer)", async () => {
    t = await startTestServer({ handlers });
    await unary(t.a2a, t.a2a.getTask, GetTaskRequest.fromPartial({ id: "u-1" }));
    const status = await streamStatus(t.a2a.subscribeToTask(SubscribeToTaskRequest.fromPartial({ id: "s-1" })));
    expect(status.code).toBe(grpc.status.OK);
    await until(() => rpcLine(t!.lines, "SubscribeToTask") !== undefined, "the stream's log line");
    const rpcLines = t.lines.filter((l) => l["msg"] === "rpc");
    expect(rpcLines.map((l) => l["method"]).sort()).toEqual(["GetTask", "SubscribeToTask"]);
    const unaryLine = rpcLine(t.lines, "GetTask")!;
    const streamLine = rpcLine(t.lines, "SubscribeToTask")!;
    expect(Object.keys(streamLine).sort()).toEqual(Object.keys(unaryLine).sort());
    const common = {
      level: 30,
      service: A2A,
      grpc_code: 0,
      grpc_status: "OK",
      principal: "alice",
      peer: expect.stringMatching(/^127\.0\.0\.1:\d+$/),
      duration_ms: expect.any(Number),
    };
    expect(unaryLine).toMatchObject({ ...common, method: "GetTask", task_id: "u-1" });
    expect(streamLine).toMatchObject({ ...common, method: "SubscribeToTask", task_id: "s-1" });
  });

  test("FND-LOG: a streaming call the handler fails logs its status once, as a unary call does", async () => {
    t = await startTestServer({
      handlers: {
        async SubscribeToTask() {
          throw new Error("stream store broke");
        },
      },
    });
    const status = await streamStatus(t.a2a.subscribeToTask(SubscribeToTaskRequest.fromPartial({ id: "f" })));
    expect(status.code).toBe(grpc.status.INTERNAL);
    await until(() => rpcLine(t!.lines, "SubscribeToTask") !== undefined, "the log line");
    expect(rpcLine(t.lines, "SubscribeToTask")).toMatchObject({
      level: 50,
      grpc_status: "INTERNAL",
      details: "internal error",
      err: { message: "stream store broke" },
    });
    expect(t.lines.filter((l) => l["msg"] === "rpc")).toHaveLength(1);
  });

  test("an observer is told of the start (with the metadata), runs the handler, and gets one ended record with its own state, for unary and streaming calls", async () => {
    const { observer, events, ended, starts } = recorder();
    t = await startTestServer({ handlers, observers: [observer] });
    const md = new grpc.Metadata();
    md.set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    await unary(t.a2a, t.a2a.getTask, GetTaskRequest.fromPartial({ id: "u-2" }), md);
    await streamStatus(t.a2a.subscribeToTask(SubscribeToTaskRequest.fromPartial({ id: "s-2" }), md));
    await until(() => ended.length === 2, "both ends");
    expect(events.map((e) => `${e.hook}:${e.method}`)).toEqual([
      "started:GetTask",
      "around:GetTask",
      "ended:GetTask",
      "started:SubscribeToTask",
      "around:SubscribeToTask",
      "ended:SubscribeToTask",
    ]);
    expect(events.filter((e) => e.hook !== "started").map((e) => e.state)).toEqual([
      { startedFor: "GetTask" },
      { startedFor: "GetTask" },
      { startedFor: "SubscribeToTask" },
      { startedFor: "SubscribeToTask" },
    ]);
    expect(starts).toEqual([
      { method: "GetTask", traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", streaming: false },
      { method: "SubscribeToTask", traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", streaming: true },
    ]);
    for (const [record, id] of [
      [ended[0]!, "u-2"],
      [ended[1]!, "s-2"],
    ] as const) {
      expect(record).toMatchObject({ service: A2A, code: grpc.status.OK, details: undefined, principal: "alice", taskId: id, error: undefined });
      expect(record.durationMs).toBeGreaterThanOrEqual(0);
      expect(record.peer).toMatch(/^127\.0\.0\.1:\d+$/);
    }
  });

  test("around runs the handler, and what it starts, inside the observer's async context (as a tracing span needs)", async () => {
    const storage = new AsyncLocalStorage<string>();
    const seen: Array<string | undefined> = [];
    const tracing: CallObserver<string> = {
      started: (call) => `span-for-${call.method}`,
      around: (_call, span, run) => storage.run(span, run),
    };
    t = await startTestServer({
      observers: [tracing],
      handlers: {
        async GetTask(request) {
          seen.push(storage.getStore());
          await new Promise((resolve) => setTimeout(resolve, 1)); // work the handler started: still inside
          seen.push(storage.getStore());
          return task(request.id);
        },
      },
    });
    const { response } = await unary(t.a2a, t.a2a.getTask, GetTaskRequest.fromPartial({ id: "ctx" }));
    expect(response?.id).toBe("ctx");
    expect(seen).toEqual(["span-for-GetTask", "span-for-GetTask"]);
    expect(storage.getStore()).toBeUndefined();
  });

  test("calls refused before their handler (unimplemented) and calls the client cancels are reported once, with their status", async () => {
    const { observer, events, ended } = recorder();
    t = await startTestServer({
      observers: [observer],
      handlers: { SubscribeToTask: (_r, call) => new Promise((resolve) => call.signal.addEventListener("abort", () => resolve())) },
    });
    const { error } = await unary(t.a2a, t.a2a.listTasks, ListTasksRequest.fromPartial({}));
    expect(error?.code).toBe(grpc.status.UNIMPLEMENTED);
    const stream = t.a2a.subscribeToTask(SubscribeToTaskRequest.fromPartial({ id: "c" }));
    stream.on("error", () => undefined);
    await until(() => events.some((e) => e.hook === "around" && e.method === "SubscribeToTask"), "the stream's handler");
    stream.cancel();
    await until(() => ended.length === 2, "both ends");
    await new Promise((resolve) => setTimeout(resolve, 20)); // a second report would come within this
    expect(ended.map((r) => [r.method, grpc.status[r.code]])).toEqual([
      ["ListTasks", "UNIMPLEMENTED"],
      ["SubscribeToTask", "CANCELLED"],
    ]);
    expect(events.filter((e) => e.method === "ListTasks").map((e) => e.hook)).toEqual(["started", "ended"]); // no handler: no around
    expect(t.lines.filter((l) => l["msg"] === "rpc")).toHaveLength(2);
  });

  test("a handler reads the connection's transport security from its call (plaintext here: none), where authentication will", async () => {
    let security: unknown;
    t = await startTestServer({
      handlers: {
        async GetTask(request, call) {
          security = call.getAuthContext();
          return task(request.id);
        },
      },
    });
    await unary(t.a2a, t.a2a.getTask, GetTaskRequest.fromPartial({ id: "p" }));
    expect(security).toEqual({});
  });

  test("health calls (served through grpc-js's interceptor) reach the same observers", async () => {
    const { observer, ended } = recorder();
    t = await startTestServer({ handlers, observers: [observer] });
    await unary(t.health, t.health.check, HealthCheckRequest.fromPartial({ service: "" }));
    await until(() => ended.length === 1, "the end");
    expect(ended[0]).toMatchObject({ service: "grpc.health.v1.Health", method: "Check", code: grpc.status.OK, streaming: false });
    expect(rpcLine(t.lines, "Check")).toMatchObject({ level: 20, service: "grpc.health.v1.Health", grpc_status: "OK" });
  });

  test("an observer that throws is logged and changes nothing for the call, the log line or the other observers", async () => {
    const { observer, ended } = recorder();
    const broken: CallObserver = {
      started() {
        throw new Error("observer bug at start");
      },
      ended() {
        throw new Error("observer bug at end");
      },
    };
    t = await startTestServer({ handlers, observers: [broken, observer] });
    const { response } = await unary(t.a2a, t.a2a.getTask, GetTaskRequest.fromPartial({ id: "b" }));
    expect(response?.id).toBe("b");
    await until(() => ended.length === 1, "the good observer's end");
    expect(rpcLine(t.lines, "GetTask")).toMatchObject({ grpc_status: "OK", task_id: "b" });
    const failures = t.lines.filter((l) => l["msg"] === "a call observer failed");
    expect(failures.map((l) => [l["hook"], (l["err"] as { message: string }).message])).toEqual([
      ["started", "observer bug at start"],
      ["ended", "observer bug at end"],
    ]);
  });
});
