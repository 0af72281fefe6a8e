import * as grpc from "@grpc/grpc-js";
import { create } from "@bufbuild/protobuf";
import { StreamResponseSchema, TaskSchema, TaskState } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { HealthCheckRequest, HealthCheckResponse_ServingStatus, type HealthCheckResponse } from "../../gen/ts-proto/grpc/health/v1/health.js";
import { GetTaskRequest, SubscribeToTaskRequest } from "../../gen/ts-proto/lf/a2a/v1/a2a.js";
import type { CallContext, StreamWriter } from "../../src/protocol/grpc-adapter.js";
import { startTestServer, unary, until, type TestServer } from "./helpers.js";

const task = (id: string) => create(TaskSchema, { id, contextId: "c", status: { state: TaskState.WORKING } });
let t: TestServer | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe("graceful shutdown", () => {
  test("FND-SHUTDOWN: health flips to NOT_SERVING, open streams end UNAVAILABLE, in-flight unary calls finish OK, then hooks run", async () => {
    let releaseUnary!: () => void;
    const unaryRelease = new Promise<void>((r) => (releaseUnary = r));
    let unaryStarted = false;
    let stream: { call: CallContext; out: StreamWriter<unknown> } | undefined;
    t = await startTestServer({
      handlers: {
        async GetTask(request) {
          unaryStarted = true;
          await unaryRelease;
          return task(request.id);
        },
        SubscribeToTask(request, call, out) {
          stream = { call, out };
          out.write(create(StreamResponseSchema, { payload: { case: "task", value: task(request.id) } }));
          return new Promise(() => undefined); // an open stream that never ends by itself
        },
      },
    });
    const { a2a, health, server } = t;
    const order: string[] = [];
    server.onShutdown(() => order.push("close store"));
    server.onShutdown(async () => order.push("stop agents"));

    // A health Watch, an open task stream, and a slow unary call, all in flight.
    const watch = health.watch(HealthCheckRequest.fromPartial({ service: "" }));
    const watched: HealthCheckResponse_ServingStatus[] = [];
    watch.on("data", (m: HealthCheckResponse) => watched.push(m.status));
    const watchStatus = new Promise<grpc.StatusObject>((resolve) => watch.on("status", resolve));
    watch.on("error", () => undefined);
    const sub = a2a.subscribeToTask(SubscribeToTaskRequest.fromPartial({ id: "s" }));
    sub.on("data", () => undefined);
    const subError = new Promise<grpc.ServiceError>((resolve) => sub.on("error", resolve));
    const slow = unary(a2a, a2a.getTask, GetTaskRequest.fromPartial({ id: "slow" }));
    await until(() => unaryStarted && stream !== undefined && watched.length === 1, "calls in flight");
    expect(watched).toEqual([HealthCheckResponse_ServingStatus.SERVING]);

    const stopped = server.shutdown(10_000);
    const error = await subError;
    expect(error.code).toBe(grpc.status.UNAVAILABLE);
    expect(error.details).toBe("server is shutting down");
    expect(stream!.out.closed).toBe(true);
    expect(stream!.call.signal.aborted).toBe(true);
    expect(watched).toEqual([HealthCheckResponse_ServingStatus.SERVING, HealthCheckResponse_ServingStatus.NOT_SERVING]);
    expect((await watchStatus).code).toBe(grpc.status.UNAVAILABLE);

    expect(order).toEqual([]); // hooks wait until the last call is done
    releaseUnary();
    const { response, error: unaryError } = await slow;
    expect(unaryError).toBeUndefined();
    expect(response?.id).toBe("slow");
    await stopped;
    expect(order).toEqual(["stop agents", "close store"]);

    // Stopped: nothing answers any more.
    const after = await unary(health, health.check, HealthCheckRequest.fromPartial({}), new grpc.Metadata(), { deadline: Date.now() + 2000 });
    expect(after.error?.code).toBe(grpc.status.UNAVAILABLE);
  });

  test("FND-GRACE: calls still running after the grace period are closed and shutdown completes", async () => {
    let signal: AbortSignal | undefined;
    t = await startTestServer({
      handlers: {
        GetTask(_r, call) {
          signal = call.signal;
          return new Promise(() => undefined); // never answers
        },
      },
    });
    const stuck = unary(t.a2a, t.a2a.getTask, GetTaskRequest.fromPartial({ id: "stuck" }));
    await until(() => signal !== undefined, "the call to start");
    const started = Date.now();
    await t.server.shutdown(300);
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(280);
    expect(took).toBeLessThan(3000);
    const { error } = await stuck;
    expect(error).toBeDefined();
    await until(() => signal!.aborted, "the handler's signal");
    expect(t.lines.some((l) => l["msg"] === "calls still running after the shutdown grace period; closing them")).toBe(true);
  });

  test("FND-SHUTDOWN-ONCE: shutdown is idempotent and a failing hook does not stop the others", async () => {
    t = await startTestServer({ handlers: {} });
    const ran: string[] = [];
    t.server.onShutdown(() => ran.push("first registered"));
    t.server.onShutdown(() => {
      throw new Error("hook failed");
    });
    const a = t.server.shutdown(1000);
    const b = t.server.shutdown(1000);
    expect(a).toBe(b);
    await a;
    expect(ran).toEqual(["first registered"]);
    expect(t.lines.some((l) => l["msg"] === "shutdown step failed")).toBe(true);
  });
});
