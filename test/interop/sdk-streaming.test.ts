/**
 * Issue 3/4: SendStreamingMessage and SubscribeToTask through the official @a2a-js/sdk client.
 * The SDK turns a gRPC server stream into an async generator: a normal end of the generator is
 * the server closing the call with OK, and an error status is thrown as the SDK's error class.
 */
import { TaskState, type StreamResponse, type Task } from "@a2a-js/sdk";
import { TaskNotFoundError, UnsupportedOperationError } from "@a2a-js/sdk/errors";
import { GRPC_STATUS_CODE } from "@a2a-js/sdk/errors/grpc";
import { collect, gate, kind, pollTask, rejection, sendRequest, startSdkSetup, type SdkSetup } from "./sdk-client.js";

let s: SdkSetup;
beforeAll(async () => {
  s = await startSdkSetup();
});
afterAll(() => s.close());

const stateOf = (event: StreamResponse | undefined): TaskState | undefined => {
  const p = event?.payload;
  if (p?.$case === "task") return p.value.status?.state;
  if (p?.$case === "statusUpdate") return p.value.status?.state;
  return undefined;
};
const taskOf = (event: StreamResponse | undefined): Task => {
  if (event?.payload?.$case !== "task") throw new Error(`expected a task event, got ${JSON.stringify(event)}`);
  return event.payload.value;
};
const chunkText = (event: StreamResponse) =>
  event.payload?.$case === "artifactUpdate"
    ? event.payload.value.artifact!.parts.map((p) => (p.content?.$case === "text" ? p.content.value : "")).join("")
    : "";

/** A scripted agent that reports WORKING, then waits for the test before finishing with an artifact. */
function heldTask(word: string) {
  const started = gate();
  const release = gate();
  s.scripts.set(word, async (ctx) => {
    await ctx.working("started");
    started.open();
    await release.promise;
    await ctx.artifact({ artifactId: "result", name: "result", parts: ["the result"] }, { lastChunk: true });
    await ctx.complete("done");
  });
  return { started, release };
}

describe("SendStreamingMessage", () => {
  test("R-STREAM-3, R-STREAM-5, R-ART-2, R-CTX-8: a task stream starts with the task, carries the chunks in order and ends after COMPLETED", async () => {
    const events = await collect(s.client.sendMessageStream(sendRequest("story")));
    // Generator finished without throwing: the server closed the call with OK right after the terminal event.
    expect(events.map(kind)).toEqual(["task", "statusUpdate", "artifactUpdate", "artifactUpdate", "artifactUpdate", "artifactUpdate", "statusUpdate"]);
    const task = taskOf(events[0]);
    expect(task.status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);
    expect(stateOf(events[1])).toBe(TaskState.TASK_STATE_WORKING);
    expect(stateOf(events.at(-1))).toBe(TaskState.TASK_STATE_COMPLETED);

    const chunks = events.filter((e) => kind(e) === "artifactUpdate").map((e) => e.payload!.value as { append: boolean; lastChunk: boolean });
    expect(chunks.map((c) => [c.append, c.lastChunk])).toEqual([
      [false, false],
      [true, false],
      [true, false],
      [true, true],
    ]);
    for (const e of events.slice(1)) {
      const v = e.payload!.value as { taskId: string; contextId: string };
      expect([v.taskId, v.contextId]).toEqual([task.id, task.contextId]);
    }
    // The chunks, appended in arrival order, are the artifact the server stored.
    const stored = await s.client.getTask({ tenant: "", id: task.id });
    const storedText = stored.artifacts[0]!.parts.map((p) => (p.content?.$case === "text" ? p.content.value : "")).join("");
    expect(events.map(chunkText).join("")).toBe(storedText);
  });

  test("R-STREAM-2: a message-only answer is a stream of exactly one Message", async () => {
    const events = await collect(s.client.sendMessageStream(sendRequest("hello")));
    expect(events.map(kind)).toEqual(["message"]);
  });

  test("R-STREAM-4, A-2: the stream closes after INPUT_REQUIRED; a streamed follow-up on the task runs it to COMPLETED", async () => {
    const first = await collect(s.client.sendMessageStream(sendRequest("trip")));
    expect(first.map(kind)).toEqual(["task", "statusUpdate", "statusUpdate"]);
    expect(stateOf(first.at(-1))).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const taskId = taskOf(first[0]).id;

    const second = await collect(s.client.sendMessageStream(sendRequest("Rome", { taskId })));
    expect(kind(second[0]!)).toBe("task");
    expect(taskOf(second[0]).id).toBe(taskId);
    expect(second.map(kind)).toContain("artifactUpdate");
    expect(stateOf(second.at(-1))).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  test("A-2, R-IAUTH-3: the stream stays open through AUTH_REQUIRED and delivers the rest once the task goes on", async () => {
    const stream = s.client.sendMessageStream(sendRequest("auth"))[Symbol.asyncIterator]();
    const seen: StreamResponse[] = [];
    while (stateOf(seen.at(-1)) !== TaskState.TASK_STATE_AUTH_REQUIRED) {
      const next = await stream.next();
      if (next.done) throw new Error(`stream ended before AUTH_REQUIRED: ${seen.map(kind)}`);
      seen.push(next.value);
    }
    const taskId = taskOf(seen[0]).id;
    // Still open: the continuation (sent on another call) arrives on this stream.
    await s.client.sendMessage(sendRequest("authorized", { taskId }));
    const rest: StreamResponse[] = [];
    for (let next = await stream.next(); !next.done; next = await stream.next()) rest.push(next.value);
    // WORKING twice: the server's when it accepts the follow-up, then the agent's own.
    expect(rest.map(stateOf)).toEqual([TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_COMPLETED]);
  });

  test("R-STREAM-9: a client that aborts its stream ends only that stream; the task still completes", async () => {
    const { started, release } = heldTask("stream then abort");
    const abort = new AbortController();
    const stream = s.client.sendMessageStream(sendRequest("stream then abort"), { signal: abort.signal })[Symbol.asyncIterator]();
    const first = await stream.next();
    const taskId = taskOf(first.value as StreamResponse).id;
    await started.promise;
    abort.abort();
    // The SDK reports its own cancellation as a generic A2AError carrying gRPC CANCELLED.
    const error = await rejection(stream.next());
    expect(error["status"]).toBe(GRPC_STATUS_CODE.CANCELLED);
    release.open();
    const done = await pollTask(s.client, taskId, (t) => t.status?.state === TaskState.TASK_STATE_COMPLETED, "the task to complete");
    expect(done.artifacts.map((a) => a.artifactId)).toEqual(["result"]);
  });

  test("R-STREAM-1, R-SEND-10: streaming to a terminal task fails with UnsupportedOperationError before any event", async () => {
    const done = await collect(s.client.sendMessageStream(sendRequest("story")));
    const taskId = taskOf(done[0]).id;
    const events: StreamResponse[] = [];
    const error = await rejection(
      (async () => {
        for await (const e of s.client.sendMessageStream(sendRequest("more", { taskId }))) events.push(e);
      })(),
    );
    expect(events).toEqual([]);
    expect(error).toBeInstanceOf(UnsupportedOperationError);
    expect(error["status"]).toBe(GRPC_STATUS_CODE.FAILED_PRECONDITION);
  });

  test("R-STREAM-1, R-SEND-11: streaming to an unknown task fails with TaskNotFoundError", async () => {
    const error = await rejection(collect(s.client.sendMessageStream(sendRequest("more", { taskId: "no-such-task" }))));
    expect(error).toBeInstanceOf(TaskNotFoundError);
    expect(error["status"]).toBe(GRPC_STATUS_CODE.NOT_FOUND);
  });
});

describe("SubscribeToTask (the SDK's resubscribeTask)", () => {
  test("R-SUB-3, R-SUB-4: a running task's subscription starts with the snapshot, then live events until COMPLETED", async () => {
    const { started, release } = heldTask("held for subscribe");
    const sent = await s.client.sendMessage(sendRequest("held for subscribe", {}, { returnImmediately: true }));
    const taskId = (sent as Task).id;
    await started.promise;

    const stream = s.client.resubscribeTask({ tenant: "", id: taskId })[Symbol.asyncIterator]();
    const snapshot = taskOf((await stream.next()).value as StreamResponse);
    expect(snapshot.id).toBe(taskId);
    expect(snapshot.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    expect(snapshot.history.length).toBeGreaterThan(0);

    release.open();
    const live: StreamResponse[] = [];
    for (let next = await stream.next(); !next.done; next = await stream.next()) live.push(next.value);
    expect(live.map(kind)).toEqual(["artifactUpdate", "statusUpdate"]);
    expect(chunkText(live[0]!)).toBe("the result");
    expect(stateOf(live[1])).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  test("R-SUB-5: two subscribers of one task get the same events in the same order", async () => {
    const { started, release } = heldTask("held for two");
    const taskId = ((await s.client.sendMessage(sendRequest("held for two", {}, { returnImmediately: true }))) as Task).id;
    await started.promise;
    const one = s.client.resubscribeTask({ tenant: "", id: taskId })[Symbol.asyncIterator]();
    const two = s.client.resubscribeTask({ tenant: "", id: taskId })[Symbol.asyncIterator]();
    // Both snapshots in hand means both subscriptions are live before anything else happens.
    await Promise.all([one.next(), two.next()]);
    release.open();
    const drain = async (it: AsyncIterator<StreamResponse>) => {
      const out: StreamResponse[] = [];
      for (let next = await it.next(); !next.done; next = await it.next()) out.push(next.value);
      return out;
    };
    const [a, b] = await Promise.all([drain(one), drain(two)]);
    expect(a.map(kind)).toEqual(["artifactUpdate", "statusUpdate"]);
    expect(b).toEqual(a);
  });

  test("A-19: an INPUT_REQUIRED task is subscribable; the follow-up's events arrive and the stream ends at COMPLETED", async () => {
    const trip = (await s.client.sendMessage(sendRequest("trip"))) as Task;
    const stream = s.client.resubscribeTask({ tenant: "", id: trip.id })[Symbol.asyncIterator]();
    expect(taskOf((await stream.next()).value as StreamResponse).status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    await s.client.sendMessage(sendRequest("Paris", { taskId: trip.id }));
    const live: StreamResponse[] = [];
    for (let next = await stream.next(); !next.done; next = await stream.next()) live.push(next.value);
    expect(live.map(kind)).toEqual(["statusUpdate", "statusUpdate", "artifactUpdate", "statusUpdate"]);
    expect(live.map(stateOf)).toEqual([TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_WORKING, undefined, TaskState.TASK_STATE_COMPLETED]);
  });

  test("R-SUB-2: subscribing to a terminal task fails with UnsupportedOperationError", async () => {
    const done = (await s.client.sendMessage(sendRequest("story"))) as Task;
    const error = await rejection(collect(s.client.resubscribeTask({ tenant: "", id: done.id })));
    expect(error).toBeInstanceOf(UnsupportedOperationError);
    expect(error["reason"]).toBe("UNSUPPORTED_OPERATION");
    expect(error["status"]).toBe(GRPC_STATUS_CODE.FAILED_PRECONDITION);
  });

  test("R-SUB-1: subscribing to an unknown task fails with TaskNotFoundError", async () => {
    const error = await rejection(collect(s.client.resubscribeTask({ tenant: "", id: "no-such-task" })));
    expect(error).toBeInstanceOf(TaskNotFoundError);
    expect(error["status"]).toBe(GRPC_STATUS_CODE.NOT_FOUND);
  });
});

describe("with streaming switched off (A2A_STREAMING=false)", () => {
  let off: SdkSetup;
  beforeAll(async () => {
    off = await startSdkSetup({ env: { A2A_STREAMING: "false" } });
  });
  afterAll(() => off.close());

  test("R-CAP-2, R-CARD-4: the card says so, and the SDK falls back to one blocking SendMessage that yields the final task", async () => {
    expect((await off.client.getAgentCard()).capabilities?.streaming).toBe(false);
    const events = await collect(off.client.sendMessageStream(sendRequest("story")));
    expect(events.map(kind)).toEqual(["task"]);
    expect(stateOf(events[0])).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  test("R-CAP-2: the streaming RPCs themselves answer UnsupportedOperationError", async () => {
    const task = (await off.client.sendMessage(sendRequest("trip"))) as Task;
    const subscribe = await rejection(collect(off.client.resubscribeTask({ tenant: "", id: task.id })));
    expect(subscribe).toBeInstanceOf(UnsupportedOperationError);
    // The client would never stream here (it reads the card); its transport does when asked directly.
    const stream = await rejection(collect(off.client.transport.sendMessageStream(sendRequest("story"), { serviceParameters: { "A2A-Version": "1.0" } })));
    expect(stream).toBeInstanceOf(UnsupportedOperationError);
    expect(stream["status"]).toBe(GRPC_STATUS_CODE.FAILED_PRECONDITION);
  });
});
