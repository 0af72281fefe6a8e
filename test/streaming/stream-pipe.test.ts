/**
 * pipeStream and the event hub in isolation: what a blocked stream merges, its budgets,
 * drain, abandonment before the first answer, errors before the first event, what streams report
 * for metrics, and the hub's per-event behaviour.
 */
import * as grpc from "@grpc/grpc-js";
import { create } from "@bufbuild/protobuf";
import { StreamResponseSchema, TaskState, type StreamResponse } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { EventHub } from "../../src/events/event-hub.js";
import type { TaskEvent } from "../../src/events/task-event.js";
import { TaskNotFoundError } from "../../src/lifecycle/model/errors.js";
import { TaskFeed, type StreamSink } from "../../src/lifecycle/reads/task-feed.js";
import type { RequestContext } from "../../src/lifecycle/task-service.js";
import { GrpcStatusError } from "../../src/service/error-status.js";
import type { CallContext, StreamWriter } from "../../src/protocol/grpc-adapter.js";
import { pipeStream } from "../../src/service/stream-pipe.js";
import { BacklogBudget, openStreamCount, type BacklogLimits } from "../../src/streams/index.js";
import diagnostics from "node:diagnostics_channel";

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
const event = (i: number) =>
  create(StreamResponseSchema, {
    payload: { case: "statusUpdate", value: { taskId: "t", contextId: "c", status: { state: TaskState.WORKING, timestamp: { seconds: BigInt(i) } } } },
  });

const limits = (streamBytes = 1 << 20, streamEntries = 64, shared = new BacklogBudget(1 << 24)): BacklogLimits => ({
  streamBytes,
  streamEntries,
  entryBytes: 1 << 20,
  shared,
});
const artifact = (i: number, append = true, id = "a") =>
  create(StreamResponseSchema, {
    payload: {
      case: "artifactUpdate",
      value: { taskId: "t", contextId: "c", append, artifact: { artifactId: id, parts: [{ content: { case: "text", value: `chunk ${i};` } }] } },
    },
  });
const texts = (r: StreamResponse) => (r.payload.case === "artifactUpdate" ? r.payload.value.artifact!.parts.map((p) => p.content.value as string) : []);

function open(out: FakeWriter, options: { limits?: BacklogLimits; call?: ReturnType<typeof fakeCall> } = {}) {
  const call = options.call ?? fakeCall();
  const state = { sink: undefined as unknown as StreamSink, closed: 0 };
  const piping = pipeStream({ call, out, limits: options.limits ?? limits(), rc, open: async (s) => ((state.sink = s), { close: () => state.closed++ }) });
  return { call, piping, state };
}

test("A-32: once write() is false, appends to one artifact wait merged into one update (parts in order) and go out on 'drain'; nothing is cut", async () => {
  const out = new FakeWriter();
  out.capacity = 2;
  const { piping, state } = open(out, { limits: limits(1 << 20, 2) });
  await Promise.resolve();
  for (let i = 0; i < 500; i++) state.sink.next(artifact(i));
  expect(out.written).toHaveLength(2); // the second write said "full"
  out.drain();
  await new Promise((resolve) => setImmediate(resolve));
  expect(out.written).toHaveLength(3);
  expect(out.written.slice(0, 2).flatMap(texts)).toEqual(["chunk 0;", "chunk 1;"]);
  expect(texts(out.written[2]!)).toEqual(Array.from({ length: 498 }, (_, i) => `chunk ${i + 2};`));
  state.sink.end();
  await expect(piping).resolves.toBeUndefined();
});

test("A-32: a stream whose merged backlog passes its byte budget ends with RESOURCE_EXHAUSTED, closes its subscription and gives its share of the shared budget back", async () => {
  const out = new FakeWriter();
  out.capacity = 1;
  const shared = new BacklogBudget(1 << 24);
  const { call, piping, state } = open(out, { limits: limits(200, 64, shared) });
  await Promise.resolve();
  state.sink.next(event(0)); // full
  for (let i = 0; i < 10 && shared.used >= 0; i++) state.sink.next(artifact(i, false, `id-${i}`)); // distinct artifacts: nothing merges
  await expect(piping).rejects.toThrow(GrpcStatusError);
  await piping.catch((e: GrpcStatusError) =>
    expect([e.code, e.message]).toEqual([grpc.status.RESOURCE_EXHAUSTED, expect.stringMatching(/passed 200 bytes.*SubscribeToTask/)]),
  );
  expect(state.closed).toBe(1);
  expect(call.fields["slow_client"]).toBe("true");
  expect(shared.used).toBe(0);
  const written = out.written.length;
  state.sink.next(event(11)); // late events after the end go nowhere
  expect(out.written).toHaveLength(written);
});

test("A-32: the entry limit (A2A_STREAM_BUFFER_EVENTS) counts entries after merging", async () => {
  const out = new FakeWriter();
  out.capacity = 1;
  const { piping, state } = open(out, { limits: limits(1 << 20, 3) });
  await Promise.resolve();
  state.sink.next(event(0));
  for (let i = 0; i < 100; i++) state.sink.next(artifact(i)); // one entry
  state.sink.next(event(1)); // same state as nothing queued before it: an entry
  state.sink.next(event(2)); // same state as the last queued status: collapses
  state.sink.next(artifact(100, true, "b"));
  state.sink.next(artifact(101, true, "c")); // a fourth entry
  await expect(piping).rejects.toThrow(/passed 3 events/);
});

test("A-32: streams share one budget: the stream that would pass it is ended, the others go on", async () => {
  const shared = new BacklogBudget(300);
  const a = open(Object.assign(new FakeWriter(), { capacity: 1 }), { limits: limits(1 << 20, 64, shared) });
  const b = open(Object.assign(new FakeWriter(), { capacity: 1 }), { limits: limits(1 << 20, 64, shared) });
  await Promise.resolve();
  for (const s of [a, b]) s.state.sink.next(event(0));
  for (let i = 0; i < 5; i++) a.state.sink.next(artifact(i, false, `id-${i}`));
  const used = shared.used;
  expect(used).toBeGreaterThan(100);
  expect(used).toBeLessThan(200);
  for (let i = 0; i < 10; i++) b.state.sink.next(artifact(i, false, `id-${i}`));
  await expect(b.piping).rejects.toThrow(/budget for slow streams/);
  expect(shared.used).toBe(used);
  a.state.sink.end();
  a.call.abort();
  await a.piping;
  expect(shared.used).toBe(0);
});

test("A-2 with A-32: the closing event waits behind the backlog; the stream ends once everything was written", async () => {
  const out = new FakeWriter();
  out.capacity = 1;
  const { piping, state } = open(out);
  await Promise.resolve();
  let ended = false;
  void piping.then(() => (ended = true));
  state.sink.next(event(0));
  for (let i = 0; i < 3; i++) state.sink.next(artifact(i));
  state.sink.next(
    create(StreamResponseSchema, { payload: { case: "statusUpdate", value: { taskId: "t", contextId: "c", status: { state: TaskState.COMPLETED } } } }),
  );
  state.sink.end();
  await new Promise((resolve) => setImmediate(resolve));
  expect(ended).toBe(false);
  out.drain();
  await piping;
  expect(out.written.map((r) => r.payload.case)).toEqual(["statusUpdate", "artifactUpdate", "statusUpdate"]);
});

test("metrics (#16): a2a:stream:event says whether a written response was merged; a2a:stream:ended gives the reason; openStreamCount() counts open streams", async () => {
  const events: unknown[] = [];
  const ends: unknown[] = [];
  const onEvent = (m: unknown) => events.push(m);
  const onEnd = (m: unknown) => ends.push(m);
  diagnostics.subscribe("a2a:stream:event", onEvent);
  diagnostics.subscribe("a2a:stream:ended", onEnd);
  try {
    const before = openStreamCount();
    const out = new FakeWriter();
    out.capacity = 1;
    const { piping, state } = open(out);
    await Promise.resolve();
    expect(openStreamCount()).toBe(before + 1);
    state.sink.next(event(0));
    state.sink.next(artifact(0));
    state.sink.next(artifact(1));
    out.drain();
    await new Promise((resolve) => setImmediate(resolve));
    state.sink.end();
    await piping;
    expect(events).toEqual([{ merged: false }, { merged: true }]);
    const gone = open(new FakeWriter());
    gone.call.abort();
    await gone.piping;
    expect(ends).toEqual([{ reason: "done" }, { reason: "client-gone" }]);
    expect(openStreamCount()).toBe(before);
  } finally {
    diagnostics.unsubscribe("a2a:stream:event", onEvent);
    diagnostics.unsubscribe("a2a:stream:ended", onEnd);
  }
});

test("R-STREAM-1: an error before the first event rejects the pipe (it becomes the call's status); R-STREAM-9: an abort before the answer releases the call at once and closes the late handle", async () => {
  const refused = pipeStream({ call: fakeCall(), out: new FakeWriter(), limits: limits(), rc, open: () => Promise.reject(new TaskNotFoundError("t")) });
  await expect(refused).rejects.toBeInstanceOf(TaskNotFoundError);

  const call = fakeCall();
  let answer!: (h: { close(): void }) => void;
  let closed = 0;
  const piping = pipeStream({ call, out: new FakeWriter(), limits: limits(), rc, open: () => new Promise((resolve) => (answer = resolve)) });
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
