import { TaskState, type Message, type StreamResponse } from "../../gen/ts-proto/lf/a2a/v1/a2a.js";
import { a2aMetadata, fetchTask, killAll, sendRequest, startService, subscribe, tempDataDir } from "./service-process.js";

/**
 * Issue 33 finding 15, on the real process with the default SQLite store: SIGTERM stops new
 * runs, gives the runs in flight the grace period, then fails the runs still going with a status
 * that says the server shut down; the streams watching them get that status and end (OK), and
 * the task is FAILED when the server starts again, not WORKING until the restart rule finds it.
 */
let data: ReturnType<typeof tempDataDir>;
beforeEach(() => {
  data = tempDataDir();
});
afterEach(async () => {
  await killAll();
  data.remove();
});

const textOf = (message: Message | undefined) => message?.parts.map((p) => (p.content?.$case === "text" ? p.content.value : "")).join("") ?? "";
const lastStatus = (events: StreamResponse[]) => {
  const last = events.at(-1)?.payload;
  return last?.$case === "statusUpdate" ? last.value.status : undefined;
};
const taskIdOf = (events: StreamResponse[]) => {
  const first = events[0]?.payload;
  return first?.$case === "task" ? first.value.id : first?.$case === "statusUpdate" ? first.value.taskId : "";
};

test("ISSUE33-15: SIGTERM with an agent still working past the grace: the stream gets FAILED 'the server shut down' and ends; after a restart the task is FAILED", async () => {
  const graceMs = 1000;
  const first = await startService(data.dir, { A2A_SHUTDOWN_GRACE_MS: String(graceMs) });
  const stream = subscribe(first.client, "", { call: first.client.sendStreamingMessage(sendRequest("slow 60000"), a2aMetadata()) });
  await stream.received(3); // the task, WORKING, the first artifact chunk
  const signalled = Date.now();
  first.proc.kill("SIGTERM");

  expect(await stream.end).toBeUndefined(); // ended OK, not UNAVAILABLE
  const status = lastStatus(stream.events);
  expect(status?.state).toBe(TaskState.TASK_STATE_FAILED);
  expect(textOf(status?.message)).toMatch(/the server shut down/);
  expect(Date.now() - signalled).toBeGreaterThanOrEqual(graceMs - 50); // the agent had its grace
  expect(await first.exited).toBe(0);

  const second = await startService(data.dir);
  const after = await fetchTask(second.client, taskIdOf(stream.events));
  expect(after.status?.state).toBe(TaskState.TASK_STATE_FAILED);
  expect(textOf(after.status?.message)).toMatch(/the server shut down/);
  // Nothing was left for the restart rule.
  expect(second.stdout.some((l) => l.includes("settled tasks left running by the previous process"))).toBe(false);
});

test("ISSUE33-15: SIGTERM while an agent finishes within the grace: the agent completes, its stream gets COMPLETED and ends", async () => {
  const first = await startService(data.dir, { A2A_SHUTDOWN_GRACE_MS: "10000" });
  const stream = subscribe(first.client, "", { call: first.client.sendStreamingMessage(sendRequest("slow 1500"), a2aMetadata()) });
  await stream.received(3);
  first.proc.kill("SIGTERM");

  expect(await stream.end).toBeUndefined();
  expect(lastStatus(stream.events)?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  const chunks = stream.events.flatMap((e) => (e.payload?.$case === "artifactUpdate" ? [textOf(e.payload.value.artifact as unknown as Message)] : []));
  expect(chunks).toEqual(["begun ", "ended"]);
  expect(await first.exited).toBe(0);
});

test("ISSUE33-15: new runs are refused from the SIGTERM on, while the grace runs", async () => {
  const first = await startService(data.dir, { A2A_SHUTDOWN_GRACE_MS: "3000" });
  const stream = subscribe(first.client, "", { call: first.client.sendStreamingMessage(sendRequest("slow 60000"), a2aMetadata()) });
  await stream.received(3);
  first.proc.kill("SIGTERM");
  await first.line(/"msg":"shutting down"/);
  const late = subscribe(first.client, "", { call: first.client.sendStreamingMessage(sendRequest("done"), a2aMetadata()) });
  const refused = await late.end;
  expect(refused?.code).toBe(14); // UNAVAILABLE: try another instance
  expect(late.events).toEqual([]);
  expect(stream.ended).toBe(false); // the run in flight still has its grace
  await stream.end;
  expect(await first.exited).toBe(0);
});
