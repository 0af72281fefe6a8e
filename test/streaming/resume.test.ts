/*
 * The stream-resume extension (ruling A-33) through real gRPC clients: cursors on every event,
 * SubscribeToTask after a cursor gives exactly the events after it (no snapshot, no gap, no
 * duplicate), also after a restart on SQLite; on PostgreSQL; expired cursors; other scopes' tasks;
 * heartbeats. Across replicas and a replica's restart: test/replicas/replicas.test.ts.
 */
import * as grpc from "@grpc/grpc-js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TaskState, type StreamResponse } from "../../gen/ts-proto/lf/a2a/v1/a2a.js";
import { RESUME_CURSOR_HEADER, STREAM_RESUME_EXTENSION } from "../../src/streams/index.js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import { createTestDatabase } from "../support/postgres/database.js";
import { controlledAgent, describeEvent, sendRequest, StreamReader, taskIdOf } from "./support.js";

const EXT = { "a2a-extensions": STREAM_RESUME_EXTENSION };

function streamWithResume(s: A2ATestServer, text: string): StreamReader {
  return new StreamReader(s.client.sendStreamingMessage(sendRequest(text), s.metadata(EXT)));
}

function resume(s: A2ATestServer, taskId: string, cursor: string, tenant = ""): StreamReader {
  return new StreamReader(s.client.subscribeToTask({ tenant, id: taskId }, s.metadata({ ...EXT, [RESUME_CURSOR_HEADER]: cursor })));
}

function metadataOf(event: StreamResponse): Record<string, unknown> | undefined {
  const p = event.payload;
  if (p?.$case === "task" || p?.$case === "statusUpdate" || p?.$case === "artifactUpdate") return p.value.metadata as Record<string, unknown> | undefined;
  return undefined;
}

function cursorOf(event: StreamResponse): string {
  const mark = metadataOf(event)?.[STREAM_RESUME_EXTENSION] as { cursor?: unknown } | undefined;
  if (typeof mark?.cursor !== "string") throw new Error(`event ${describeEvent(event)} has no cursor`);
  return mark.cursor;
}

function isHeartbeat(event: StreamResponse): boolean {
  return (metadataOf(event)?.[STREAM_RESUME_EXTENSION] as { heartbeat?: unknown } | undefined)?.heartbeat === true;
}

/** Disconnects a reader and waits until the server saw it go. */
async function disconnect(reader: StreamReader): Promise<void> {
  reader.call.cancel();
  await reader.ended;
}

describe("memory store", () => {
  let s: A2ATestServer;
  const ctl = controlledAgent();
  beforeAll(async () => {
    s = await startA2AServer({ agent: ctl.agent, env: { A2A_STREAM_HEARTBEAT: "off" } });
  });
  afterAll(() => s.close());

  test("A-33: the card declares the extension; with it activated every event carries a cursor and the extension is echoed", async () => {
    expect(s.app.card.capabilities?.extensions.map((e) => e.uri)).toContain(STREAM_RESUME_EXTENSION);
    const reader = streamWithResume(s, "hello");
    let headers: grpc.Metadata | undefined;
    reader.call.on("metadata", (md: grpc.Metadata) => (headers = md));
    const run = await ctl.nextRun();
    await run.ctx.working();
    await run.ctx.artifact({ artifactId: "a", name: "one", parts: ["x"] });
    await run.ctx.complete();
    run.finish();
    expect((await reader.ended).code).toBe(grpc.status.OK);
    expect(reader.events).toHaveLength(4);
    const cursors = reader.events.map(cursorOf);
    expect(new Set(cursors).size).toBe(4);
    expect(String(headers?.get("a2a-extensions")[0])).toContain(STREAM_RESUME_EXTENSION);
  });

  test("A-33: a client that does not activate the extension sees plain A2A (no cursor in any event)", async () => {
    const reader = new StreamReader(s.client.sendStreamingMessage(sendRequest("plain"), s.metadata()));
    const run = await ctl.nextRun();
    await run.ctx.working();
    await run.ctx.artifact({ artifactId: "a", name: "one", parts: ["x"] });
    await run.ctx.complete();
    run.finish();
    await reader.ended;
    expect(reader.events.length).toBe(4);
    for (const event of reader.events) expect(metadataOf(event)?.[STREAM_RESUME_EXTENSION]).toBeUndefined();
  });

  test("A-33: disconnect mid-stream, the agent goes on, resume with the last cursor: exactly the events after it, no snapshot, then live ones", async () => {
    const first = streamWithResume(s, "long answer");
    const run = await ctl.nextRun();
    await run.ctx.working("starting");
    for (let k = 0; k < 3; k++) await run.ctx.artifact({ artifactId: "out", name: `chunk-${k}`, parts: [`p${k}`] }, { append: k > 0 });
    await first.waitFor(5);
    const id = taskIdOf(first);
    await disconnect(first);
    const seen = first.events.slice(0, 5);
    // While nobody listens: more chunks.
    for (let k = 3; k < 6; k++) await run.ctx.artifact({ artifactId: "out", name: `chunk-${k}`, parts: [`p${k}`] }, { append: true });
    const resumed = resume(s, id, cursorOf(seen[seen.length - 1]!));
    await resumed.waitFor(3);
    // Live events after the resume.
    await run.ctx.artifact({ artifactId: "out", name: "chunk-6", parts: ["p6"] }, { append: true, lastChunk: true });
    await run.ctx.complete("done");
    run.finish();
    expect((await resumed.ended).code).toBe(grpc.status.OK);
    expect(resumed.cases()).not.toContain("task");
    expect([...seen, ...resumed.events].map(describeEvent)).toEqual([
      `task:${TaskState.TASK_STATE_SUBMITTED}`,
      `status:${TaskState.TASK_STATE_WORKING}:starting`,
      ...[0, 1, 2, 3, 4, 5, 6].map((k) => `artifact:out:chunk-${k}`),
      `status:${TaskState.TASK_STATE_COMPLETED}:done`,
    ]);
    // Every part exactly once, in order.
    const parts = [...seen, ...resumed.events].flatMap((e) =>
      e.payload?.$case === "artifactUpdate" ? e.payload.value.artifact!.parts.map((p) => (p.content?.$case === "text" ? p.content.value : "")) : [],
    );
    expect(parts).toEqual(["p0", "p1", "p2", "p3", "p4", "p5", "p6"]);
  });

  test("A-33: resuming from the cursor of the last event of a finished task delivers the rest only if there is one", async () => {
    const reader = streamWithResume(s, "short");
    const run = await ctl.nextRun();
    await run.ctx.working();
    await run.ctx.complete("fin");
    run.finish();
    await reader.ended;
    const id = taskIdOf(reader);
    const fromWorking = resume(s, id, cursorOf(reader.events[1]!));
    expect((await fromWorking.ended).code).toBe(grpc.status.OK);
    expect(fromWorking.events.map(describeEvent)).toEqual([`status:${TaskState.TASK_STATE_COMPLETED}:fin`]);
    const fromLast = resume(s, id, cursorOf(reader.events[2]!));
    const end = await fromLast.ended;
    expect(end.code).toBe(grpc.status.FAILED_PRECONDITION);
    expect(end.reason).toBe("UNSUPPORTED_OPERATION");
  });

  test("A-31/A-33: a cursor of a task in another scope (tenant) is TASK_NOT_FOUND; a cursor that is not ours, or of another task, is INVALID_ARGUMENT", async () => {
    const reader = streamWithResume(s, "mine");
    const run = await ctl.nextRun();
    await run.ctx.working();
    await reader.waitFor(2);
    const id = taskIdOf(reader);
    const other = await resume(s, id, cursorOf(reader.events[1]!), "another-tenant").ended;
    expect(other.code).toBe(grpc.status.NOT_FOUND);
    expect(other.reason).toBe("TASK_NOT_FOUND");
    const forged = await resume(s, id, "bm90LWEtY3Vyc29y").ended;
    expect(forged.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(forged.details).toContain(RESUME_CURSOR_HEADER);
    const wrongTask = await resume(s, "some-other-task", cursorOf(reader.events[1]!)).ended;
    expect(wrongTask.code).toBe(grpc.status.INVALID_ARGUMENT);
    await run.ctx.complete();
    run.finish();
    await reader.ended;
  });
});

describe("expiry", () => {
  let s: A2ATestServer;
  const ctl = controlledAgent();
  beforeAll(async () => {
    s = await startA2AServer({ agent: ctl.agent, env: { A2A_STREAM_RESUME_EVENTS: "4", A2A_STREAM_RESUME_RETENTION: "300ms", A2A_STREAM_HEARTBEAT: "off" } });
  });
  afterAll(() => s.close());

  test("A-33: a cursor older than the events kept (memory cap) is FAILED_PRECONDITION / STREAM_CURSOR_EXPIRED; a recent one still resumes", async () => {
    const reader = streamWithResume(s, "many");
    const run = await ctl.nextRun();
    await run.ctx.working();
    for (let k = 0; k < 6; k++) await run.ctx.artifact({ artifactId: "o", name: `c${k}`, parts: [`${k}`] }, { append: k > 0 });
    await reader.waitFor(8);
    const id = taskIdOf(reader);
    const old = await resume(s, id, cursorOf(reader.events[1]!)).ended;
    expect(old.code).toBe(grpc.status.FAILED_PRECONDITION);
    expect(old.reason).toBe("STREAM_CURSOR_EXPIRED");
    const recent = resume(s, id, cursorOf(reader.events[5]!));
    await recent.waitFor(2);
    expect(recent.events.slice(0, 2).map(describeEvent)).toEqual(["artifact:o:c4", "artifact:o:c5"]);
    await run.ctx.complete();
    run.finish();
    await recent.ended;
    await reader.ended;
  });

  test("A-33: a cursor older than the retention window is STREAM_CURSOR_EXPIRED", async () => {
    const reader = streamWithResume(s, "slow");
    const run = await ctl.nextRun();
    await run.ctx.working();
    await reader.waitFor(2);
    await new Promise((resolve) => setTimeout(resolve, 400));
    await run.ctx.artifact({ artifactId: "o", name: "late", parts: ["z"] });
    await reader.waitFor(3);
    const expired = await resume(s, taskIdOf(reader), cursorOf(reader.events[0]!)).ended;
    expect(expired.code).toBe(grpc.status.FAILED_PRECONDITION);
    expect(expired.reason).toBe("STREAM_CURSOR_EXPIRED");
    await run.ctx.complete();
    run.finish();
    await reader.ended;
  });
});

describe("SQLite store", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "a2a-resume-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("A-33: resume after a server restart on SQLite: the events written after the disconnect, read from the event log, then the stream closes by A-2", async () => {
    const ctl = controlledAgent();
    const env = { A2A_STORE: "sqlite", A2A_DATA_DIR: dir, A2A_STREAM_HEARTBEAT: "off" };
    const s1 = await startA2AServer({ agent: ctl.agent, env });
    const first = streamWithResume(s1, "durable");
    const run = await ctl.nextRun();
    await run.ctx.working("on it");
    await run.ctx.artifact({ artifactId: "r", name: "r0", parts: ["zero"] });
    await first.waitFor(3);
    const id = taskIdOf(first);
    const cursor = cursorOf(first.events[2]!);
    await disconnect(first);
    await run.ctx.artifact({ artifactId: "r", name: "r1", parts: ["one"] }, { append: true });
    await run.ctx.artifact({ artifactId: "r", name: "r2", parts: ["two"] }, { append: true, lastChunk: true });
    await run.ctx.requireInput("which format?");
    run.finish();
    await s1.close();

    const s2 = await startA2AServer({ agent: controlledAgent().agent, env });
    try {
      const resumed = resume(s2, id, cursor);
      expect((await resumed.ended).code).toBe(grpc.status.OK);
      expect(resumed.events.map(describeEvent)).toEqual(["artifact:r:r1", "artifact:r:r2", `status:${TaskState.TASK_STATE_INPUT_REQUIRED}:which format?`]);
      const last = resumed.events[2]!;
      expect(last.payload?.$case === "statusUpdate" && last.payload.value.taskId).toBe(id);
      // The cursor of the last event: nothing missed, the task waits for input: the stream stays open.
      const idle = resume(s2, id, cursorOf(last));
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(idle.end).toBeUndefined();
      expect(idle.received).toBe(0);
      await disconnect(idle);
    } finally {
      await s2.close();
    }
  });
});

describe("PostgreSQL store", () => {
  test("A-33: on PostgreSQL the card declares the extension (the event table is the log) unless retention is off; a dropped stream resumes", async () => {
    const db = await createTestDatabase("resume");
    const ctl = controlledAgent();
    const env = { A2A_STORE: "postgres", A2A_DATABASE_URL: db.url, A2A_DATABASE_POOL_SIZE: "2", A2A_STREAM_HEARTBEAT: "off" };
    const s = await startA2AServer({ agent: ctl.agent, env });
    try {
      expect(s.app.card.capabilities?.extensions.map((e) => e.uri)).toContain(STREAM_RESUME_EXTENSION);
      const first = streamWithResume(s, "pg");
      const run = await ctl.nextRun();
      await run.ctx.working("on it");
      await first.waitFor(2);
      await disconnect(first);
      await run.ctx.artifact({ artifactId: "p", name: "p0", parts: ["zero"] });
      await run.ctx.complete("done");
      run.finish();
      const resumed = resume(s, taskIdOf(first), cursorOf(first.events[1]!));
      expect((await resumed.ended).code).toBe(grpc.status.OK);
      expect(resumed.events.map(describeEvent)).toEqual(["artifact:p:p0", `status:${TaskState.TASK_STATE_COMPLETED}:done`]);
    } finally {
      await s.close();
    }
    const off = await startA2AServer({ agent: ctl.agent, env: { ...env, A2A_STREAM_RESUME_RETENTION: "off" } });
    try {
      expect(off.app.card.capabilities?.extensions.map((e) => e.uri) ?? []).not.toContain(STREAM_RESUME_EXTENSION);
    } finally {
      await off.close();
      await db.drop();
    }
  });
});

describe("heartbeats", () => {
  let s: A2ATestServer;
  const ctl = controlledAgent();
  beforeAll(async () => {
    s = await startA2AServer({ agent: ctl.agent, env: { A2A_STREAM_HEARTBEAT: "100ms" } });
  });
  afterAll(() => s.close());

  test("A-33: a silent stream with the extension gets heartbeats (same status, marked, no cursor, no message); one without the extension gets none", async () => {
    const withExt = streamWithResume(s, "idle");
    const run = await ctl.nextRun();
    await run.ctx.working("thinking");
    await withExt.waitFor(2);
    const id = taskIdOf(withExt);
    const plain = new StreamReader(s.client.subscribeToTask({ tenant: "", id }, s.metadata()));
    await plain.waitFor(1);
    await withExt.waitFor(4, 5000);
    const beats = withExt.events.slice(2, 4);
    for (const beat of beats) {
      expect(isHeartbeat(beat)).toBe(true);
      expect(beat.payload?.$case).toBe("statusUpdate");
      if (beat.payload?.$case !== "statusUpdate") continue;
      expect(beat.payload.value.taskId).toBe(id);
      expect(beat.payload.value.status?.state).toBe(TaskState.TASK_STATE_WORKING);
      expect(beat.payload.value.status?.message).toBeUndefined();
      expect((beat.payload.value.metadata as Record<string, { cursor?: string }>)[STREAM_RESUME_EXTENSION]!.cursor).toBeUndefined();
    }
    await run.ctx.complete("ok");
    run.finish();
    await withExt.ended;
    await plain.ended;
    expect(plain.events.map(describeEvent)).toEqual([`task:${TaskState.TASK_STATE_WORKING}`, `status:${TaskState.TASK_STATE_COMPLETED}:ok`]);
    expect(describeEvent(withExt.events[withExt.events.length - 1]!)).toBe(`status:${TaskState.TASK_STATE_COMPLETED}:ok`);
  });
});
