/**
 * The v1.0 messages out as the v0.3 JSON-RPC model (src/v03/json/v1-to-v03-json.ts), field by
 * field through the tables of R-V03-22: kinds (R-V03-20), kebab-case states and bare objects
 * (R-V03-21), `final` (R-V03-32), data parts (R-V03-36), push configs (R-V03-35), and the
 * one-way losses of R-V03-37.
 */
import { create, fromJson } from "@bufbuild/protobuf";
import { timestampFromDate, ValueSchema } from "@bufbuild/protobuf/wkt";
import {
  ArtifactSchema,
  MessageSchema,
  PartSchema,
  Role,
  SendMessageResponseSchema,
  StreamResponseSchema,
  TaskArtifactUpdateEventSchema,
  TaskPushNotificationConfigSchema,
  TaskSchema,
  TaskState,
  TaskStatusUpdateEventSchema,
} from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import {
  endsV03Stream,
  finalStatusUpdateToV03,
  partToV03,
  pushConfigToV03,
  sendMessageResultToV03,
  stateToV03,
  streamEventToV03,
  taskToV03,
} from "../../src/v03/json/v1-to-v03-json.js";
import { partFromV03 } from "../../src/v03/json/v03-json-to-v1.js";

const AT = new Date("2026-12-07T01:02:03.456Z");
const textPart = (text: string) => create(PartSchema, { content: { case: "text", value: text } });
const message = create(MessageSchema, {
  messageId: "m",
  contextId: "c",
  taskId: "t",
  role: Role.AGENT,
  parts: [textPart("hi")],
  referenceTaskIds: ["t0"],
  extensions: ["urn:x"],
  metadata: { k: 1 },
});
const task = create(TaskSchema, {
  id: "t",
  contextId: "c",
  status: { state: TaskState.INPUT_REQUIRED, message, timestamp: timestampFromDate(AT) },
  artifacts: [create(ArtifactSchema, { artifactId: "a", name: "n", description: "d", parts: [textPart("out")], metadata: { am: 1 }, extensions: ["urn:y"] })],
  history: [create(MessageSchema, { messageId: "u", role: Role.USER, parts: [textPart("q")] })],
  metadata: { tm: true },
});

describe("R-V03-22 TaskState / Role", () => {
  test.each([
    [TaskState.UNSPECIFIED, "unknown"],
    [TaskState.SUBMITTED, "submitted"],
    [TaskState.WORKING, "working"],
    [TaskState.COMPLETED, "completed"],
    [TaskState.FAILED, "failed"],
    [TaskState.CANCELED, "canceled"],
    [TaskState.INPUT_REQUIRED, "input-required"],
    [TaskState.REJECTED, "rejected"],
    [TaskState.AUTH_REQUIRED, "auth-required"],
  ])("state %s is %s", (state, name) => {
    expect(stateToV03(state)).toBe(name);
  });
});

describe("R-V03-22 Task, TaskStatus, Message, Artifact", () => {
  test("the task is bare with kind task; status keeps state, message and a Z timestamp; artifacts and history in v0.3 form", () => {
    expect(taskToV03(task)).toEqual({
      kind: "task",
      id: "t",
      contextId: "c",
      status: {
        state: "input-required",
        message: {
          kind: "message",
          messageId: "m",
          contextId: "c",
          taskId: "t",
          role: "agent",
          parts: [{ kind: "text", text: "hi" }],
          referenceTaskIds: ["t0"],
          extensions: ["urn:x"],
          metadata: { k: 1 },
        },
        timestamp: "2026-12-07T01:02:03.456Z",
      },
      artifacts: [{ artifactId: "a", name: "n", description: "d", parts: [{ kind: "text", text: "out" }], metadata: { am: 1 }, extensions: ["urn:y"] }],
      history: [{ kind: "message", messageId: "u", role: "user", parts: [{ kind: "text", text: "q" }] }],
      metadata: { tm: true },
    });
  });

  test("R-V03-21: message/send's result is the bare Task or Message", () => {
    expect(sendMessageResultToV03(create(SendMessageResponseSchema, { payload: { case: "task", value: task } }))?.["kind"]).toBe("task");
    expect(sendMessageResultToV03(create(SendMessageResponseSchema, { payload: { case: "message", value: message } }))?.["kind"]).toBe("message");
  });
});

describe("R-V03-22 Part", () => {
  test("raw → file.bytes (standard base64, R-BIND-27) with mimeType and name", () => {
    const part = create(PartSchema, {
      content: { case: "raw", value: new Uint8Array([0xfb, 0xff]) },
      mediaType: "application/x",
      filename: "f.bin",
      metadata: { m: 1 },
    });
    expect(partToV03(part)).toEqual({ kind: "file", file: { bytes: "+/8=", mimeType: "application/x", name: "f.bin" }, metadata: { m: 1 } });
  });

  test("url → file.uri", () => {
    const part = create(PartSchema, { content: { case: "url", value: "https://e.com/a" }, mediaType: "image/png" });
    expect(partToV03(part)).toEqual({ kind: "file", file: { uri: "https://e.com/a", mimeType: "image/png" } });
  });

  test("R-V03-37: text and data parts lose mediaType and filename (one way)", () => {
    const text = create(PartSchema, { content: { case: "text", value: "x" }, mediaType: "text/markdown", filename: "x.md" });
    expect(partToV03(text)).toEqual({ kind: "text", text: "x" });
    const data = create(PartSchema, { content: { case: "data", value: fromJson(ValueSchema, { a: 1 }) }, mediaType: "application/json" });
    expect(partToV03(data)).toEqual({ kind: "data", data: { a: 1 } });
  });

  test.each([[[1, "two"]], ["text"], [3], [true], [null]])(
    "R-V03-36 (BQ-11): the non-object data %j is wrapped with data_part_compat, and unwrapped on the way back",
    (value) => {
      const part = create(PartSchema, { content: { case: "data", value: fromJson(ValueSchema, value) }, metadata: { own: "kept" } });
      const out = partToV03(part);
      expect(out).toEqual({ kind: "data", data: { value }, metadata: { own: "kept", data_part_compat: true } });
      const back = partFromV03(out, "p");
      expect(back.content.case === "data" && back.content.value).toEqual(fromJson(ValueSchema, value));
      expect(back.metadata).toEqual({ own: "kept" });
    },
  );
});

describe("R-V03-22, R-V03-32: stream events", () => {
  const status = (state: TaskState) => create(TaskStatusUpdateEventSchema, { taskId: "t", contextId: "c", status: { state }, metadata: { e: 1 } });

  test.each([
    [TaskState.WORKING, false],
    [TaskState.AUTH_REQUIRED, false],
    [TaskState.INPUT_REQUIRED, true],
    [TaskState.COMPLETED, true],
    [TaskState.FAILED, true],
    [TaskState.CANCELED, true],
    [TaskState.REJECTED, true],
  ])("a status update in state %s has final %s", (state, final) => {
    const event = streamEventToV03(create(StreamResponseSchema, { payload: { case: "statusUpdate", value: status(state) } }));
    expect(event).toEqual({ kind: "status-update", taskId: "t", contextId: "c", status: { state: stateToV03(state) }, final, metadata: { e: 1 } });
    expect(endsV03Stream(state)).toBe(final);
  });

  test("an artifact update is bare with kind artifact-update, append and lastChunk", () => {
    const value = create(TaskArtifactUpdateEventSchema, {
      taskId: "t",
      contextId: "c",
      artifact: { artifactId: "a", parts: [textPart("x")] },
      append: true,
      lastChunk: true,
    });
    expect(streamEventToV03(create(StreamResponseSchema, { payload: { case: "artifactUpdate", value } }))).toEqual({
      kind: "artifact-update",
      taskId: "t",
      contextId: "c",
      artifact: { artifactId: "a", parts: [{ kind: "text", text: "x" }] },
      append: true,
      lastChunk: true,
    });
  });

  test("BQ-18, BQ-19: the final status update made from a settled task", () => {
    expect(finalStatusUpdateToV03(task)).toEqual({
      kind: "status-update",
      taskId: "t",
      contextId: "c",
      status: expect.objectContaining({ state: "input-required", timestamp: "2026-12-07T01:02:03.456Z" }),
      final: true,
    });
  });
});

describe("R-V03-22, R-V03-35: push configs", () => {
  test("taskId outside, the config nested, scheme as schemes[]; tenant not shown", () => {
    const config = create(TaskPushNotificationConfigSchema, {
      tenant: "ten",
      taskId: "t",
      id: "c",
      url: "https://h.example/",
      token: "tok",
      authentication: { scheme: "Bearer", credentials: "s" },
    });
    expect(pushConfigToV03(config)).toEqual({
      taskId: "t",
      pushNotificationConfig: { id: "c", url: "https://h.example/", token: "tok", authentication: { schemes: ["Bearer"], credentials: "s" } },
    });
    expect(pushConfigToV03(create(TaskPushNotificationConfigSchema, { taskId: "t", id: "c", url: "u" }))).toEqual({
      taskId: "t",
      pushNotificationConfig: { id: "c", url: "u" },
    });
  });
});
