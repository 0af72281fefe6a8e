/**
 * Issue 14 through the official @a2a-js/sdk client: data parts from plain JSON arrive as
 * the same JSON, a task that settles at once streams as task then status, and an agent's
 * refusal before a task exists becomes the SDK's own error class for the reason.
 */
import type { JsonObject } from "@bufbuild/protobuf";
import { TaskState, type Message, type StreamResponse, type Task } from "@a2a-js/sdk";
import { RequestMalformedError, UnsupportedOperationError } from "@a2a-js/sdk/errors";
import { GRPC_STATUS_CODE } from "@a2a-js/sdk/errors/grpc";
import { InvalidParamsError, UnsupportedOperationError as OurUnsupportedOperation, dataPart, filePart } from "../../src/index.js";
import { collect, kind, rejection, sendRequest, startSdkSetup, type SdkSetup } from "./sdk-client.js";

let s: SdkSetup;
beforeAll(async () => {
  s = await startSdkSetup();
});
afterAll(() => s.close());

const NESTED: JsonObject = {
  name: "order",
  total: 12.5,
  paid: false,
  note: null,
  lines: [
    { sku: "a", qty: 1 },
    { sku: "b", qty: 2, tags: ["x", "y"] },
  ],
  empty: {},
  none: [],
};
/** The status state of a task or status-update event. */
const stateOf = (event: StreamResponse | undefined) => {
  const p = event?.payload;
  return p?.$case === "task" || p?.$case === "statusUpdate" ? p.value.status?.state : undefined;
};

const KINDS: Array<[string, unknown]> = [
  ["an object", { key: "value", count: 42 }],
  ["an array", [1, "2", true, null]],
  ["a string", "s"],
  ["a number", -0.5],
  ["a boolean", true],
  ["null", null],
  ["nested JSON", NESTED],
];

describe("A-27: data parts through the SDK client", () => {
  test.each(KINDS)("A-27: %s as a data part in a reply arrives as the same JSON", async (name, json) => {
    s.scripts.set(`data-${name}`, (ctx) => ctx.reply(["here", dataPart(json as never)]));
    const reply = (await s.client.sendMessage(sendRequest(`data-${name}`))) as Message;
    expect(reply.parts.map((p) => p.content)).toEqual([
      { $case: "text", value: "here" },
      { $case: "data", value: json },
    ]);
  });

  test("A-27, A-26: a stream carries data parts in an artifact and in the settling status", async () => {
    s.scripts.set("data-stream", async (ctx) => {
      await ctx.artifact({ name: "order", parts: [dataPart(NESTED), filePart({ bytes: Buffer.from("abc"), filename: "a.txt", mediaType: "text/plain" })] });
      await ctx.complete([dataPart({ done: true })]);
    });
    const events = await collect(s.client.sendMessageStream(sendRequest("data-stream")));
    expect(events.map(kind)).toEqual(["task", "artifactUpdate", "statusUpdate"]);
    const second = events[1]?.payload;
    const artifact = second?.$case === "artifactUpdate" ? second.value.artifact : undefined;
    expect(artifact!.parts[0]!.content).toEqual({ $case: "data", value: NESTED });
    expect(artifact!.parts[1]).toMatchObject({ filename: "a.txt", mediaType: "text/plain" });
    expect(Buffer.from(artifact!.parts[1]!.content!.value as Uint8Array).toString()).toBe("abc");
    const third = events[2]?.payload;
    const status = third?.$case === "statusUpdate" ? third.value.status : undefined;
    expect(status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(status!.message!.parts[0]!.content).toEqual({ $case: "data", value: { done: true } });
  });
});

describe("A-26: a task that settles at once, through the SDK client", () => {
  test("A-26: complete() first: the stream is the task (SUBMITTED), then COMPLETED; blocking gets the COMPLETED task", async () => {
    s.scripts.set("at-once", (ctx) => ctx.complete("answered at once"));
    const events = await collect(s.client.sendMessageStream(sendRequest("at-once")));
    expect(events.map(kind)).toEqual(["task", "statusUpdate"]);
    expect(events.map(stateOf)).toEqual([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_COMPLETED]);
    const task = (await s.client.sendMessage(sendRequest("at-once"))) as Task;
    expect(task.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  test("A-26: requireInput() first: INPUT_REQUIRED, and the SDK's follow-up completes the task", async () => {
    s.scripts.set("ask-first", (ctx) => ctx.requireInput("which one?"));
    s.scripts.set("this one", (ctx) => ctx.complete("ok"));
    const task = (await s.client.sendMessage(sendRequest("ask-first"))) as Task;
    expect(task.status!.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const done = (await s.client.sendMessage(sendRequest("this one", { taskId: task.id, contextId: task.contextId }))) as Task;
    expect(done.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });
});

describe("issue 14: refusals through the SDK client", () => {
  test("InvalidParamsError before any answer is the SDK's RequestMalformedError (INVALID_ARGUMENT, reason INVALID_PARAMS)", async () => {
    s.scripts.set("refuse-params", async () => {
      throw new InvalidParamsError("say what to summarize", { field: "message.parts[0].text" });
    });
    const error = await rejection(s.client.sendMessage(sendRequest("refuse-params")));
    expect(error).toBeInstanceOf(RequestMalformedError);
    expect(error["reason"]).toBe("INVALID_PARAMS");
    expect(error["status"]).toBe(GRPC_STATUS_CODE.INVALID_ARGUMENT);
    expect(error["metadata"]).toEqual(expect.objectContaining({ field: "message.parts[0].text" }));
    expect(error.message).toContain("say what to summarize");
  });

  test("UnsupportedOperationError before any answer, on a stream, is the SDK's UnsupportedOperationError", async () => {
    s.scripts.set("refuse-op", async () => {
      throw new OurUnsupportedOperation("streams are not for this skill");
    });
    const error = await rejection(collect(s.client.sendMessageStream(sendRequest("refuse-op"))));
    expect(error).toBeInstanceOf(UnsupportedOperationError);
    expect(error["status"]).toBe(GRPC_STATUS_CODE.FAILED_PRECONDITION);
    const listed = await s.client.listTasks({
      tenant: "",
      contextId: "",
      status: 0,
      pageSize: 100,
      pageToken: "",
      historyLength: undefined,
      statusTimestampAfter: undefined,
      includeArtifacts: false,
    } as never);
    expect(listed.tasks.filter((t) => t.history.some((m) => m.parts.some((p) => p.content?.$case === "text" && p.content.value === "refuse-op")))).toEqual([]);
  });
});
