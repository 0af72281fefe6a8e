/**
 * Request validation at the edge (R-SEND-8, R-GET-4, R-HIST-4, R-LIST-3, R-LIST-7, A-13, A-16):
 * tables of bad inputs, each with the proto field path the client is told to fix.
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { ValueSchema, type Value } from "@bufbuild/protobuf/wkt";
import {
  CancelTaskRequestSchema,
  DeleteTaskPushNotificationConfigRequestSchema,
  GetExtendedAgentCardRequestSchema,
  GetTaskPushNotificationConfigRequestSchema,
  GetTaskRequestSchema,
  ListTaskPushNotificationConfigsRequestSchema,
  ListTasksRequestSchema,
  Role,
  SendMessageRequestSchema,
  SubscribeToTaskRequestSchema,
  TaskPushNotificationConfigSchema,
  TaskState,
  type SendMessageRequest,
} from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { InvalidRequestError, type FieldViolation } from "../../src/lifecycle/model/errors.js";
import {
  DEFAULT_VALIDATION_LIMITS,
  validateCancelTaskRequest,
  validateCreateTaskPushNotificationConfigRequest,
  validateDeleteTaskPushNotificationConfigRequest,
  validateGetExtendedAgentCardRequest,
  validateGetTaskPushNotificationConfigRequest,
  validateGetTaskRequest,
  validateListTaskPushNotificationConfigsRequest,
  validateListTasksRequest,
  validateSendMessageRequest,
  validateSubscribeToTaskRequest,
} from "../../src/service/request-validation.js";

/** The violations a validator reports; [] when it accepts the request. */
function violationsOf(run: () => void): FieldViolation[] {
  try {
    run();
    return [];
  } catch (error) {
    if (!(error instanceof InvalidRequestError)) throw error;
    expect(error.violations.length).toBeGreaterThan(0);
    return [...error.violations];
  }
}

const fields = (vs: FieldViolation[]) => vs.map((v) => v.field);
const long = (n: number) => "x".repeat(n);
const value = (init: MessageInitShape<typeof ValueSchema>): Value => create(ValueSchema, init);

type SendInit = MessageInitShape<typeof SendMessageRequestSchema>;

function sendRequest(edit: (req: SendMessageRequest) => void = () => {}): SendMessageRequest {
  const req = create(SendMessageRequestSchema, {
    message: {
      messageId: "m-1",
      role: Role.USER,
      parts: [{ content: { case: "text", value: "hello" } }],
    },
  } satisfies SendInit);
  edit(req);
  return req;
}

const sendViolations = (edit: (req: SendMessageRequest) => void) => violationsOf(() => validateSendMessageRequest(sendRequest(edit)));

describe("validateSendMessageRequest", () => {
  test("R-SEND-8: a minimal user message is valid", () => {
    expect(violationsOf(() => validateSendMessageRequest(sendRequest()))).toEqual([]);
  });

  test("R-SEND-8: a rich but valid request passes (all part kinds, optional ids, configuration)", () => {
    const req = create(SendMessageRequestSchema, {
      tenant: "acme",
      message: {
        messageId: "m-2",
        contextId: "ctx-1",
        taskId: "task-1",
        role: Role.USER,
        parts: [
          { content: { case: "text", value: "" }, mediaType: "text/plain; charset=utf-8" },
          { content: { case: "raw", value: new Uint8Array([1, 2]) }, mediaType: "application/octet-stream", filename: "a.bin" },
          { content: { case: "url", value: "https://example.com/report.pdf" }, mediaType: "application/pdf" },
          { content: { case: "url", value: "data:text/plain;base64,aGk=" } },
          { content: { case: "data", value: value({ kind: { case: "nullValue", value: 0 } }) } },
          {
            content: {
              case: "data",
              value: value({
                kind: {
                  case: "structValue",
                  value: { fields: { a: value({ kind: { case: "listValue", value: { values: [value({ kind: { case: "numberValue", value: 1.5 } })] } } }) } },
                },
              }),
            },
            mediaType: "application/json",
          },
        ],
        extensions: ["https://ext.example/a/v1"],
        referenceTaskIds: Array.from({ length: 64 }, (_, i) => `t-${i}`),
        metadata: { nested: { list: [1, "two", null, true] } },
      },
      configuration: {
        acceptedOutputModes: ["text/plain", "image/*", "*/*"],
        historyLength: 0,
        returnImmediately: true,
        taskPushNotificationConfig: {
          url: "https://client.example/hook",
          token: "tok",
          authentication: { scheme: "Bearer", credentials: "secret" },
        },
      },
      metadata: { trace: "abc" },
    });
    expect(violationsOf(() => validateSendMessageRequest(req))).toEqual([]);
  });

  test("R-SEND-8: a missing message names the field `message`", () => {
    const vs = violationsOf(() => validateSendMessageRequest(create(SendMessageRequestSchema, {})));
    expect(vs).toEqual([{ field: "message", description: expect.stringMatching(/^must be set: /) }]);
  });

  test("R-SEND-8: an empty message lists every missing field at once", () => {
    const vs = violationsOf(() => validateSendMessageRequest(create(SendMessageRequestSchema, { message: {} })));
    expect(fields(vs).sort()).toEqual(["message.message_id", "message.parts", "message.role"]);
    expect(vs.find((v) => v.field === "message.message_id")!.description).toMatch(/^must be set: the unique id of this message/);
  });

  const bad: Array<[string, (req: SendMessageRequest) => void, string, RegExp?]> = [
    ["R-SEND-8: empty message_id", (r) => (r.message!.messageId = ""), "message.message_id", /must be set/],
    ["A-16: ROLE_AGENT is refused", (r) => (r.message!.role = Role.AGENT), "message.role", /must be ROLE_USER.*ROLE_AGENT/],
    ["A-16: ROLE_UNSPECIFIED is refused", (r) => (r.message!.role = Role.UNSPECIFIED), "message.role", /must be ROLE_USER.*ROLE_UNSPECIFIED/],
    ["A-16: an unknown role number is refused", (r) => (r.message!.role = 7 as Role), "message.role", /must be ROLE_USER.*unknown value 7/],
    ["A-16: no parts", (r) => (r.message!.parts = []), "message.parts", /at least one part/],
    [
      "A-16: a part without content",
      (r) => r.message!.parts.push(create(SendMessageRequestSchema, { message: { parts: [{}] } }).message!.parts[0]!),
      "message.parts[1]",
      /must carry content/,
    ],
    ["url part: relative URL", (r) => (r.message!.parts[0]!.content = { case: "url", value: "/files/a.pdf" }), "message.parts[0].url", /absolute URL/],
    ["url part: empty", (r) => (r.message!.parts[0]!.content = { case: "url", value: "" }), "message.parts[0].url", /must be set/],
    [
      "url part: newline inside",
      (r) => (r.message!.parts[0]!.content = { case: "url", value: "https://a.example/\nx" }),
      "message.parts[0].url",
      /absolute URL/,
    ],
    [
      "data part: Value without kind",
      (r) => (r.message!.parts[0]!.content = { case: "data", value: value({}) }),
      "message.parts[0].data",
      /JSON value: it has no value/,
    ],
    [
      "data part: nested Value without kind",
      (r) =>
        (r.message!.parts[0]!.content = {
          case: "data",
          value: value({
            kind: {
              case: "structValue",
              value: {
                fields: { items: value({ kind: { case: "listValue", value: { values: [value({ kind: { case: "boolValue", value: true } }), value({})] } } }) },
              },
            },
          }),
        }),
      "message.parts[0].data",
      /\.items\[1\] has no value/,
    ],
    [
      "data part: NaN",
      (r) => (r.message!.parts[0]!.content = { case: "data", value: value({ kind: { case: "numberValue", value: NaN } }) }),
      "message.parts[0].data",
      /finite number/,
    ],
    ["media_type without subtype", (r) => (r.message!.parts[0]!.mediaType = "text"), "message.parts[0].media_type", /type\/subtype/],
    ["media_type with spaces", (r) => (r.message!.parts[0]!.mediaType = "text /plain"), "message.parts[0].media_type", /type\/subtype/],
    ["media_type wildcard in a part", (r) => (r.message!.parts[0]!.mediaType = "*/*"), "message.parts[0].media_type", /type\/subtype/],
    ["filename with a newline", (r) => (r.message!.parts[0]!.filename = "a\nb.txt"), "message.parts[0].filename", /control characters/],
    ["filename too long", (r) => (r.message!.parts[0]!.filename = long(1025)), "message.parts[0].filename", /at most 1024/],
    ["part metadata with Infinity", (r) => (r.message!.parts[0]!.metadata = { x: Infinity }), "message.parts[0].metadata", /finite number/],
    ["message_id too long", (r) => (r.message!.messageId = long(257)), "message.message_id", /at most 256 characters/],
    ["message_id with a control character", (r) => (r.message!.messageId = "m\u0000"), "message.message_id", /control characters/],
    ["context_id too long", (r) => (r.message!.contextId = long(257)), "message.context_id", /at most 256/],
    ["context_id with DEL", (r) => (r.message!.contextId = "c\u007f"), "message.context_id", /control characters/],
    ["task_id too long", (r) => (r.message!.taskId = long(300)), "message.task_id", /at most 256/],
    ["task_id with C1 control", (r) => (r.message!.taskId = "t\u0085"), "message.task_id", /control characters/],
    ["tenant too long", (r) => (r.tenant = long(257)), "tenant", /at most 256/],
    ["tenant with a tab", (r) => (r.tenant = "a\tb"), "tenant", /control characters/],
    [
      "reference_task_ids: too many",
      (r) => (r.message!.referenceTaskIds = Array.from({ length: 65 }, (_, i) => `t${i}`)),
      "message.reference_task_ids",
      /at most 64 entries/,
    ],
    ["reference_task_ids: empty entry", (r) => (r.message!.referenceTaskIds = ["t1", ""]), "message.reference_task_ids[1]", /must be set/],
    ["reference_task_ids: entry too long", (r) => (r.message!.referenceTaskIds = [long(257)]), "message.reference_task_ids[0]", /at most 256/],
    ["extensions: empty URI", (r) => (r.message!.extensions = ["https://ext.example/a", ""]), "message.extensions[1]", /must not be empty/],
    ["extensions: URI with a newline", (r) => (r.message!.extensions = ["https://e\n"]), "message.extensions[0]", /control characters/],
    ["message metadata with NaN", (r) => (r.message!.metadata = { deep: [{ n: NaN }] }), "message.metadata", /deep\[0\]\.n must be a finite number/],
    ["request metadata with NaN", (r) => (r.metadata = { n: NaN }), "metadata", /finite number/],
    [
      "R-HIST-4: negative configuration.history_length",
      (r) => (r.configuration = create(SendMessageRequestSchema, { configuration: { historyLength: -5 } }).configuration),
      "configuration.history_length",
      /0 or more.*got -5/,
    ],
    [
      "accepted_output_modes: not a media type",
      (r) => (r.configuration = create(SendMessageRequestSchema, { configuration: { acceptedOutputModes: ["text/plain", "plain text"] } }).configuration),
      "configuration.accepted_output_modes[1]",
      /media type/,
    ],
    [
      "push config: url missing",
      (r) => (r.configuration = create(SendMessageRequestSchema, { configuration: { taskPushNotificationConfig: {} } }).configuration),
      "configuration.task_push_notification_config.url",
      /must be set: the absolute http\(s\) URL/,
    ],
    [
      "push config: ftp url",
      (r) => (r.configuration = create(SendMessageRequestSchema, { configuration: { taskPushNotificationConfig: { url: "ftp://h/x" } } }).configuration),
      "configuration.task_push_notification_config.url",
      /http or https/,
    ],
    [
      "push config: authentication without scheme",
      (r) =>
        (r.configuration = create(SendMessageRequestSchema, {
          configuration: { taskPushNotificationConfig: { url: "https://h/x", authentication: { credentials: "c" } } },
        }).configuration),
      "configuration.task_push_notification_config.authentication.scheme",
      /must be set when authentication is given/,
    ],
    [
      "push config: token with CRLF (header injection)",
      (r) =>
        (r.configuration = create(SendMessageRequestSchema, {
          configuration: { taskPushNotificationConfig: { url: "https://h/x", token: "t\r\nX-Evil: 1" } },
        }).configuration),
      "configuration.task_push_notification_config.token",
      /control characters/,
    ],
  ];

  test.each(bad)("%s -> INVALID_ARGUMENT on the right field", (_name, edit, field, description) => {
    const vs = sendViolations(edit);
    expect(fields(vs)).toEqual([field]);
    if (description) expect(vs[0]!.description).toMatch(description);
  });

  test("R-SEND-8: all violations are reported together, in one error", () => {
    const vs = sendViolations((r) => {
      r.tenant = long(300);
      r.message!.messageId = "";
      r.message!.role = Role.AGENT;
      r.message!.parts = [create(SendMessageRequestSchema, { message: { parts: [{}] } }).message!.parts[0]!];
      r.configuration = create(SendMessageRequestSchema, { configuration: { historyLength: -1 } }).configuration;
    });
    expect(fields(vs)).toEqual(["tenant", "message.message_id", "message.role", "message.parts[0]", "configuration.history_length"]);
  });

  test("limits are configurable", () => {
    const req = sendRequest((r) => (r.message!.messageId = "abcdef"));
    expect(violationsOf(() => validateSendMessageRequest(req, { ...DEFAULT_VALIDATION_LIMITS, maxIdLength: 5 }))).toEqual([
      { field: "message.message_id", description: "must be at most 5 characters long (got 6)" },
    ]);
  });

  test("ids of exactly the limit are accepted", () => {
    expect(
      sendViolations((r) => {
        r.message!.messageId = long(256);
        r.message!.referenceTaskIds = [long(256)];
        r.tenant = long(256);
      }),
    ).toEqual([]);
  });
});

describe("task requests", () => {
  test("R-GET-4: GetTask without id is INVALID_ARGUMENT on `id`", () => {
    const vs = violationsOf(() => validateGetTaskRequest(create(GetTaskRequestSchema, {})));
    expect(vs).toEqual([{ field: "id", description: expect.stringMatching(/^must be set: the id of the task/) }]);
  });

  test.each<[string, MessageInitShape<typeof GetTaskRequestSchema>, string[]]>([
    ["valid", { id: "t1" }, []],
    ["history_length 0 is valid (R-HIST-2)", { id: "t1", historyLength: 0 }, []],
    ["R-HIST-4: negative history_length", { id: "t1", historyLength: -5 }, ["history_length"]],
    ["id too long", { id: long(257) }, ["id"]],
    ["id with a newline", { id: "t\n1" }, ["id"]],
    ["tenant with a control character", { id: "t", tenant: "\u0001" }, ["tenant"]],
  ])("GetTask: %s", (_name, init, expected) => {
    expect(fields(violationsOf(() => validateGetTaskRequest(create(GetTaskRequestSchema, init))))).toEqual(expected);
  });

  test.each<[string, MessageInitShape<typeof ListTasksRequestSchema>, string[]]>([
    ["no filters at all", {}, []],
    ["page_size 1 and 100 are the bounds", { pageSize: 1 }, []],
    ["page_size 100", { pageSize: 100 }, []],
    ["A-13: page_size 0", { pageSize: 0 }, ["page_size"]],
    ["A-13: page_size -1", { pageSize: -1 }, ["page_size"]],
    ["R-LIST-3: page_size 150", { pageSize: 150 }, ["page_size"]],
    ["R-HIST-4: negative history_length", { historyLength: -1 }, ["history_length"]],
    ["R-LIST-7: TASK_STATE_UNSPECIFIED means no filter", { status: TaskState.UNSPECIFIED }, []],
    ["R-LIST-7: every known state is a valid filter", { status: TaskState.AUTH_REQUIRED }, []],
    ["R-LIST-7 / A-13: an unknown status value", { status: 42 as TaskState }, ["status"]],
    ["R-LIST-7 / A-13: a negative status value", { status: -1 as TaskState }, ["status"]],
    ["status_timestamp_after in range", { statusTimestampAfter: { seconds: 1_700_000_000n, nanos: 999_999_999 } }, []],
    ["status_timestamp_after: negative nanos", { statusTimestampAfter: { seconds: 0n, nanos: -1 } }, ["status_timestamp_after.nanos"]],
    ["status_timestamp_after: nanos too large", { statusTimestampAfter: { seconds: 0n, nanos: 1_000_000_000 } }, ["status_timestamp_after.nanos"]],
    ["status_timestamp_after: after year 9999", { statusTimestampAfter: { seconds: 253_402_300_800n } }, ["status_timestamp_after.seconds"]],
    ["status_timestamp_after: before year 1", { statusTimestampAfter: { seconds: -62_135_596_801n } }, ["status_timestamp_after.seconds"]],
    ["context_id too long", { contextId: long(257) }, ["context_id"]],
    ["page_token is not judged here", { pageToken: "anything at all" }, []],
    [
      "several at once",
      { pageSize: 0, historyLength: -2, status: 99 as TaskState, contextId: long(300) },
      ["context_id", "status", "page_size", "history_length"],
    ],
  ])("ListTasks: %s", (_name, init, expected) => {
    expect(fields(violationsOf(() => validateListTasksRequest(create(ListTasksRequestSchema, init))))).toEqual(expected);
  });

  test("A-13: the page_size description matches the spec's wording", () => {
    const [v] = violationsOf(() => validateListTasksRequest(create(ListTasksRequestSchema, { pageSize: 150 })));
    expect(v!.description).toMatch(/must be between 1 and 100 inclusive/);
    const [s] = violationsOf(() => validateListTasksRequest(create(ListTasksRequestSchema, { status: 42 as TaskState })));
    expect(s!.description).toMatch(/TASK_STATE_UNSPECIFIED for no filter; got unknown value 42/);
  });

  test.each<[string, (id: string) => void]>([
    ["CancelTask", (id) => validateCancelTaskRequest(create(CancelTaskRequestSchema, { id }))],
    ["SubscribeToTask", (id) => validateSubscribeToTaskRequest(create(SubscribeToTaskRequestSchema, { id }))],
  ])("%s: id is required and bounded", (_name, run) => {
    expect(violationsOf(() => run("t1"))).toEqual([]);
    expect(fields(violationsOf(() => run("")))).toEqual(["id"]);
    expect(fields(violationsOf(() => run(long(257))))).toEqual(["id"]);
  });

  test("CancelTask: metadata must be JSON", () => {
    const req = create(CancelTaskRequestSchema, { id: "t1", metadata: { reason: "user", n: NaN } });
    expect(fields(violationsOf(() => validateCancelTaskRequest(req)))).toEqual(["metadata"]);
  });

  test("GetExtendedAgentCard: nothing is required", () => {
    expect(violationsOf(() => validateGetExtendedAgentCardRequest(create(GetExtendedAgentCardRequestSchema, {})))).toEqual([]);
    const tooLong = create(GetExtendedAgentCardRequestSchema, { tenant: long(257) });
    expect(fields(violationsOf(() => validateGetExtendedAgentCardRequest(tooLong)))).toEqual(["tenant"]);
  });
});

describe("push config requests", () => {
  test.each<[string, MessageInitShape<typeof TaskPushNotificationConfigSchema>, string[]]>([
    ["valid", { taskId: "t1", url: "https://client.example/hook" }, []],
    [
      "valid with plain http, id, token and auth",
      { taskId: "t1", id: "c1", url: "http://127.0.0.1:8080/h", token: "x", authentication: { scheme: "Basic", credentials: "dTpw" } },
      [],
    ],
    ["R-PUSH-2: task_id missing", { url: "https://h/x" }, ["task_id"]],
    ["R-PUSH-2: url missing", { taskId: "t1" }, ["url"]],
    ["A-8: relative url", { taskId: "t1", url: "/hook" }, ["url"]],
    ["A-8: non-http scheme", { taskId: "t1", url: "mailto:a@b.c" }, ["url"]],
    ["A-8: file url", { taskId: "t1", url: "file:///etc/passwd" }, ["url"]],
    ["authentication without scheme", { taskId: "t1", url: "https://h/x", authentication: {} }, ["authentication.scheme"]],
    ["authentication scheme with a space", { taskId: "t1", url: "https://h/x", authentication: { scheme: "Bearer x" } }, ["authentication.scheme"]],
    [
      "credentials with CRLF",
      { taskId: "t1", url: "https://h/x", authentication: { scheme: "Bearer", credentials: "a\r\nb" } },
      ["authentication.credentials"],
    ],
    ["config id too long", { taskId: "t1", url: "https://h/x", id: long(257) }, ["id"]],
    ["everything wrong", { authentication: {} }, ["task_id", "url", "authentication.scheme"]],
  ])("Create: %s", (_name, init, expected) => {
    const req = create(TaskPushNotificationConfigSchema, init);
    expect(fields(violationsOf(() => validateCreateTaskPushNotificationConfigRequest(req)))).toEqual(expected);
  });

  test.each<[string, (taskId: string, id: string) => void]>([
    ["Get", (taskId, id) => validateGetTaskPushNotificationConfigRequest(create(GetTaskPushNotificationConfigRequestSchema, { taskId, id }))],
    ["Delete", (taskId, id) => validateDeleteTaskPushNotificationConfigRequest(create(DeleteTaskPushNotificationConfigRequestSchema, { taskId, id }))],
  ])("%s: task_id and id are required", (_name, run) => {
    expect(violationsOf(() => run("t1", "c1"))).toEqual([]);
    expect(fields(violationsOf(() => run("", "")))).toEqual(["task_id", "id"]);
    expect(fields(violationsOf(() => run("t1", "")))).toEqual(["id"]);
    expect(fields(violationsOf(() => run("", "c1")))).toEqual(["task_id"]);
  });

  test.each<[string, MessageInitShape<typeof ListTaskPushNotificationConfigsRequestSchema>, string[]]>([
    ["valid, default page size", { taskId: "t1" }, []],
    ["valid with a page size", { taskId: "t1", pageSize: 10 }, []],
    ["task_id missing", {}, ["task_id"]],
    ["negative page_size", { taskId: "t1", pageSize: -3 }, ["page_size"]],
  ])("List: %s", (_name, init, expected) => {
    const req = create(ListTaskPushNotificationConfigsRequestSchema, init);
    expect(fields(violationsOf(() => validateListTaskPushNotificationConfigsRequest(req)))).toEqual(expected);
  });
});
