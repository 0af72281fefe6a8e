/**
 * R-V03-22, answers out: v1.0 (lf.a2a.v1) tasks, messages, events, push configs and the card as
 * messages of the v0.3 proto (a2a.v1), field by field; `final` (R-V03-32), names (R-V03-13),
 * schemes (R-V03-35), non-object data (R-V03-36), the card (R-V03-50/52), the lossy fields (R-V03-37).
 */
import { create, fromJson, toBinary } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import * as v03 from "../../gen/es/a2a/v1/a2a_pb.js";
import * as v1 from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import * as toV03 from "../../src/v03/proto/v1-to-v03-proto.js";

const S = v1.TaskState;
const timestamp = { seconds: 1_750_000_000n, nanos: 5 };

const v1Message = create(v1.MessageSchema, {
  messageId: "m-1",
  contextId: "ctx",
  taskId: "t-1",
  role: v1.Role.AGENT,
  parts: [{ content: { case: "text", value: "hi" }, mediaType: "text/plain", filename: "x.txt", metadata: { lost: true } }],
  metadata: { k: 1 },
  extensions: ["urn:e"],
  referenceTaskIds: ["t-0"],
});

const v1Task = create(v1.TaskSchema, {
  id: "t-1",
  contextId: "ctx",
  status: { state: S.WORKING, message: v1Message, timestamp },
  artifacts: [
    { artifactId: "a", name: "n", description: "d", parts: [{ content: { case: "text", value: "art" } }], metadata: { am: 1 }, extensions: ["urn:a"] },
  ],
  history: [v1Message],
  metadata: { tm: "x" },
});

describe("R-V03-22 TaskState / Role", () => {
  test.each([
    [S.SUBMITTED, v03.TaskState.SUBMITTED],
    [S.WORKING, v03.TaskState.WORKING],
    [S.COMPLETED, v03.TaskState.COMPLETED],
    [S.FAILED, v03.TaskState.FAILED],
    [S.CANCELED, v03.TaskState.CANCELLED],
    [S.INPUT_REQUIRED, v03.TaskState.INPUT_REQUIRED],
    [S.REJECTED, v03.TaskState.REJECTED],
    [S.AUTH_REQUIRED, v03.TaskState.AUTH_REQUIRED],
  ])("v1.0 state %i is v0.3 %i (CANCELED → TASK_STATE_CANCELLED)", (state, expected) => {
    expect(toV03.statusToV03(create(v1.TaskStatusSchema, { state })).state).toBe(expected);
  });

  test("roles keep their numbers", () => {
    expect(toV03.messageToV03(create(v1.MessageSchema, { role: v1.Role.USER })).role).toBe(v03.Role.USER);
    expect(toV03.messageToV03(create(v1.MessageSchema, { role: v1.Role.AGENT })).role).toBe(v03.Role.AGENT);
  });
});

describe("R-V03-22 Task, TaskStatus, Message, Artifact", () => {
  test("Task: id, context_id, artifacts, history, metadata; status.message → status.update, timestamp kept", () => {
    const out = toV03.taskToV03(v1Task);
    expect(out).toMatchObject({ id: "t-1", contextId: "ctx", metadata: { tm: "x" } });
    expect(out.status?.state).toBe(v03.TaskState.WORKING);
    expect(out.status?.update?.messageId).toBe("m-1");
    expect(out.status?.timestamp).toMatchObject(timestamp);
    expect(out.history.map((m) => m.messageId)).toEqual(["m-1"]);
    expect(out.artifacts[0]).toMatchObject({ artifactId: "a", name: "n", description: "d", metadata: { am: 1 }, extensions: ["urn:a"] });
    expect(out.artifacts[0]?.parts[0]?.part).toEqual({ case: "text", value: "art" });
  });

  test("Message: ids, role, metadata, extensions kept; parts → content; R-V03-37: reference_task_ids and part metadata/media type/filename are dropped", () => {
    const out = toV03.messageToV03(v1Message);
    expect(out).toMatchObject({ messageId: "m-1", contextId: "ctx", taskId: "t-1", role: v03.Role.AGENT, metadata: { k: 1 }, extensions: ["urn:e"] });
    expect(out.content).toHaveLength(1);
    expect(out.content[0]?.part).toEqual({ case: "text", value: "hi" });
    expect(Object.keys(out)).not.toContain("referenceTaskIds");
  });

  test("Part: raw → file_with_bytes and url → file_with_uri with media_type → mime_type", () => {
    const bytes = new Uint8Array([9, 8]);
    expect(toV03.partToV03(create(v1.PartSchema, { content: { case: "raw", value: bytes }, mediaType: "image/png" })).part).toMatchObject({
      case: "file",
      value: { file: { case: "fileWithBytes", value: bytes }, mimeType: "image/png" },
    });
    expect(toV03.partToV03(create(v1.PartSchema, { content: { case: "url", value: "https://f.test/a" }, mediaType: "text/csv" })).part).toMatchObject({
      case: "file",
      value: { file: { case: "fileWithUri", value: "https://f.test/a" }, mimeType: "text/csv" },
    });
  });

  test("R-V03-36: an object data part is the Struct as is; any other JSON value is wrapped as {value: v}", () => {
    const data = (json: unknown) => toV03.partToV03(create(v1.PartSchema, { content: { case: "data", value: fromJson(ValueSchema, json as never) } })).part;
    expect(data({ a: [1, "b"] })).toMatchObject({ case: "data", value: { data: { a: [1, "b"] } } });
    expect(data([1, 2])).toMatchObject({ case: "data", value: { data: { value: [1, 2] } } });
    expect(data("s")).toMatchObject({ case: "data", value: { data: { value: "s" } } });
    expect(data(null)).toMatchObject({ case: "data", value: { data: { value: null } } });
  });

  test("the translated task encodes as a valid v0.3 proto message", () => {
    expect(toBinary(v03.TaskSchema, toV03.taskToV03(v1Task)).byteLength).toBeGreaterThan(0);
  });
});

describe("R-V03-32 events and responses", () => {
  const statusEvent = (state: v1.TaskState) =>
    create(v1.StreamResponseSchema, { payload: { case: "statusUpdate", value: { taskId: "t", contextId: "c", status: { state }, metadata: { e: 1 } } } });

  test.each([
    [S.SUBMITTED, false],
    [S.WORKING, false],
    [S.AUTH_REQUIRED, false],
    [S.INPUT_REQUIRED, true],
    [S.COMPLETED, true],
    [S.FAILED, true],
    [S.CANCELED, true],
    [S.REJECTED, true],
  ])("a status update to state %i has final = %s", (state, final) => {
    const out = toV03.streamResponseToV03(statusEvent(state));
    expect(out.payload.case).toBe("statusUpdate");
    expect(out.payload.value).toMatchObject({ taskId: "t", contextId: "c", final, metadata: { e: 1 } });
  });

  test("artifact update: task_id, context_id, artifact, append, last_chunk, metadata", () => {
    const out = toV03.streamResponseToV03(
      create(v1.StreamResponseSchema, {
        payload: {
          case: "artifactUpdate",
          value: { taskId: "t", contextId: "c", artifact: v1Task.artifacts[0], append: true, lastChunk: true, metadata: { m: 2 } },
        },
      }),
    );
    expect(out.payload.case).toBe("artifactUpdate");
    expect(out.payload.value).toMatchObject({ taskId: "t", contextId: "c", append: true, lastChunk: true, metadata: { m: 2 }, artifact: { artifactId: "a" } });
  });

  test("task and message payloads: message → msg in SendMessageResponse and StreamResponse", () => {
    expect(toV03.streamResponseToV03(create(v1.StreamResponseSchema, { payload: { case: "task", value: v1Task } })).payload.case).toBe("task");
    expect(toV03.streamResponseToV03(create(v1.StreamResponseSchema, { payload: { case: "message", value: v1Message } })).payload.case).toBe("msg");
    expect(toV03.sendMessageResponseToV03(create(v1.SendMessageResponseSchema, { payload: { case: "message", value: v1Message } })).payload.case).toBe("msg");
    expect(toV03.sendMessageResponseToV03(create(v1.SendMessageResponseSchema, { payload: { case: "task", value: v1Task } })).payload).toMatchObject({
      case: "task",
      value: { id: "t-1" },
    });
  });

  test("BQ-18: the closing status update made from a Task snapshot carries its status and final = true", () => {
    const done = create(v1.TaskSchema, { id: "t", contextId: "c", status: { state: S.COMPLETED, timestamp } });
    const out = toV03.finalStatusUpdateOf(done);
    expect(out.payload).toMatchObject({
      case: "statusUpdate",
      value: { taskId: "t", contextId: "c", final: true, status: { state: v03.TaskState.COMPLETED } },
    });
  });
});

describe("R-V03-22 push configs", () => {
  test("flat v1.0 config → name tasks/{task}/pushNotificationConfigs/{id} + push_notification_config{id, url, token, authentication{schemes: [scheme], credentials}}", () => {
    const out = toV03.pushConfigToV03(
      create(v1.TaskPushNotificationConfigSchema, {
        taskId: "t",
        id: "c",
        url: "https://h.test",
        token: "tok",
        authentication: { scheme: "Bearer", credentials: "s" },
      }),
    );
    expect(out.name).toBe("tasks/t/pushNotificationConfigs/c");
    expect(out.pushNotificationConfig).toMatchObject({
      id: "c",
      url: "https://h.test",
      token: "tok",
      authentication: { schemes: ["Bearer"], credentials: "s" },
    });
    const bare = toV03.pushConfigToV03(create(v1.TaskPushNotificationConfigSchema, { taskId: "t", id: "c", url: "https://h.test" }));
    expect(bare.pushNotificationConfig?.authentication).toBeUndefined();
  });

  test("List: every config translated, next_page_token kept", () => {
    const out = toV03.listPushConfigsResponseToV03(
      create(v1.ListTaskPushNotificationConfigsResponseSchema, {
        configs: [
          { taskId: "t", id: "a" },
          { taskId: "t", id: "b" },
        ],
        nextPageToken: "n",
      }),
    );
    expect(out.configs.map((c) => c.name)).toEqual(["tasks/t/pushNotificationConfigs/a", "tasks/t/pushNotificationConfigs/b"]);
    expect(out.nextPageToken).toBe("n");
  });
});

describe("R-V03-50 / R-V03-52 the card", () => {
  const card = create(v1.AgentCardSchema, {
    name: "agent",
    description: "desc",
    version: "1.2.3",
    documentationUrl: "https://docs.test",
    iconUrl: "https://icon.test",
    provider: { url: "https://p.test", organization: "org" },
    supportedInterfaces: [
      { url: "grpc.test:443", protocolBinding: "GRPC", protocolVersion: "1.0" },
      { url: "https://a.test/a2a/v0.3/jsonrpc", protocolBinding: "JSONRPC", protocolVersion: "0.3" },
      { url: "grpc.test:443", protocolBinding: "GRPC", protocolVersion: "0.3" },
    ],
    capabilities: {
      streaming: true,
      pushNotifications: true,
      extendedAgentCard: true,
      extensions: [{ uri: "urn:x", description: "x", required: true, params: { p: 1 } }],
    },
    securitySchemes: {
      key: { scheme: { case: "apiKeySecurityScheme", value: { location: "header", name: "x-api-key", description: "keys" } } },
      oauth: {
        scheme: {
          case: "oauth2SecurityScheme",
          value: {
            flows: {
              flow: { case: "authorizationCode", value: { authorizationUrl: "https://a", tokenUrl: "https://t", scopes: { s: "d" }, pkceRequired: true } },
            },
          },
        },
      },
      device: {
        scheme: {
          case: "oauth2SecurityScheme",
          value: { flows: { flow: { case: "deviceCode", value: { deviceAuthorizationUrl: "https://d", tokenUrl: "https://t" } } } },
        },
      },
      mtls: { scheme: { case: "mtlsSecurityScheme", value: { description: "m" } } },
    },
    securityRequirements: [{ schemes: { key: { list: [] } } }],
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["application/json"],
    skills: [
      {
        id: "s",
        name: "S",
        description: "d",
        tags: ["t"],
        examples: ["e"],
        inputModes: ["i"],
        outputModes: ["o"],
        securityRequirements: [{ schemes: { key: { list: ["r"] } } }],
      },
    ],
    signatures: [{ protected: "p", signature: "s" }],
  });

  test("protocol_version 0.3; url and preferred_transport from the first 0.3 interface; additional_interfaces = every 0.3 interface", () => {
    const out = toV03.agentCardToV03(card);
    expect(out).toMatchObject({ protocolVersion: "0.3", url: "https://a.test/a2a/v0.3/jsonrpc", preferredTransport: "JSONRPC" });
    expect(out.additionalInterfaces.map((i) => [i.url, i.transport])).toEqual([
      ["https://a.test/a2a/v0.3/jsonrpc", "JSONRPC"],
      ["grpc.test:443", "GRPC"],
    ]);
  });

  test("name, description, version, provider, documentation_url, modes, skills (security) kept; capabilities; supports_authenticated_extended_card", () => {
    const out = toV03.agentCardToV03(card);
    expect(out).toMatchObject({
      name: "agent",
      description: "desc",
      version: "1.2.3",
      documentationUrl: "https://docs.test",
      provider: { url: "https://p.test", organization: "org" },
      defaultInputModes: ["text/plain"],
      defaultOutputModes: ["application/json"],
      supportsAuthenticatedExtendedCard: true,
    });
    expect(out.capabilities).toMatchObject({
      streaming: true,
      pushNotifications: true,
      extensions: [{ uri: "urn:x", description: "x", required: true, params: { p: 1 } }],
    });
    expect(out.skills[0]).toMatchObject({ id: "s", name: "S", description: "d", tags: ["t"], examples: ["e"], inputModes: ["i"], outputModes: ["o"] });
    expect(out.skills[0]?.security[0]?.schemes.key?.list).toEqual(["r"]);
  });

  test("security schemes keep their oneof shape; security_requirements → security; R-V03-37: device-code flow, pkce_required, icon_url and signatures are dropped", () => {
    const out = toV03.agentCardToV03(card);
    expect(out.securitySchemes.key?.scheme).toMatchObject({
      case: "apiKeySecurityScheme",
      value: { location: "header", name: "x-api-key", description: "keys" },
    });
    expect(out.securitySchemes.mtls?.scheme).toMatchObject({ case: "mtlsSecurityScheme", value: { description: "m" } });
    const oauth = out.securitySchemes.oauth?.scheme;
    expect(oauth?.case === "oauth2SecurityScheme" && oauth.value.flows?.flow).toMatchObject({
      case: "authorizationCode",
      value: { authorizationUrl: "https://a", tokenUrl: "https://t", scopes: { s: "d" } },
    });
    const device = out.securitySchemes.device?.scheme;
    expect(device?.case === "oauth2SecurityScheme" && device.value.flows?.flow.case).toBeUndefined();
    expect(out.security[0]?.schemes.key?.list).toEqual([]);
    expect(out.signatures).toEqual([]);
    expect(toBinary(v03.AgentCardSchema, out).byteLength).toBeGreaterThan(0);
  });

  test("a card without 0.3 interfaces points at its first interface", () => {
    const only = create(v1.AgentCardSchema, { ...card, supportedInterfaces: [card.supportedInterfaces[0]!] });
    expect(toV03.agentCardToV03(only)).toMatchObject({ url: "grpc.test:443", preferredTransport: "GRPC", additionalInterfaces: [] });
  });
});
