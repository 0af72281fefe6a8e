import { TaskState, type Message, type Task } from "../../gen/ts-proto/lf/a2a/v1/a2a.js";
import { RESUMABLE_AGENT, a2aMetadata, fetchTask, killAll, send, startService, subscribe, taskOf, tempDataDir } from "./service-process.js";

/**
 * Issue 5 §4, restart semantics, on the real process with the default SQLite store:
 * SIGKILL, start again on the same data directory, and look at what the tasks became.
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

test("ISSUE5-RESTART-FAIL: a task WORKING at SIGKILL is FAILED after the restart, with a status message that says the server restarted", async () => {
  const first = await startService(data.dir);
  const acked = taskOf(await send(first.client, "hang", { returnImmediately: true }));
  await first.line(new RegExp(`agent: hang ${acked.id} working`), "stderr");
  expect((await fetchTask(first.client, acked.id)).status!.state).toBe(TaskState.TASK_STATE_WORKING);
  await first.kill();

  const second = await startService(data.dir);
  const settled = JSON.parse(await second.line(/settled tasks left running by the previous process/)) as Record<string, unknown>;
  expect(settled).toMatchObject({ failed: 1, resumed: 0 });
  const after = await fetchTask(second.client, acked.id);
  expect(after.status!.state).toBe(TaskState.TASK_STATE_FAILED);
  expect(textOf(after.status!.message)).toMatch(/server restarted/);
  // The status message is also the last history entry; the user's message is still first.
  expect(after.history[0]!.messageId).toBe(acked.history[0]!.messageId);
  expect(after.history.at(-1)!.messageId).toBe(after.status!.message!.messageId);
  expect(after.contextId).toBe(acked.contextId);
});

test("ISSUE5-RESTART-RESUME: with an agent that declares resume, a task WORKING at SIGKILL is resumed after the restart and completes", async () => {
  const first = await startService(data.dir, { A2A_AGENT_MODULE: RESUMABLE_AGENT });
  const acked = taskOf(await send(first.client, "hang", { returnImmediately: true }));
  await first.line(new RegExp(`agent: hang ${acked.id} working`), "stderr");
  await first.kill();

  const second = await startService(data.dir, { A2A_AGENT_MODULE: RESUMABLE_AGENT });
  await second.line(new RegExp(`agent: resumed ${acked.id} completed`), "stderr");
  const settled = JSON.parse(await second.line(/settled tasks left running by the previous process/)) as Record<string, unknown>;
  expect(settled).toMatchObject({ failed: 0, resumed: 1 });
  const after = await fetchTask(second.client, acked.id);
  expect(after.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
  expect(textOf(after.status!.message)).toBe("resumed after the restart");
  expect(after.artifacts.map((a) => a.artifactId)).toEqual(["resumed"]);
  // Never failed on the way: no status message in the history says so.
  expect(after.history.map(textOf)).not.toContainEqual(expect.stringMatching(/restarted|shut down/));
});

test("ISSUE5-RESTART-RESUME-CANCEL: CancelTask on a task resumed after the restart stops the resumed agent and ends the task CANCELED", async () => {
  const first = await startService(data.dir, { A2A_AGENT_MODULE: RESUMABLE_AGENT });
  const acked = taskOf(await send(first.client, "hang forever", { returnImmediately: true }));
  await first.line(new RegExp(`agent: hang ${acked.id} working`), "stderr");
  await first.kill();

  const second = await startService(data.dir, { A2A_AGENT_MODULE: RESUMABLE_AGENT });
  await second.line(new RegExp(`agent: resumed ${acked.id} working`), "stderr");
  const canceled = await new Promise<Task>((resolve, reject) =>
    second.client.cancelTask({ tenant: "", id: acked.id }, a2aMetadata(), (error, task) => (error ? reject(error) : resolve(task!))),
  );
  expect(canceled.status!.state).toBe(TaskState.TASK_STATE_CANCELED);
  // The resumed agent saw its signal abort; its fail() afterwards is refused, so the task stays CANCELED.
  await second.line(new RegExp(`agent: resumed ${acked.id} stopped`), "stderr");
  expect((await fetchTask(second.client, acked.id)).status!.state).toBe(TaskState.TASK_STATE_CANCELED);
});

test("ISSUE5-RESTART-INTERRUPTED / A-19: an INPUT_REQUIRED task survives SIGKILL unchanged; SubscribeToTask gives the snapshot and stays open, a follow-up completes it and the stream closes", async () => {
  const first = await startService(data.dir);
  const acked = taskOf(await send(first.client, "ask"));
  expect(acked.status!.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
  await first.kill();

  const second = await startService(data.dir);
  const stored = await fetchTask(second.client, acked.id);
  expect(stored).toEqual(acked);

  const stream = subscribe(second.client, acked.id);
  await stream.received(1);
  expect(stream.events[0]!.payload).toEqual({ $case: "task", value: acked });
  // Still open while the task waits for input: a round trip later nothing else came and it has not ended.
  await fetchTask(second.client, acked.id);
  expect(stream.ended).toBe(false);
  expect(stream.events).toHaveLength(1);

  const finished = taskOf(await send(second.client, "finish", { task: acked }));
  expect(finished.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
  expect(finished.artifacts.map((a) => a.artifactId)).toEqual(["answer"]);
  expect(finished.history.slice(0, acked.history.length)).toEqual(acked.history);

  expect(await stream.end).toBeUndefined();
  const last = stream.events.at(-1)!.payload;
  expect(last?.$case === "statusUpdate" && last.value.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
  expect(stream.events.map((e) => e.payload?.$case)).toContain("artifactUpdate");
  expect(await fetchTask(second.client, acked.id)).toEqual(finished);
});
