/**
 * Slow clients (issue 4 item 6, issue 15 item 1, A-32), through real grpc-js clients: a subscriber
 * that stops reading fills the HTTP/2 window and grpc-js reports back-pressure (write() returns
 * false); what follows is merged without loss while it waits, and it is ended with
 * RESOURCE_EXHAUSTED only when its merged backlog passes A2A_STREAM_BACKLOG_BYTES. Meanwhile a
 * fast subscriber on the same task gets every event as it is published.
 */
import * as grpc from "@grpc/grpc-js";
import { TaskState } from "../../gen/ts-proto/lf/a2a/v1/a2a.js";
import type { A2AServiceClient } from "../../gen/ts-proto/lf/a2a/v1/a2a.js";
import { until } from "../foundation/helpers.js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import { StreamReader, controlledAgent, forceGc, sendRequest, separateClient, streamSend, taskIdOf } from "./support.js";

const BACKLOG_BYTES = 512 * 1024;
const CHUNK_BYTES = 64 * 1024; // one event is as large as a whole HTTP/2 stream window
/** A fresh 64 KiB string per event (a shared one would make every queued event cost nothing). */
const chunk = (i: number) => Buffer.alloc(CHUNK_BYTES, 97 + (i % 26)).toString("latin1");
const EVENTS = 200; // 12.5 MiB in all: far more than the stalled client may cost

let s: A2ATestServer;
const ctl = controlledAgent();
const clients: A2AServiceClient[] = [];
beforeAll(async () => {
  // Resume off: these tests weigh what the stream backlogs hold; the events kept for resume
  // are bounded on their own (A2A_STREAM_RESUME_BYTES, test/streaming/resume.test.ts).
  s = await startA2AServer({ agent: ctl.agent, env: { A2A_STREAM_BACKLOG_BYTES: String(BACKLOG_BYTES), A2A_STREAM_RESUME_RETENTION: "off" } });
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

async function stalledPair(): Promise<{ run: Awaited<ReturnType<typeof ctl.nextRun>>; taskId: string; stalled: StreamReader; fast: StreamReader }> {
  const creator = streamSend(s, sendRequest("big output"), true, ownConnection());
  const run = await ctl.nextRun();
  await run.ctx.working();
  await creator.waitFor(2);
  const taskId = taskIdOf(creator);
  creator.call.cancel(); // only the two subscribers below remain
  await until(() => s.app.hub.listenerCount(taskId) === 0, "the creator to go");
  const stalled = new StreamReader(ownConnection().subscribeToTask({ tenant: "", id: taskId }, s.metadata()), true, true);
  const fast = new StreamReader(ownConnection().subscribeToTask({ tenant: "", id: taskId }, s.metadata()), true, false);
  await Promise.all([stalled.waitFor(1), fast.waitFor(1)]);
  stalled.call.pause(); // stops reading: its HTTP/2 stream window is not reopened
  return { run, taskId, stalled, fast };
}

test("A-32: a stalled grpc-js subscriber is not cut: 200 replacing 64 KiB updates wait as one; a fast one gets every event at once; the server does not hold the stalled backlog; resumed, the stalled one ends OK with the task as the fast one has it", async () => {
  const gc = forceGc();
  const { run, taskId, stalled, fast } = await stalledPair();
  const before = await settledMemory(gc);
  let worstLatencyMs = 0;
  for (let i = 0; i < EVENTS; i++) {
    const sent = performance.now();
    // Same artifact id without append: the store keeps one chunk, so memory growth would be the stalled stream's.
    await run.ctx.artifact({ artifactId: "big", name: String(i), parts: [chunk(i)] });
    await fast.waitFor(2 + i);
    worstLatencyMs = Math.max(worstLatencyMs, performance.now() - sent);
    expect(chunkOf(fast)).toBe(i);
  }
  const grown = (await settledMemory(gc)) - before;
  expect(s.app.hub.listenerCount(taskId)).toBe(2); // nobody was cut
  // Without merging the server would hold up to 200 events (12.5 MiB) for the stalled client; merged it holds one.
  expect(grown).toBeLessThan(4 * 1024 * 1024);
  expect(worstLatencyMs).toBeLessThan(1000);

  await run.ctx.complete("done");
  run.finish();
  expect((await fast.ended).code).toBe(grpc.status.OK);
  expect(fast.received).toBe(1 + EVENTS + 1);

  stalled.call.resume();
  expect((await stalled.ended).code).toBe(grpc.status.OK);
  const names = stalled.events
    .filter((e) => e.payload?.$case === "artifactUpdate")
    .map((e) => Number((e.payload as { value: { artifact: { name: string } } }).value.artifact.name));
  expect(names.length).toBeLessThan(EVENTS); // some were merged away (each replaced the one before)
  expect(names).toEqual([...names].sort((a, b) => a - b));
  expect(names.at(-1)).toBe(EVENTS - 1);
  expect(stalled.events.at(-1)?.payload?.$case).toBe("statusUpdate");
});

test("A-32: a grpc-js subscriber that stalls through 3,000 appended chunks gets every chunk, in order, in fewer responses", async () => {
  const { run, stalled, fast } = await stalledPair();
  const chunks = Array.from({ length: 3000 }, (_, i) => `token ${i} ` + "x".repeat(100)); // ~350 KB: inside the byte budget
  for (let i = 0; i < chunks.length; i++) {
    await run.ctx.artifact({ artifactId: "answer", parts: [chunks[i]!] }, { append: i > 0, lastChunk: i === chunks.length - 1 });
    if (i % 100 === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  await run.ctx.complete("done");
  run.finish();
  expect((await fast.ended).code).toBe(grpc.status.OK);
  stalled.call.resume();
  expect((await stalled.ended).code).toBe(grpc.status.OK);
  const updates = stalled.events.filter((e) => e.payload?.$case === "artifactUpdate");
  const texts = updates.flatMap((e) =>
    (e.payload as { value: { artifact: { parts: Array<{ content: { value: string } }> } } }).value.artifact.parts.map((p) => p.content.value),
  );
  expect(texts).toEqual(chunks);
  expect(updates.length).toBeLessThan(chunks.length);
  const last = updates.at(-1)!.payload as { value: { lastChunk: boolean } };
  expect(last.value.lastChunk).toBe(true);
});

test("A-32: a stalled subscriber whose merged backlog passes A2A_STREAM_BACKLOG_BYTES is ended with RESOURCE_EXHAUSTED; the fast one is not", async () => {
  const { run, taskId, stalled, fast } = await stalledPair();
  for (let i = 0; i < 60; i++) {
    // Distinct artifacts: nothing merges, so the backlog grows by 64 KiB an event.
    await run.ctx.artifact({ artifactId: `part-${i}`, name: String(i), parts: [chunk(i)] });
    await fast.waitFor(2 + i);
  }
  expect(s.app.hub.listenerCount(taskId)).toBe(1);
  await run.ctx.complete("done");
  run.finish();
  expect((await fast.ended).code).toBe(grpc.status.OK);
  stalled.call.resume();
  const end = await stalled.ended;
  expect(end.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
  expect(end.details).toMatch(new RegExp(`passed ${BACKLOG_BYTES} bytes`));
  expect(end.details).toMatch(/SubscribeToTask/);
  const names = stalled.events.slice(1).map((e) => Number((e.payload as { value: { artifact: { name: string } } }).value.artifact.name));
  expect(names).toEqual(Array.from({ length: names.length }, (_, i) => i)); // what it got, it got in order
  await until(() => s.lines.some((l) => l["method"] === "SubscribeToTask" && l["grpc_status"] === "RESOURCE_EXHAUSTED"), "the RPC log line");
  expect(s.lines.find((l) => l["grpc_status"] === "RESOURCE_EXHAUSTED")).toMatchObject({ slow_client: "true", task_id: taskId });
});

test("A-32: a SendStreamingMessage caller that stops reading is cut off the same way; the task completes regardless", async () => {
  const stalled = streamSend(s, sendRequest("big output"), true, ownConnection());
  const run = await ctl.nextRun();
  await run.ctx.working();
  await stalled.waitFor(2);
  stalled.call.pause();
  const taskId = taskIdOf(stalled);
  for (let i = 0; i < 60 && s.app.hub.listenerCount(taskId) > 0; i++) {
    await run.ctx.artifact({ artifactId: `big-${i}`, name: String(i), parts: [chunk(i)] });
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
