/**
 * Issue 21: the official @a2a-js/sdk client's push config calls against the real service
 * (R-PUSH-2..5), and an inline config it sends getting its webhooks (R-SEND-7, A-10), on a
 * receiver on loopback.
 */
import { TaskState, type Message, type Task } from "@a2a-js/sdk";
import { TaskNotFoundError } from "@a2a-js/sdk/errors";
import { kindOf, startReceiver, type Receiver } from "../push/receiver.js";
import { rejection, sendRequest, startSdkSetup, type SdkSetup } from "./sdk-client.js";

let s: SdkSetup;
let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
  s = await startSdkSetup({ env: { A2A_PUSH_ALLOW_HOSTS: "127.0.0.1", A2A_PUSH_ALLOW_HTTP: "true" } });
});
afterAll(async () => {
  await s.close();
  await receiver.close();
});

const asTask = (result: Message | Task): Task => {
  if ("messageId" in result) throw new Error("expected a task");
  return result;
};

test("R-CAP-1: the card the SDK discovered declares push notifications", async () => {
  const card = await s.client.getAgentCard();
  expect(card.capabilities?.pushNotifications).toBe(true);
});

test("R-PUSH-2..5: the SDK creates, gets, lists and deletes a task's push config", async () => {
  const task = asTask(await s.client.sendMessage(sendRequest("story")));
  const created = await s.client.createTaskPushNotificationConfig({
    tenant: "",
    id: "",
    taskId: task.id,
    url: "https://hooks.example/sdk",
    token: "sdk-token",
    authentication: { scheme: "Bearer", credentials: "sdk-cred" },
  });
  expect(created.id).not.toBe("");
  expect(created).toMatchObject({ taskId: task.id, url: "https://hooks.example/sdk", token: "sdk-token" });
  const got = await s.client.getTaskPushNotificationConfig({ tenant: "", taskId: task.id, id: created.id });
  expect(got).toEqual(created);
  const list = await s.client.listTaskPushNotificationConfig({ tenant: "", taskId: task.id, pageSize: 0, pageToken: "" });
  expect(list.configs.map((c) => c.id)).toEqual([created.id]);
  await s.client.deleteTaskPushNotificationConfig({ tenant: "", taskId: task.id, id: created.id });
  await s.client.deleteTaskPushNotificationConfig({ tenant: "", taskId: task.id, id: created.id }); // idempotent
  const error = await rejection(s.client.getTaskPushNotificationConfig({ tenant: "", taskId: task.id, id: created.id }));
  expect(error).toBeInstanceOf(TaskNotFoundError);
});

test("A-7: the SDK sees TaskNotFoundError for a push config call on a missing task", async () => {
  const error = await rejection(s.client.listTaskPushNotificationConfig({ tenant: "", taskId: "no-such-task", pageSize: 0, pageToken: "" }));
  expect(error).toBeInstanceOf(TaskNotFoundError);
});

test("R-SEND-7 / A-10: an inline config the SDK sends gets the snapshot, then every event, ending COMPLETED", async () => {
  const request = sendRequest("story");
  request.configuration!.taskPushNotificationConfig = { tenant: "", id: "", taskId: "", url: receiver.url("/sdk"), token: "", authentication: undefined };
  const task = asTask(await s.client.sendMessage(request));
  expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  const completed = (all: typeof receiver.requests) =>
    all.filter((r) => r.path === "/sdk" && JSON.stringify(r.json.statusUpdate ?? {}).includes("TASK_STATE_COMPLETED")).length;
  await receiver.waitFor(1, 10_000, completed);
  const got = receiver.requests.filter((r) => r.path === "/sdk");
  expect(got[0] && kindOf(got[0])).toBe("task");
  expect(got.length).toBeGreaterThan(2);
  const last = got[got.length - 1]!.json.statusUpdate as { status: { state: string } };
  expect(last.status.state).toBe("TASK_STATE_COMPLETED");
});
