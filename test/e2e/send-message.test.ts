import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import { unary } from "../foundation/helpers.js";
import { Role, TaskState } from "../../gen/ts-proto/lf/a2a/v1/a2a.js";

let s: A2ATestServer;
beforeAll(async () => {
  s = await startA2AServer();
});
afterAll(() => s.close());

const userMessage = (text: string, extra: Record<string, unknown> = {}) => ({
  messageId: `m-${Math.random()}`,
  contextId: "",
  taskId: "",
  role: Role.ROLE_USER,
  parts: [{ content: { $case: "text" as const, value: text }, filename: "", mediaType: "" }],
  extensions: [],
  referenceTaskIds: [],
  ...extra,
});

test("R-SEND-1: a message-only answer comes back as the message payload with a generated context id (R-CTX-1)", async () => {
  const { response, error } = await unary(s.client, s.client.sendMessage, { tenant: "", message: userMessage("hello") }, s.metadata());
  expect(error).toBeUndefined();
  expect(response!.payload?.$case).toBe("message");
  const message = response!.payload!.$case === "message" ? response!.payload!.value : undefined;
  expect(message!.role).toBe(Role.ROLE_AGENT);
  expect(message!.contextId).not.toBe("");
});

test("R-SEND-2: a blocking send waits for the task to settle and returns every artifact", async () => {
  const { response, error } = await unary(s.client, s.client.sendMessage, { tenant: "", message: userMessage("story") }, s.metadata());
  expect(error).toBeUndefined();
  const task = response!.payload!.$case === "task" ? response!.payload!.value : undefined;
  expect(task!.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
  expect(task!.artifacts).toHaveLength(1);
  expect(task!.artifacts[0]!.parts.length).toBeGreaterThan(1);
});
