/**
 * pipeStream and the event hub in isolation: the exact flow-control arithmetic (how many events
 * a blocked stream may queue), drain, abandonment before the first answer, errors before the
 * first event, and the hub's per-event behaviour.
 */
import * as grpc from "@grpc/grpc-js";
import { create } from "@bufbuild/protobuf";
import { StreamResponseSchema, TaskState, type StreamResponse } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { EventHub } from "../../src/events/event-hub.js";
import type { TaskEvent } from "../../src/events/task-event.js";
import { TaskNotFoundError } from "../../src/lifecycle/errors.js";
import { TaskFeed, type StreamSink } from "../../src/lifecycle/task-feed.js";
import type { RequestContext } from "../../src/lifecycle/task-service.js";
import { GrpcStatusError } from "../../src/protocol/error-status.js";
import type { CallContext, StreamWriter } from "../../src/protocol/grpc-adapter.js";
import { pipeStream } from "../../src/protocol/stream-pipe.js";

class FakeWriter implements StreamWriter<StreamResponse> {
  written: StreamResponse[] = [];
  /** write() returns false from this many writes on, until drain(). */
  capacity = Infinity;
  closed = false;
  private drains: Array<() => void> = [];
  write(message: StreamResponse): boolean {
    if (this.closed) return false;
    this.written.push(message);
    return this.written.length < this.capacity;
  }
  waitForDrain(): Promise<void> {
    return new Promise((resolve) => this.drains.push(resolve));
  }
  drain(): void {
    this.capacity = Infinity;
    for (const d of this.drains.splice(0)) d();
  }
}

function fakeCall(): CallContext & { abort(): void; fields: Record<string, string> } {
  const controller = new AbortController();
  const fields: Record<string, string> = {};
  return {
    method: "SubscribeToTask",
    metadata: new grpc.Metadata(),
    signal: controller.signal,
    onEnd: (listener) => {
      const onAbort = () => listener(controller.signal.reason as Error);
      controller.signal.addEventListener("abort", onAbort, { once: true });
      return () => controller.signal.removeEventListener("abort", onAbort);
    },
    setLogField: (k, v) => void (fields[k] = v),
    setTaskId: (id) => void (fields["task_id"] = id),
    setPrincipal: (p) => void (fields["principal"] = p),
    getAuthContext: () => ({}),
    setResponseHeader: () => undefined,
    abort: () => controller.abort(),
    fields,
  };
}

const rc: RequestContext = { caller: { tenant: "", principal: "p" }, requestedExtensions: [], activatedExtensions: new Set() };
const event = (i: number) => create(StreamResponseSchema, { payload: { case: "statusUpdate", value: { taskId: "t", contextId: "c", status: { state: TaskState.WORKING, timestamp: { seconds: BigInt(i) } } } } });

test("write() false starts the count once an I/O turn has passed: exactly bufferEvents more events are queued, the next one ends the stream with RESOURCE_EXHAUSTED and closes the subscription", async () => {
  const out = new FakeWriter();
  out.capacity = 3; // the 3rd write reports back-pressure
  const call = fakeCall();
  let sink!: StreamSink;
  let closed = 0;
  const piping = pipeStream(call, out, 5, async (s) => ((sink = s), { close: () => closed++ }), rc);
  await Promise.resolve();
  for (let i = 0; i < 3 + 2; i++) sink.next(event(i));
  // Until grpc-js has had an I/O turn, back-pressure is not held against the client (a burst).
  await new Promise((resolve) => setImmediate(resolve));
  for (let i = 5; i < 5 + 5; i++) sink.next(event(i));
  expect(out.written).toHaveLength(10);
  expect(closed).toBe(0);
  sink.next(event(10));
  await expect(piping).rejects.toThrow(GrpcStatusError);
  await piping.catch((e: GrpcStatusError) => expect([e.code, e.message]).toEqual([grpc.status.RESOURCE_EXHAUSTED, expect.stringMatching(/more than 5 events behind.*SubscribeToTask/)]));
  expect(out.written).toHaveLength(10);
  expect(closed).toBe(1);
  expect(call.fields["slow_client"]).toBe("true");
  sink.next(event(11)); // late events after the end go nowhere
  expect(out.written).toHaveLength(10);
});

test("'drain' resets the count: a client that catches up is never cut off", async () => {
  const out = new FakeWriter();
  const call = fakeCall();
  let sink!: StreamSink;
  const piping = pipeStream(call, out, 2, async (s) => ((sink = s), { close: () => undefined }), rc);
  await Promise.resolve();
  for (let round = 0; round < 10; round++) {
    out.capacity = out.written.length + 1;
    sink.next(event(round * 3)); // blocks
    sink.next(event(round * 3 + 1));
    sink.next(event(round * 3 + 2)); // 2 queued while blocked: still inside the bound
    out.drain();
    await new Promise((resolve) => setImmediate(resolve));
  }
  sink.end();
  await expect(piping).resolves.toBeUndefined();
  expect(out.written).toHaveLength(30);
});

test("R-STREAM-1: an error before the first event rejects the pipe (it becomes the call's status); R-STREAM-9: an abort before the answer releases the call at once and closes the late handle", async () => {
  const refused = pipeStream(fakeCall(), new FakeWriter(), 4, () => Promise.reject(new TaskNotFoundError("t")), rc);
  await expect(refused).rejects.toBeInstanceOf(TaskNotFoundError);

  const call = fakeCall();
  let answer!: (h: { close(): void }) => void;
  let closed = 0;
  const piping = pipeStream(call, new FakeWriter(), 4, () => new Promise((resolve) => (answer = resolve)), rc);
  call.abort();
  await expect(piping).resolves.toBeUndefined(); // without the agent having answered
  answer({ close: () => closed++ });
  await new Promise((resolve) => setImmediate(resolve));
  expect(closed).toBe(1);
});

describe("EventHub", () => {
  const status = (version: number, state = TaskState.WORKING): TaskEvent => ({
    kind: "status",
    version,
    taskId: "t",
    contextId: "c",
    status: { $typeName: "lf.a2a.v1.TaskStatus", state, timestamp: undefined, message: undefined } as never,
  });

  test("delivers in publish order to every listener; a listener that leaves during delivery is skipped, a throwing one is removed", () => {
    const errors: unknown[] = [];
    const hub = new EventHub((e) => errors.push(e));
    const seen: string[] = [];
    let offB = () => undefined as void;
    hub.subscribe("t", (e) => {
      seen.push(`a${e.version}`);
      if (e.version === 1) offB(); // b is after a in this delivery: it must not get event 1
    });
    offB = hub.subscribe("t", (e) => seen.push(`b${e.version}`));
    hub.subscribe("t", (e) => {
      if (e.version === 2) throw new Error("boom");
      seen.push(`c${e.version}`);
    });
    hub.publish(status(1));
    hub.publish(status(2));
    hub.publish(status(3));
    expect(seen).toEqual(["a1", "c1", "a2", "a3"]);
    expect(errors).toHaveLength(1);
    expect(hub.listenerCount("t")).toBe(1);
    expect(hub.topicCount()).toBe(1);
  });

  test("the same function subscribed twice is two subscriptions; unsubscribing is idempotent and drops the topic", () => {
    const hub = new EventHub();
    let n = 0;
    const f = () => n++;
    const off1 = hub.subscribe("t", f);
    const off2 = hub.subscribe("t", f);
    hub.publish(status(1));
    expect(n).toBe(2);
    off1();
    off1();
    expect(hub.listenerCount()).toBe(1);
    off2();
    expect([hub.listenerCount(), hub.topicCount()]).toEqual([0, 0]);
  });

  test("every stream of a task gets the same StreamResponse object for an update event (built once, not once per subscriber)", () => {
    const hub = new EventHub();
    const got: StreamResponse[][] = [[], [], []];
    for (const list of got) {
      const feed = new TaskFeed(hub, { next: (r) => list.push(r), end: () => undefined, fail: () => undefined }, undefined);
      feed.attachAtCreation("t");
    }
    hub.publish(status(2));
    hub.publish(status(3, TaskState.COMPLETED));
    expect(got.map((l) => l.length)).toEqual([2, 2, 2]);
    expect(got[1]![0]).toBe(got[0]![0]);
    expect(got[2]![1]).toBe(got[0]![1]);
    expect(hub.listenerCount()).toBe(0); // every feed closed itself at the terminal event
  });
});
