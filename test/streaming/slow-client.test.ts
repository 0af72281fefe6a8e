/**
 * Slow clients (issue 4 item 6): a subscriber that stops reading fills the HTTP/2 window, grpc-js
 * reports back-pressure (write() returns false), and once it is more than A2A_STREAM_BUFFER_EVENTS
 * further behind it is ended with RESOURCE_EXHAUSTED. Meanwhile a fast subscriber on the same
 * task gets every event as it is published, and the server does not hold the stalled backlog.
 */
import * as grpc from "@grpc/grpc-js";
import { TaskState } from "../../gen/ts-proto/lf/a2a/v1/a2a.js";
import type { A2AServiceClient } from "../../gen/ts-proto/lf/a2a/v1/a2a.js";
import { until } from "../foundation/helpers.js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import { StreamReader, controlledAgent, forceGc, sendRequest, separateClient, streamSend, taskIdOf } from "./support.js";

const BUFFER = 8;
const CHUNK_BYTES = 64 * 1024; // one event is as large as a whole HTTP/2 stream window
/** A fresh 64 KiB string per event (a shared one would make every queued event cost nothing). */
const chunk = (i: number) => Buffer.alloc(CHUNK_BYTES, 97 + (i % 26)).toString("latin1");
const EVENTS = 200; // 12.5 MiB in all: far more than the stalled client may cost
/** grpc-js streams are object-mode streams with the default high-water mark of 16 messages, on both sides. */
const CLIENT_QUEUE = 16;
const SERVER_QUEUE = 16;

let s: A2ATestServer;
const ctl = controlledAgent();
const clients: A2AServiceClient[] = [];
beforeAll(async () => {
  s = await startA2AServer({ agent: ctl.agent, env: { A2A_STREAM_BUFFER_EVENTS: String(BUFFER) } });
});
afterAll(async () => {
  for (const c of clients) c.close();
  await s.close();
});

function ownConnection(): A2AServiceClient {
  const c = separateClient(s);
  clients.push(c);
  return c;
}

function chunkOf(reader: StreamReader): number {
  const p = reader.events.at(-1)?.payload;
  if (p?.$case !== "artifactUpdate") throw new Error(`expected an artifact update, got ${p?.$case}`);
  return Number(p.value.artifact!.name);
}

/** Heap plus Buffers (external includes array buffers), after a full GC and a turn for the weak callbacks that free Buffers. */
async function settledMemory(gc: () => void): Promise<number> {
  gc();
  await new Promise((resolve) => setImmediate(resolve));
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

test("issue 4 item 6: a stalled subscriber is ended with RESOURCE_EXHAUSTED after falling more than A2A_STREAM_BUFFER_EVENTS behind; a fast one gets every event at once; the backlog is not kept", async () => {
  const gc = forceGc();
  const creator = streamSend(s, sendRequest("big output"), true, ownConnection());
  const run = await ctl.nextRun();
  await run.ctx.working();
  await creator.waitFor(2);
  const taskId = taskIdOf(creator);
  creator.call.cancel(); // only the two subscribers below remain
  await until(() => s.app.hub.listenerCount(taskId) === 0, "the creator to go");

  const stalled = new StreamReader(ownConnection().subscribeToTask({ tenant: "", id: taskId }, s.metadata()), true, false);
  const fast = new StreamReader(ownConnection().subscribeToTask({ tenant: "", id: taskId }, s.metadata()), true, false);
  await Promise.all([stalled.waitFor(1), fast.waitFor(1)]);
  stalled.call.pause(); // stops reading: its HTTP/2 stream window is not reopened
  expect(s.app.hub.listenerCount(taskId)).toBe(2);

  const before = await settledMemory(gc);
  let droppedAt: number | undefined;
  let worstLatencyMs = 0;
  for (let i = 0; i < EVENTS; i++) {
    const sent = performance.now();
    // Same artifact id without append: the store keeps one chunk, so memory growth would be the stalled stream's.
    await run.ctx.artifact({ artifactId: "big", name: String(i), parts: [chunk(i)] });
    await fast.waitFor(2 + i);
    worstLatencyMs = Math.max(worstLatencyMs, performance.now() - sent);
    expect(chunkOf(fast)).toBe(i);
    if (droppedAt === undefined && s.app.hub.listenerCount(taskId) === 1) droppedAt = i;
  }
  const grown = (await settledMemory(gc)) - before;

  // The server gave up on the stalled client early. Before it: the client's own grpc-js queue
  // (16 messages, read off the socket before the paused stream stops pulling), about one event
  // in the HTTP/2 windows, the server's grpc-js queue (16 messages; write() turns false there)
  // and BUFFER more.
  expect(droppedAt).toBeDefined();
  expect(droppedAt!).toBeLessThanOrEqual(CLIENT_QUEUE + 2 + SERVER_QUEUE + BUFFER);
  expect(stalled.end).toBeUndefined(); // it has not read a thing, so it cannot have seen the status yet
  // 200 events of 64 KiB went by; what the server may still hold for the stalled client is its bounded backlog.
  // Without the cut-off it would hold all 200 (12.5 MiB); what the server may still hold for it is
  // its bounded backlog (at most 16 + BUFFER events), measured with generous room for noise.
  expect(grown).toBeLessThan(6 * 1024 * 1024);
  expect(worstLatencyMs).toBeLessThan(1000);

  await run.ctx.complete("done");
  run.finish();
  expect((await fast.ended).code).toBe(grpc.status.OK);
  expect(fast.received).toBe(1 + EVENTS + 1);

  // When the stalled client reads again it gets its backlog, in order, then the reason it was cut off.
  const backlog: number[] = [];
  stalled.call.on("data", (e) => backlog.push(e.payload?.$case === "artifactUpdate" ? Number(e.payload.value.artifact!.name) : -1));
  stalled.call.resume();
  const end = await stalled.ended;
  expect(end.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
  expect(end.details).toMatch(new RegExp(`fell more than ${BUFFER} events behind`));
  expect(end.details).toMatch(/SubscribeToTask/);
  expect(backlog).toEqual(Array.from({ length: backlog.length }, (_, i) => i));
  // More than the client and the windows can hold: the server's grpc-js queue was full (write() false).
  expect(backlog.length).toBeGreaterThan(CLIENT_QUEUE + 2 + BUFFER);
  expect(backlog.length).toBe(droppedAt);
  await until(() => s.lines.some((l) => l["method"] === "SubscribeToTask" && l["grpc_status"] === "RESOURCE_EXHAUSTED"), "the RPC log line");
  expect(s.lines.find((l) => l["grpc_status"] === "RESOURCE_EXHAUSTED")).toMatchObject({ slow_client: "true", task_id: taskId });
});

test("issue 4 item 6: a SendStreamingMessage caller that stops reading is cut off the same way; the task completes regardless", async () => {
  const stalled = streamSend(s, sendRequest("big output"), true, ownConnection());
  const run = await ctl.nextRun();
  await run.ctx.working();
  await stalled.waitFor(2);
  stalled.call.pause();
  const taskId = taskIdOf(stalled);
  for (let i = 0; i < 60 && s.app.hub.listenerCount(taskId) > 0; i++) {
    await run.ctx.artifact({ artifactId: "big", name: String(i), parts: [chunk(i)] });
    await new Promise((resolve) => setImmediate(resolve)); // let grpc-js report its progress
  }
  expect(s.app.hub.listenerCount(taskId)).toBe(0);
  await run.ctx.complete("done");
  run.finish();
  stalled.call.resume();
  const end = await stalled.ended;
  expect(end.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
  const last = stalled.events.at(-1)?.payload;
  expect(last?.$case).toBe("artifactUpdate"); // never saw the COMPLETED update: it was cut off before
  await until(() => s.app.service.runningCount === 0, "the run to end");
  const state = await new Promise<TaskState | undefined>((resolve) =>
    s.client.getTask({ tenant: "", id: taskId, historyLength: undefined }, s.metadata(), (_e, t) => resolve(t?.status?.state)),
  );
  expect(state).toBe(TaskState.TASK_STATE_COMPLETED);
});
