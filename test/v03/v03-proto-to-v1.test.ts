/**
 * R-V03-22, requests in: the v0.3 proto (a2a.v1) into v1.0 (lf.a2a.v1), field by field through
 * the mapping tables, with the semantic rules R-V03-13/14/30/31/35 and bad input named by field.
 */
import { create, toJson, type MessageInitShape } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import * as v03 from "../../gen/es/a2a/v1/a2a_pb.js";
import * as v1 from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { InvalidRequestError } from "../../src/lifecycle/index.js";
import * as toV1 from "../../src/v03/proto/v03-proto-to-v1.js";

/** The field an InvalidRequestError names, or "no error". */
function badField(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof InvalidRequestError) return error.violations.map((v) => v.field).join(",");
    throw error;
  }
  return "no error";
}

const textPart = (text: string) => create(v03.PartSchema, { part: { case: "text", value: text } });

const message = create(v03.MessageSchema, {
  messageId: "m-1",
  contextId: "ctx-1",
  taskId: "t-1",
  role: v03.Role.USER,
  content: [textPart("hello")],
  metadata: { k: "v" },
  extensions: ["urn:x"],
});

describe("R-V03-22 Message and Part", () => {
  test("Message: messageId, contextId, taskId, role, metadata, extensions kept; content → parts", () => {
    const out = toV1.messageToV1(message, "request");
    expect(out).toMatchObject({ messageId: "m-1", contextId: "ctx-1", taskId: "t-1", role: v1.Role.USER, metadata: { k: "v" }, extensions: ["urn:x"] });
    expect(out.parts.map((p) => p.content)).toEqual([{ case: "text", value: "hello" }]);
    expect(toV1.messageToV1(create(v03.MessageSchema, { role: v03.Role.AGENT }), "m").role).toBe(v1.Role.AGENT);
  });

  test("Part: text → text; file_with_bytes → raw and file_with_uri → url, mime_type → media_type; data Struct → data Value", () => {
    const bytes = new Uint8Array([1, 2, 3]);
    const raw = toV1.partToV1(
      create(v03.PartSchema, { part: { case: "file", value: { file: { case: "fileWithBytes", value: bytes }, mimeType: "image/png" } } }),
      "p",
    );
    expect(raw).toMatchObject({ content: { case: "raw", value: bytes }, mediaType: "image/png" });
    const url = toV1.partToV1(
      create(v03.PartSchema, { part: { case: "file", value: { file: { case: "fileWithUri", value: "https://x.test/f" }, mimeType: "text/plain" } } }),
      "p",
    );
    expect(url).toMatchObject({ content: { case: "url", value: "https://x.test/f" }, mediaType: "text/plain" });
    const data = toV1.partToV1(create(v03.PartSchema, { part: { case: "data", value: { data: { a: 1, b: [true, null] } } } }), "p");
    expect(data.content.case).toBe("data");
    expect(toJson(ValueSchema, data.content.value as never)).toEqual({ a: 1, b: [true, null] });
  });

  test("R-V03-38: a file part with neither uri nor bytes, and a part with nothing, are INVALID_ARGUMENT naming the part", () => {
    const noFile = create(v03.PartSchema, { part: { case: "file", value: { mimeType: "x/y" } } });
    expect(
      badField(() => toV1.sendMessageRequestToV1(create(v03.SendMessageRequestSchema, { request: { ...message, content: [textPart("a"), noFile] } }))),
    ).toBe("request.content[1].file");
    expect(badField(() => toV1.partToV1(create(v03.PartSchema), "request.content[0]"))).toBe("request.content[0]");
  });
});

describe("R-V03-22 SendMessageRequest and configuration", () => {
  test("request → message, metadata kept, tenant empty (R-V03-61); no configuration = blocking (R-V03-30)", () => {
    const out = toV1.sendMessageRequestToV1(create(v03.SendMessageRequestSchema, { request: message, metadata: { m: 1 } }));
    expect(out.tenant).toBe("");
    expect(out.message?.messageId).toBe("m-1");
    expect(out.metadata).toEqual({ m: 1 });
    expect(out.configuration).toBeUndefined();
    expect(badField(() => toV1.sendMessageRequestToV1(create(v03.SendMessageRequestSchema)))).toBe("request");
  });

  test("configuration: accepted_output_modes kept; blocking true/false → return_immediately false/true (R-V03-30); history_length 0 → unset, N → N, <0 refused (R-V03-31)", () => {
    const send = (configuration: MessageInitShape<typeof v03.SendMessageConfigurationSchema>) =>
      toV1.sendMessageRequestToV1(create(v03.SendMessageRequestSchema, { request: message, configuration })).configuration!;
    expect(send({ acceptedOutputModes: ["text/plain"], blocking: true })).toMatchObject({ acceptedOutputModes: ["text/plain"], returnImmediately: false });
    expect(send({ blocking: false }).returnImmediately).toBe(true);
    expect(send({ blocking: true, historyLength: 0 }).historyLength).toBeUndefined();
    expect(send({ blocking: true, historyLength: 5 }).historyLength).toBe(5);
    expect(badField(() => send({ historyLength: -1 }))).toBe("configuration.history_length");
  });

  test("configuration.push_notification → task_push_notification_config (task id empty), schemes[0] → scheme (R-V03-35)", () => {
    const out = toV1.sendMessageRequestToV1(
      create(v03.SendMessageRequestSchema, {
        request: message,
        configuration: {
          blocking: true,
          pushNotification: { id: "c", url: "https://h.test", token: "t", authentication: { schemes: ["Bearer"], credentials: "s" } },
        },
      }),
    );
    expect(out.configuration?.taskPushNotificationConfig).toMatchObject({
      id: "c",
      taskId: "",
      url: "https://h.test",
      token: "t",
      authentication: { scheme: "Bearer", credentials: "s" },
    });
    expect(
      badField(() =>
        toV1.sendMessageRequestToV1(
          create(v03.SendMessageRequestSchema, {
            request: message,
            configuration: { pushNotification: { url: "https://h.test", authentication: { schemes: ["A", "B"] } } },
          }),
        ),
      ),
    ).toBe("configuration.push_notification.authentication.schemes");
  });
});

describe("R-V03-13 resource names", () => {
  test("GetTask: name tasks/{id} → id; history_length 0 → unset (all), N → N", () => {
    const all = toV1.getTaskRequestToV1(create(v03.GetTaskRequestSchema, { name: "tasks/t-9", historyLength: 0 }));
    expect([all.id, all.historyLength]).toEqual(["t-9", undefined]);
    expect(toV1.getTaskRequestToV1(create(v03.GetTaskRequestSchema, { name: "tasks/t-9", historyLength: 2 })).historyLength).toBe(2);
  });

  test.each(["", "t-9", "tasks/", "tasks/a/b", "task/t-9", "/tasks/t-9", "tasks/t-9/"])(
    "a malformed task name %j is INVALID_ARGUMENT on name / parent",
    (name) => {
      expect(badField(() => toV1.getTaskRequestToV1(create(v03.GetTaskRequestSchema, { name })))).toBe("name");
      expect(badField(() => toV1.cancelTaskRequestToV1(create(v03.CancelTaskRequestSchema, { name })))).toBe("name");
      expect(badField(() => toV1.taskSubscriptionRequestToV1(create(v03.TaskSubscriptionRequestSchema, { name })))).toBe("name");
      expect(badField(() => toV1.listPushConfigsRequestToV1(create(v03.ListTaskPushNotificationConfigRequestSchema, { parent: name })))).toBe("parent");
    },
  );

  test("Cancel, TaskSubscription: name → id; List: parent → task_id, page_size and page_token kept", () => {
    expect(toV1.cancelTaskRequestToV1(create(v03.CancelTaskRequestSchema, { name: "tasks/a" })).id).toBe("a");
    expect(toV1.taskSubscriptionRequestToV1(create(v03.TaskSubscriptionRequestSchema, { name: "tasks/b" })).id).toBe("b");
    expect(
      toV1.listPushConfigsRequestToV1(create(v03.ListTaskPushNotificationConfigRequestSchema, { parent: "tasks/c", pageSize: 3, pageToken: "tok" })),
    ).toMatchObject({ taskId: "c", pageSize: 3, pageToken: "tok" });
  });

  test("Get/Delete push config: name tasks/{id}/pushNotificationConfigs/{cid} → task_id, id; malformed → name", () => {
    const name = "tasks/t/pushNotificationConfigs/c";
    expect(toV1.getPushConfigRequestToV1(create(v03.GetTaskPushNotificationConfigRequestSchema, { name }))).toMatchObject({ taskId: "t", id: "c" });
    expect(toV1.deletePushConfigRequestToV1(create(v03.DeleteTaskPushNotificationConfigRequestSchema, { name }))).toMatchObject({ taskId: "t", id: "c" });
    for (const bad of ["tasks/t", "tasks/t/pushNotificationConfigs/", "tasks/t/pushNotificationConfigs/c/d", "tasks/t/configs/c"]) {
      expect(badField(() => toV1.getPushConfigRequestToV1(create(v03.GetTaskPushNotificationConfigRequestSchema, { name: bad })))).toBe("name");
    }
  });
});

describe("R-V03-14 CreateTaskPushNotificationConfig", () => {
  const pnc = { id: "inner", url: "https://h.test/x", token: "tok", authentication: { schemes: ["Basic"], credentials: "cr" } };
  const createReq = (fields: Omit<MessageInitShape<typeof v03.CreateTaskPushNotificationConfigRequestSchema>, "$typeName">) =>
    create(v03.CreateTaskPushNotificationConfigRequestSchema, { parent: "tasks/t", config: { pushNotificationConfig: pnc }, ...fields });

  test("task from parent; config id from config_id, else push_notification_config.id, else empty (server assigns, A-8)", () => {
    expect(toV1.createPushConfigRequestToV1(createReq({ configId: "outer" }))).toMatchObject({
      taskId: "t",
      id: "outer",
      url: "https://h.test/x",
      token: "tok",
      authentication: { scheme: "Basic", credentials: "cr" },
    });
    expect(toV1.createPushConfigRequestToV1(createReq({})).id).toBe("inner");
    expect(toV1.createPushConfigRequestToV1(createReq({ config: { pushNotificationConfig: { ...pnc, id: "" } } })).id).toBe("");
  });

  test("BQ-13: config.name must name the parent's task (and config_id, when both are set); a missing config is refused", () => {
    const named = (name: string, configId = "") => createReq({ configId, config: { name, pushNotificationConfig: { ...pnc, id: "" } } });
    expect(toV1.createPushConfigRequestToV1(named("tasks/t/pushNotificationConfigs/n")).id).toBe("n");
    expect(badField(() => toV1.createPushConfigRequestToV1(named("tasks/other/pushNotificationConfigs/n")))).toBe("config.name");
    expect(badField(() => toV1.createPushConfigRequestToV1(named("tasks/t/pushNotificationConfigs/n", "m")))).toBe("config.name");
    expect(badField(() => toV1.createPushConfigRequestToV1(named("nonsense")))).toBe("config.name");
    expect(badField(() => toV1.createPushConfigRequestToV1(createReq({ config: undefined })))).toBe("config.push_notification_config");
    expect(badField(() => toV1.createPushConfigRequestToV1(createReq({ parent: "t" })))).toBe("parent");
  });
});
