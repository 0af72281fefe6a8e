import { create } from "@bufbuild/protobuf";
import { TaskSchema, TaskState } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { GetTaskRequest } from "../../gen/ts-proto/lf/a2a/v1/a2a.js";
import type { CallContext } from "../../src/protocol/grpc-adapter.js";
import { startTestServer, unary, until, type TestServer } from "../foundation/helpers.js";

/*
 * CallContext.onEnd reports the end of a call as the signal's abort event does, without an
 * AbortSignal (the blocking SendMessage wait uses it when the edge offers it).
 */

let t: TestServer | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const task = (id: string) => create(TaskSchema, { id, contextId: "ctx-1", status: { state: TaskState.WORKING } });

describe("CallContext.onEnd", () => {
  it("a client cancel calls the listeners once, with the same reason the signal gets; removed ones are not called", async () => {
    const reasons: unknown[] = [];
    let removedCalled = false;
    let seen: CallContext | undefined;
    t = await startTestServer({
      handlers: {
        GetTask: (_r, call) => {
          seen = call;
          call.onEnd!(() => {
            removedCalled = true;
          })();
          return new Promise((_resolve, reject) =>
            call.onEnd!((reason) => {
              reasons.push(reason);
              reject(reason);
            }),
          );
        },
      },
    });
    const pending = t.a2a.getTask(GetTaskRequest.fromPartial({ id: "x" }), () => undefined);
    await until(() => seen !== undefined, "the call");
    pending.cancel();
    await until(() => reasons.length > 0, "the end");
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toBeInstanceOf(Error);
    expect(seen!.signal.aborted).toBe(true);
    expect(seen!.signal.reason).toBe(reasons[0]);
    expect(removedCalled).toBe(false);
  });

  it("a call that ended normally calls its listeners; one added after the end is never called", async () => {
    let atEnd = 0;
    let seen: CallContext | undefined;
    t = await startTestServer({
      handlers: {
        async GetTask(request, call) {
          seen = call;
          call.onEnd!(() => atEnd++);
          return task(request.id);
        },
      },
    });
    const { response, error } = await unary(t.a2a, t.a2a.getTask, GetTaskRequest.fromPartial({ id: "y" }));
    expect(error).toBeUndefined();
    expect(response?.id).toBe("y");
    await until(() => atEnd === 1, "the end listener");
    let late = false;
    seen!.onEnd!(() => (late = true));
    expect(seen!.signal.aborted).toBe(true); // a signal first read after the end is already aborted
    await new Promise((resolve) => setImmediate(resolve));
    expect(late).toBe(false);
    expect(atEnd).toBe(1);
  });

  it("listeners that remove themselves or each other while the call ends are each still called once", async () => {
    const called: string[] = [];
    t = await startTestServer({
      handlers: {
        async GetTask(request, call) {
          let removeB: () => void = () => undefined;
          const removeA = call.onEnd!(() => {
            called.push("a");
            removeA();
            removeB();
          });
          removeB = call.onEnd!(() => called.push("b"));
          call.onEnd!(() => called.push("c"));
          return task(request.id);
        },
      },
    });
    const { error } = await unary(t.a2a, t.a2a.getTask, GetTaskRequest.fromPartial({ id: "z" }));
    expect(error).toBeUndefined();
    await until(() => called.length === 3, "every end listener");
    expect(called).toEqual(["a", "b", "c"]);
  });
});
