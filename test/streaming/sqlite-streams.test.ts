/*
 * Streams on the SQLite store, whose writes are committed in batches at the end of an
 * event-loop turn and whose events are published only once committed (issue 5 §3): the same
 * order, completeness and closing rules as on the memory store, through a real server and client.
 */
import * as grpc from "@grpc/grpc-js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { TaskState } from "../../gen/ts-proto/lf/a2a/v1/a2a.js";
import { unary } from "../foundation/helpers.js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import { controlledAgent, describeEvent, sendRequest, streamSend, subscribe, taskIdOf } from "./support.js";

let s: A2ATestServer;
let dir: string;
const ctl = controlledAgent();
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "a2a-sqlite-streams-"));
  s = await startA2AServer({ agent: ctl.agent, env: { A2A_STORE: "sqlite", A2A_DATA_DIR: dir } });
});
afterAll(async () => {
  await s.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The version of a task as another connection sees it: what is committed. */
function committedVersion(id: string): number | undefined {
  const reader = new Database(join(dir, "tasks.sqlite"), { readonly: true });
  try {
    return reader.prepare("SELECT version FROM tasks WHERE id = ?").pluck().get(id) as number | undefined;
  } finally {
    reader.close();
  }
}

test("ISSUE5-STREAM: a streamed task arrives whole and in order, each event on disk by the time it arrives, and the stream ends OK", async () => {
  const reader = streamSend(s, sendRequest("work"));
  const run = await ctl.nextRun();
  await run.ctx.working("starting");
  await reader.waitFor(2);
  const id = taskIdOf(reader);
  expect(committedVersion(id)).toBeGreaterThanOrEqual(2); // the WORKING update the client holds is on disk
  for (let k = 0; k < 3; k++) {
    await run.ctx.artifact({ artifactId: "out", name: `chunk-${k}`, parts: [`part ${k}`] }, { append: k > 0, lastChunk: k === 2 });
    await reader.waitFor(3 + k);
    expect(committedVersion(id)).toBeGreaterThanOrEqual(3 + k);
  }
  await run.ctx.complete("all done");
  run.finish();
  expect((await reader.ended).code).toBe(grpc.status.OK);
  expect(reader.events.map(describeEvent)).toEqual([
    `task:${TaskState.TASK_STATE_SUBMITTED}`,
    `status:${TaskState.TASK_STATE_WORKING}:starting`,
    ...[0, 1, 2].map((k) => `artifact:out:chunk-${k}`),
    `status:${TaskState.TASK_STATE_COMPLETED}:all done`,
  ]);
  expect(committedVersion(id)).toBe(6);
});

test("ISSUE5-STREAM: an agent that finishes within one turn still streams every event, in order", async () => {
  const reader = streamSend(s, sendRequest("burst"));
  const run = await ctl.nextRun();
  void run.ctx.working();
  void run.ctx.artifact({ artifactId: "a", name: "answer", parts: ["4"] });
  void run.ctx.complete("done");
  run.finish();
  expect((await reader.ended).code).toBe(grpc.status.OK);
  expect(reader.events.map(describeEvent)).toEqual([
    `task:${TaskState.TASK_STATE_SUBMITTED}`,
    `status:${TaskState.TASK_STATE_WORKING}:`,
    "artifact:a:answer",
    `status:${TaskState.TASK_STATE_COMPLETED}:done`,
  ]);
});

test("ISSUE5-STREAM: SubscribeToTask on an interrupted task, then a follow-up: the snapshot, then the follow-up's events, from several subscribers alike", async () => {
  const first = streamSend(s, sendRequest("setup"));
  const run = await ctl.nextRun();
  await run.ctx.working();
  await run.ctx.requireInput("which city?");
  run.finish();
  await first.ended;
  const id = taskIdOf(first);
  const subscribers = [subscribe(s, id), subscribe(s, id)];
  for (const sub of subscribers) await sub.waitFor(1);
  const { error } = await unary(
    s.client,
    s.client.sendMessage,
    {
      tenant: "",
      message: { ...sendRequest("Paris").message!, taskId: id },
      configuration: { returnImmediately: true, acceptedOutputModes: [] },
      metadata: undefined,
    },
    s.metadata(),
  );
  expect(error).toBeUndefined();
  const followUp = await ctl.nextRun();
  await followUp.ctx.complete("sunny");
  followUp.finish();
  for (const sub of subscribers) {
    expect((await sub.ended).code).toBe(grpc.status.OK);
    expect(sub.events.map(describeEvent)).toEqual([
      `task:${TaskState.TASK_STATE_INPUT_REQUIRED}`,
      `status:${TaskState.TASK_STATE_WORKING}:`,
      `status:${TaskState.TASK_STATE_COMPLETED}:sunny`,
    ]);
  }
});
