/**
 * The v0.3 JSON-RPC model in, the v1.0 requests out (src/v03/json/v03-json-to-v1.ts), field by
 * field through the tables of R-V03-22, and the refusals of R-V03-20/23/31/35/38 with the field
 * each names. Nothing a v0.3 client sends is lost (R-V03-37).
 */
import { toJson, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { Role, type Part } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { InvalidRequestError } from "../../src/lifecycle/index.js";
import {
  cancelTaskRequestFromV03,
  deletePushConfigRequestFromV03,
  getPushConfigParamsFromV03,
  getTaskRequestFromV03,
  listPushConfigsRequestFromV03,
  messageFromV03,
  partFromV03,
  sendMessageRequestFromV03,
  setPushConfigRequestFromV03,
  subscribeRequestFromV03,
} from "../../src/v03/json/v03-json-to-v1.js";

/** The field a refusal names (BadRequest), or the test fails. */
function refusedField(read: () => unknown): string {
  try {
    read();
  } catch (error) {
    if (error instanceof InvalidRequestError) return error.violations.map((v) => v.field).join(",");
    throw error;
  }
  throw new Error("expected -32602, but the input was accepted");
}

const text = (value: string) => ({ kind: "text", text: value });
const v03Message = (extra: Record<string, JsonValue> = {}) => ({ kind: "message", messageId: "m-1", role: "user", parts: [text("hi")], ...extra });

describe("R-V03-22 Message: same fields, kind dropped", () => {
  test("messageId, contextId, taskId, role, parts, metadata, extensions, referenceTaskIds all arrive", () => {
    const message = messageFromV03(
      v03Message({ contextId: "c-1", taskId: "t-1", role: "agent", metadata: { a: 1 }, extensions: ["urn:x"], referenceTaskIds: ["t-0"] }),
      "message",
    );
    expect(message).toEqual(
      expect.objectContaining({
        messageId: "m-1",
        contextId: "c-1",
        taskId: "t-1",
        role: Role.AGENT,
        metadata: { a: 1 },
        extensions: ["urn:x"],
        referenceTaskIds: ["t-0"],
      }),
    );
    expect(message.parts[0]?.content).toEqual({ case: "text", value: "hi" });
  });

  test.each<[string, Record<string, JsonValue>, string]>([
    ["R-V03-20: a wrong kind", { kind: "task" }, "message.kind"],
    ["a role other than user/agent", { role: "ROLE_USER" }, "message.role"],
    ["parts that are not a list", { parts: "hi" }, "message.parts"],
    ["a messageId that is not a string", { messageId: 7 }, "message.messageId"],
    ["referenceTaskIds with a number", { referenceTaskIds: [1] }, "message.referenceTaskIds[0]"],
  ])("%s is -32602 naming %s", (_name, extra, field) => {
    expect(refusedField(() => messageFromV03(v03Message(extra), "message"))).toBe(field);
  });

  test("R-V03-20: a message without kind is tolerated", () => {
    const { kind: _kind, ...bare } = v03Message();
    expect(messageFromV03(bare, "message").messageId).toBe("m-1");
  });
});

describe("R-V03-22 Part: kind decides the shape", () => {
  const data = (part: Part) => (part.content.case === "data" ? toJson(ValueSchema, part.content.value) : undefined);

  test("text with metadata", () => {
    const part = partFromV03({ kind: "text", text: "hello", metadata: { k: "v" } }, "p");
    expect(part.content).toEqual({ case: "text", value: "hello" });
    expect(part.metadata).toEqual({ k: "v" });
  });

  test("file with bytes: base64 (standard or URL-safe, R-BIND-27) to raw, mimeType to mediaType, name to filename", () => {
    for (const bytes of ["+/8=", "-_8"]) {
      const part = partFromV03({ kind: "file", file: { bytes, mimeType: "application/octet-stream", name: "x.bin" }, metadata: { m: 1 } }, "p");
      expect(part.content).toEqual({ case: "raw", value: new Uint8Array([0xfb, 0xff]) });
      expect([part.mediaType, part.filename, part.metadata]).toEqual(["application/octet-stream", "x.bin", { m: 1 }]);
    }
  });

  test("file with uri to url", () => {
    const part = partFromV03({ kind: "file", file: { uri: "https://example.com/a.png", mimeType: "image/png" } }, "p");
    expect(part.content).toEqual({ case: "url", value: "https://example.com/a.png" });
    expect(part.mediaType).toBe("image/png");
  });

  test.each([
    ["data (v0.3 §9.3's example)", { data: "aGk=" }],
    ["fileWithBytes (v1.0 Appendix A.2.1's example)", { fileWithBytes: "aGk=" }],
  ])("R-V03-38: the alias %s is read as bytes", (_name, file) => {
    const part = partFromV03({ kind: "file", file: { ...file, name: "a.txt", mimeType: "text/plain" } }, "p");
    expect(part.content).toEqual({ case: "raw", value: new Uint8Array(Buffer.from("hi")) });
    expect([part.filename, part.mediaType]).toEqual(["a.txt", "text/plain"]);
  });

  test("R-V03-38: the alias fileWithUri is read as uri", () => {
    const part = partFromV03({ kind: "file", file: { fileWithUri: "https://example.com/a.png" } }, "p");
    expect(part.content).toEqual({ case: "url", value: "https://example.com/a.png" });
  });

  test("data: the object as the Value", () => {
    const part = partFromV03({ kind: "data", data: { a: [1, { b: null }] }, metadata: { m: true } }, "p");
    expect(data(part)).toEqual({ a: [1, { b: null }] });
    expect(part.metadata).toEqual({ m: true });
  });

  test("R-V03-36: a wrapped non-object ({value} + data_part_compat) is unwrapped and the flag dropped", () => {
    const part = partFromV03({ kind: "data", data: { value: [1, 2] }, metadata: { data_part_compat: true } }, "p");
    expect(data(part)).toEqual([1, 2]);
    expect(part.metadata).toBeUndefined();
    const kept = partFromV03({ kind: "data", data: { value: "s" }, metadata: { data_part_compat: true, other: 1 } }, "p");
    expect([data(kept), kept.metadata]).toEqual(["s", { other: 1 }]);
  });

  test.each<[string, JsonValue, string]>([
    ["R-V03-20: no kind", { text: "x" }, "p.kind"],
    ["R-V03-20: an unknown kind", { kind: "image", text: "x" }, "p.kind"],
    ["a text part without text", { kind: "text" }, "p.text"],
    ["R-V03-38: both bytes and uri", { kind: "file", file: { bytes: "aGk=", uri: "https://e.com/x" } }, "p.file"],
    ["R-V03-38: neither bytes nor uri", { kind: "file", file: { mimeType: "text/plain" } }, "p.file"],
    ["R-V03-38: bytes and an alias of bytes", { kind: "file", file: { bytes: "aGk=", data: "aGk=" } }, "p.file"],
    ["R-V03-38: an alias of bytes and uri", { kind: "file", file: { fileWithBytes: "aGk=", uri: "https://e.com/x" } }, "p.file"],
    ["bytes that are not base64", { kind: "file", file: { bytes: "not base64!" } }, "p.file.bytes"],
    ["an alias's bytes that are not base64", { kind: "file", file: { fileWithBytes: "not base64!" } }, "p.file.fileWithBytes"],
    ["an alias that is not a string", { kind: "file", file: { data: 7 } }, "p.file.data"],
    ["a data part without data", { kind: "data" }, "p.data"],
    ["a part that is not an object", "text", "p"],
  ])("%s is -32602 naming %s", (_name, part, field) => {
    expect(refusedField(() => partFromV03(part, "p"))).toBe(field);
  });
});

describe("R-V03-22 MessageSendParams → SendMessageRequest", () => {
  test("message, metadata and configuration: acceptedOutputModes, historyLength, pushNotificationConfig", () => {
    const request = sendMessageRequestFromV03({
      message: v03Message(),
      metadata: { trace: "x" },
      configuration: {
        acceptedOutputModes: ["text/plain"],
        historyLength: 3,
        blocking: true,
        pushNotificationConfig: { id: "c", url: "https://h.example/hook", token: "t", authentication: { schemes: ["Bearer"], credentials: "s" } },
      },
    });
    expect(request.metadata).toEqual({ trace: "x" });
    expect(request.configuration?.acceptedOutputModes).toEqual(["text/plain"]);
    expect(request.configuration?.historyLength).toBe(3);
    expect(request.configuration?.returnImmediately).toBe(false);
    expect(request.configuration?.taskPushNotificationConfig).toEqual(
      expect.objectContaining({
        taskId: "",
        id: "c",
        url: "https://h.example/hook",
        token: "t",
        authentication: expect.objectContaining({ scheme: "Bearer", credentials: "s" }),
      }),
    );
  });

  test.each<[string, JsonValue | undefined, boolean]>([
    ["absent", undefined, false],
    ["true", true, false],
    ["false", false, true],
  ])("R-V03-30 (BQ-5a): blocking %s → returnImmediately %s", (_name, blocking, returnImmediately) => {
    const configuration: JsonObject = blocking === undefined ? {} : { blocking };
    expect(sendMessageRequestFromV03({ message: v03Message(), configuration }).configuration?.returnImmediately).toBe(returnImmediately);
  });

  test("R-V03-31 (BQ-17): historyLength 0 or absent is no limit (unset); a negative one is refused", () => {
    expect(sendMessageRequestFromV03({ message: v03Message(), configuration: { historyLength: 0 } }).configuration?.historyLength).toBeUndefined();
    expect(sendMessageRequestFromV03({ message: v03Message(), configuration: {} }).configuration?.historyLength).toBeUndefined();
    expect(refusedField(() => sendMessageRequestFromV03({ message: v03Message(), configuration: { historyLength: -1 } }))).toBe("configuration.historyLength");
  });

  test("R-V03-23: messageId beside message is refused; a missing message is refused", () => {
    expect(refusedField(() => sendMessageRequestFromV03({ messageId: "m", message: v03Message() }))).toBe("messageId");
    expect(refusedField(() => sendMessageRequestFromV03({}))).toBe("message");
    expect(refusedField(() => sendMessageRequestFromV03([]))).toBe("params");
  });

  test("R-V03-35: more than one authentication scheme is refused", () => {
    const configuration = { pushNotificationConfig: { url: "https://h.example/", authentication: { schemes: ["a", "b"] } } };
    expect(refusedField(() => sendMessageRequestFromV03({ message: v03Message(), configuration }))).toBe(
      "configuration.pushNotificationConfig.authentication.schemes",
    );
  });
});

describe("R-V03-10, R-V03-22: the task and push-config params (id is the task id)", () => {
  test("tasks/get: id and historyLength (0 = no limit); metadata dropped", () => {
    expect(getTaskRequestFromV03({ id: "t", historyLength: 2, metadata: { x: 1 } })).toEqual(expect.objectContaining({ id: "t", historyLength: 2 }));
    expect(getTaskRequestFromV03({ id: "t", historyLength: 0 }).historyLength).toBeUndefined();
    expect(refusedField(() => getTaskRequestFromV03({}))).toBe("id");
    expect(refusedField(() => getTaskRequestFromV03({ id: "t", historyLength: 1.5 }))).toBe("historyLength");
  });

  test("tasks/cancel keeps its metadata; tasks/resubscribe reads the id", () => {
    expect(cancelTaskRequestFromV03({ id: "t", metadata: { why: "done" } })).toEqual(expect.objectContaining({ id: "t", metadata: { why: "done" } }));
    expect(subscribeRequestFromV03({ id: "t" }).id).toBe("t");
  });

  test("tasks/pushNotificationConfig/set: taskId outside, the config nested, schemes[0] as scheme", () => {
    const config = setPushConfigRequestFromV03({
      taskId: "t",
      pushNotificationConfig: { id: "c", url: "https://h.example/", token: "tok", authentication: { schemes: ["Basic"], credentials: "u:p" } },
    });
    expect(config).toEqual(
      expect.objectContaining({
        taskId: "t",
        id: "c",
        url: "https://h.example/",
        token: "tok",
        authentication: expect.objectContaining({ scheme: "Basic", credentials: "u:p" }),
      }),
    );
    expect(refusedField(() => setPushConfigRequestFromV03({ taskId: "t" }))).toBe("pushNotificationConfig");
    expect(refusedField(() => setPushConfigRequestFromV03({ taskId: "t", pushNotificationConfig: {} }))).toBe("pushNotificationConfig.url");
  });

  test("get (config id optional, R-V03-34), list, delete (config id required)", () => {
    expect(getPushConfigParamsFromV03({ id: "t", pushNotificationConfigId: "c" })).toEqual({ taskId: "t", configId: "c" });
    expect(getPushConfigParamsFromV03({ id: "t" })).toEqual({ taskId: "t", configId: undefined });
    expect(listPushConfigsRequestFromV03({ id: "t" }).taskId).toBe("t");
    expect(deletePushConfigRequestFromV03({ id: "t", pushNotificationConfigId: "c" })).toEqual(expect.objectContaining({ taskId: "t", id: "c" }));
    expect(refusedField(() => deletePushConfigRequestFromV03({ id: "t" }))).toBe("pushNotificationConfigId");
  });
});
