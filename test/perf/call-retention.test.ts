import { create, toBinary } from "@bufbuild/protobuf";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { A2AService, MessageSchema, Role, SendMessageRequestSchema, StreamResponseSchema, TaskSchema, TaskState } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { GetTaskRequest, SubscribeToTaskRequest, type StreamResponse } from "../../gen/ts-proto/lf/a2a/v1/a2a.js";
import type { EventEmitter } from "node:events";
import { createServiceDefinition, type CallContext } from "../../src/protocol/grpc-adapter.js";
import { remoteOf, streamBehind, type RemoteAddress } from "../../src/protocol/call-retention.js";
import { startTestServer, unary, until, type TestServer } from "../foundation/helpers.js";

/*
 * grpc-js's call objects outlive their call: V8 keeps them until its next full collection, and
 * promotes whatever they reach to the old generation. So a finished call must leave nothing of
 * ours reachable from them: not its CallContext (with the log line and record), not the decoded
 * request. (Each KB a call leaves there cost ~2.7 µs of server CPU per call in the benchmark.)
 * And the HTTP/2 stream behind a call, which Node keeps alive the same way, loses its listeners
 * once it has closed, so that it no longer reaches grpc-js's call objects (src/protocol/call-retention.ts).
 */

/** The HTTP/2 stream behind a handler's call, found as call-retention.ts finds it. */
function streamOf(call: CallContext): EventEmitter & { closed: boolean } {
  const stream = streamBehind((call as unknown as { call: object }).call);
  if (stream === undefined) throw new Error("grpc-js's call objects no longer lead to the stream: update src/protocol/call-retention.ts");
  return stream as EventEmitter & { closed: boolean };
}

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

let t: TestServer | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe("what grpc-js read of the connection (tracing's network.peer.* attributes)", () => {
  it("OBS-TRACE: remoteOf finds grpc-js's connection info behind a handler's call: the same address and port getPeer() reads from the socket", async () => {
    let remote: RemoteAddress | undefined;
    let peer = "";
    t = await startTestServer({
      handlers: {
        async GetTask(request, call) {
          const grpcCall = (call as unknown as { call: object & { getPeer(): string } }).call;
          remote = remoteOf(grpcCall);
          peer = grpcCall.getPeer();
          return create(TaskSchema, { id: request.id, contextId: "ctx-1", status: { state: TaskState.WORKING } });
        },
      },
    });
    const { error } = await unary(t.a2a, t.a2a.getTask, GetTaskRequest.fromPartial({ id: "r1" }));
    expect(error).toBeUndefined();
    if (remote === undefined) throw new Error("grpc-js's call objects no longer lead to getConnectionInfo: update src/protocol/call-retention.ts");
    expect(remote.remoteAddress).toBe("127.0.0.1");
    expect(`${remote.remoteAddress}:${remote.remotePort}`).toBe(peer);
    expect(remoteOf({})).toBeUndefined();
  });
});

describe("what a finished call leaves on grpc-js's call object", () => {
  it("its CallContext can be collected while grpc-js's call object is still alive", async () => {
    let context: WeakRef<CallContext> | undefined;
    let grpcCall: object | undefined; // held here as V8 holds it after the call: strongly
    let ended = false;
    t = await startTestServer({
      handlers: {
        async GetTask(request, call) {
          context = new WeakRef(call);
          grpcCall = (call as unknown as { call: object }).call;
          call.onEnd!(() => (ended = true));
          return create(TaskSchema, { id: request.id, contextId: "ctx-1", status: { state: TaskState.WORKING } });
        },
      },
    });
    const { error } = await unary(t.a2a, t.a2a.getTask, GetTaskRequest.fromPartial({ id: "r1" }));
    expect(error).toBeUndefined();
    await until(() => ended, "the end of the call");
    await new Promise((resolve) => setImmediate(resolve)); // let the handler's promise chain unwind
    gc();
    expect(grpcCall).toBeDefined();
    expect(context!.deref()).toBeUndefined();
  });

  it("a unary call's HTTP/2 stream keeps no listener but a no-op once it has closed", async () => {
    let stream: (EventEmitter & { closed: boolean }) | undefined;
    t = await startTestServer({
      handlers: {
        async GetTask(request, call) {
          stream = streamOf(call);
          expect(stream.listenerCount("data")).toBeGreaterThan(0); // grpc-js's, while the call runs
          return create(TaskSchema, { id: request.id, contextId: "ctx-1", status: { state: TaskState.WORKING } });
        },
      },
    });
    const { error } = await unary(t.a2a, t.a2a.getTask, GetTaskRequest.fromPartial({ id: "r2" }));
    expect(error).toBeUndefined();
    await until(() => stream!.closed && stream!.listenerCount("close") === 0, "the stream's close");
    expect(stream!.eventNames()).toEqual(["error"]);
    expect(stream!.listenerCount("error")).toBe(1);
  });

  it("so does a server-streaming call's, after the server ended it", async () => {
    let stream: (EventEmitter & { closed: boolean }) | undefined;
    t = await startTestServer({
      handlers: {
        async SubscribeToTask(request, call, out) {
          stream = streamOf(call);
          out.write(
            create(StreamResponseSchema, {
              payload: { case: "task", value: create(TaskSchema, { id: request.id, contextId: "ctx-1", status: { state: TaskState.WORKING } }) },
            }),
          );
        },
      },
    });
    const received: StreamResponse[] = [];
    const call = t.a2a.subscribeToTask(SubscribeToTaskRequest.fromPartial({ id: "s1" }));
    call.on("data", (response: StreamResponse) => received.push(response));
    await new Promise<void>((resolve, reject) => {
      call.on("end", resolve);
      call.on("error", reject);
    });
    expect(received).toHaveLength(1);
    await until(() => stream!.closed && stream!.listenerCount("close") === 0, "the stream's close");
    expect(stream!.eventNames()).toEqual(["error"]);
  });

  it("a streaming call's CallContext (and its writer) can be collected while grpc-js's call object is still alive", async () => {
    let context: WeakRef<CallContext> | undefined;
    let grpcCall: EventEmitter | undefined; // held here as V8 holds it after the call: strongly
    let ended = false;
    t = await startTestServer({
      handlers: {
        async SubscribeToTask(request, call, out) {
          context = new WeakRef(call);
          grpcCall = (call as unknown as { call: EventEmitter }).call;
          call.onEnd(() => (ended = true));
          out.write(
            create(StreamResponseSchema, {
              payload: { case: "task", value: create(TaskSchema, { id: request.id, contextId: "ctx-1", status: { state: TaskState.WORKING } }) },
            }),
          );
        },
      },
    });
    const call = t.a2a.subscribeToTask(SubscribeToTaskRequest.fromPartial({ id: "s2" }));
    call.on("data", () => undefined);
    await new Promise<void>((resolve, reject) => {
      call.on("end", resolve);
      call.on("error", reject);
    });
    await until(() => ended, "the end of the call");
    await new Promise((resolve) => setImmediate(resolve)); // let the handler's promise chain unwind
    gc();
    expect(grpcCall!.listenerCount("drain")).toBeGreaterThan(0); // the shared listener is still there, and finds nothing
    expect(context!.deref()).toBeUndefined();
  });

  it("grpc-js keeps the request's bytes, not the decoded request: the deserializer returns its input", () => {
    const definition = createServiceDefinition(A2AService);
    const bytes = Buffer.from(
      toBinary(
        SendMessageRequestSchema,
        create(SendMessageRequestSchema, {
          message: create(MessageSchema, { messageId: "m-1", role: Role.USER, parts: [{ content: { case: "text", value: "hi" } }] }),
        }),
      ),
    );
    for (const method of Object.values(definition)) expect(method.requestDeserialize(bytes)).toBe(bytes);
  });
});
