import { create, fromJson, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import {
  AuthenticationInfoSchema,
  CancelTaskRequestSchema,
  DeleteTaskPushNotificationConfigRequestSchema,
  GetTaskRequestSchema,
  ListTaskPushNotificationConfigsRequestSchema,
  MessageSchema,
  PartSchema,
  Role,
  SendMessageConfigurationSchema,
  SendMessageRequestSchema,
  SubscribeToTaskRequestSchema,
  TaskPushNotificationConfigSchema,
  type CancelTaskRequest,
  type DeleteTaskPushNotificationConfigRequest,
  type GetTaskRequest,
  type ListTaskPushNotificationConfigsRequest,
  type Message,
  type Part,
  type SendMessageRequest,
  type SubscribeToTaskRequest,
  type TaskPushNotificationConfig,
} from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import {
  invalid,
  isObject,
  join,
  objectAt,
  optionalBoolean,
  optionalCount,
  optionalObject,
  optionalString,
  optionalStrings,
  requiredString,
  type JsonFields,
} from "./v03-json-reader.js";

/*
 * The v0.3 JSON-RPC model (upstream/v0.3.0/a2a.json) in, the v1.0 requests of the face out
 * (R-V03-20..38, the tables of R-V03-22). Everything a v0.3 client sends has a v1.0 home
 * (R-V03-37); what v1.0 has no field for (metadata of Get/Subscribe/push-config params) is
 * dropped, as R-V03-22 says. Bad input throws InvalidRequestError (-32602) naming the field.
 */

/** R-V03-36 (BQ-11): the SDK's flag on a data part that wraps a non-object value as {"value": v}. */
export const DATA_PART_COMPAT = "data_part_compat";

/** message/send and message/stream: MessageSendParams → SendMessageRequest. */
export function sendMessageRequestFromV03(params: JsonValue): SendMessageRequest {
  const fields = objectAt(params, "params");
  // R-V03-23: the v0.3 §9.4 example puts messageId beside message; the schema has it inside.
  if (fields["messageId"] !== undefined) invalid("messageId", "belongs inside message, not beside it");
  if (fields["message"] === undefined || fields["message"] === null) invalid("message", "is required");
  const configuration = optionalObject(fields, "configuration", "");
  return create(SendMessageRequestSchema, {
    message: messageFromV03(fields["message"], "message"),
    configuration: configuration === undefined ? undefined : configurationFromV03(configuration),
    metadata: optionalObject(fields, "metadata", ""),
  });
}

function configurationFromV03(fields: JsonFields): ReturnType<typeof create<typeof SendMessageConfigurationSchema>> {
  const push = optionalObject(fields, "pushNotificationConfig", "configuration");
  return create(SendMessageConfigurationSchema, {
    acceptedOutputModes: optionalStrings(fields, "acceptedOutputModes", "configuration"),
    historyLength: historyLengthFromV03(fields, "configuration"),
    // R-V03-30 (BQ-5a): absent or true = blocking; only false returns at once.
    returnImmediately: optionalBoolean(fields, "blocking", "configuration") === false,
    taskPushNotificationConfig: push === undefined ? undefined : pushConfigFromV03(push, "configuration.pushNotificationConfig", ""),
  });
}

/** R-V03-31 (BQ-17): 0 or absent = no client limit (v1.0: field unset); N > 0 = the last N. */
function historyLengthFromV03(fields: JsonFields, path: string): number | undefined {
  const length = optionalCount(fields, "historyLength", path);
  return length === 0 ? undefined : length;
}

/** A v0.3 Message (kind "message", tolerated when absent: R-V03-20). */
export function messageFromV03(value: JsonValue | undefined, path: string): Message {
  const fields = objectAt(value, path);
  const kind = fields["kind"];
  if (kind !== undefined && kind !== null && kind !== "message") invalid(join(path, "kind"), 'must be "message"');
  const parts = fields["parts"];
  if (!Array.isArray(parts)) invalid(join(path, "parts"), "must be an array of parts");
  return create(MessageSchema, {
    messageId: requiredString(fields, "messageId", path),
    contextId: optionalString(fields, "contextId", path) ?? "",
    taskId: optionalString(fields, "taskId", path) ?? "",
    role: roleFromV03(fields, path),
    parts: parts.map((part, index) => partFromV03(part, `${join(path, "parts")}[${index}]`)),
    metadata: optionalObject(fields, "metadata", path),
    extensions: optionalStrings(fields, "extensions", path),
    referenceTaskIds: optionalStrings(fields, "referenceTaskIds", path),
  });
}

function roleFromV03(fields: JsonFields, path: string): Role {
  const role = fields["role"];
  if (role === "user") return Role.USER;
  if (role === "agent") return Role.AGENT;
  return invalid(join(path, "role"), 'must be "user" or "agent"');
}

/** A v0.3 part: `kind` decides its shape and is required (R-V03-20). */
export function partFromV03(value: JsonValue | undefined, path: string): Part {
  const fields = objectAt(value, path);
  const metadata = optionalObject(fields, "metadata", path);
  switch (fields["kind"]) {
    case "text":
      return create(PartSchema, { content: { case: "text", value: requiredString(fields, "text", path) }, metadata });
    case "file":
      return filePartFromV03(fields, path, metadata);
    case "data":
      return dataPartFromV03(fields, path, metadata);
    default:
      return invalid(join(path, "kind"), 'is required and must be "text", "file" or "data"');
  }
}

/**
 * R-V03-38: exactly one of file.bytes (base64) and file.uri; mimeType and name carried over. The
 * names the specs' own examples use are accepted too: `data` (v0.3 §9.3) and `fileWithBytes`
 * (v1.0 Appendix A.2.1) for bytes, `fileWithUri` beside it for uri.
 */
function filePartFromV03(fields: JsonFields, path: string, metadata: JsonObject | undefined): Part {
  const filePath = join(path, "file");
  const file = objectAt(fields["file"], filePath);
  const given = FILE_CONTENT_NAMES.flatMap((name) => {
    const text = optionalString(file, name, filePath);
    return text === undefined ? [] : [{ name, text }];
  });
  if (given.length !== 1) invalid(filePath, "must have exactly one of bytes and uri");
  const { name, text } = given[0]!;
  const mediaType = optionalString(file, "mimeType", filePath) ?? "";
  const filename = optionalString(file, "name", filePath) ?? "";
  const content = URI_NAMES.has(name) ? { case: "url" as const, value: text } : { case: "raw" as const, value: base64Bytes(text, join(filePath, name)) };
  return create(PartSchema, { content, mediaType, filename, metadata });
}

const FILE_CONTENT_NAMES = ["bytes", "data", "fileWithBytes", "uri", "fileWithUri"] as const;
const URI_NAMES: ReadonlySet<string> = new Set(["uri", "fileWithUri"]);

/** R-BIND-27: standard or URL-safe base64, padded or not. */
function base64Bytes(text: string, path: string): Uint8Array {
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(text) || text.replace(/=+$/, "").length % 4 === 1) invalid(path, "must be base64");
  return new Uint8Array(Buffer.from(text, "base64"));
}

/** R-V03-36: a part the SDK wrapped ({"value": v} + data_part_compat) is unwrapped to v, the flag dropped. */
function dataPartFromV03(fields: JsonFields, path: string, metadata: JsonObject | undefined): Part {
  const data = fields["data"];
  if (data === undefined) invalid(join(path, "data"), "is required");
  if (metadata?.[DATA_PART_COMPAT] === true && isObject(data) && "value" in data) {
    const { [DATA_PART_COMPAT]: _flag, ...rest } = metadata;
    const kept = Object.keys(rest).length > 0 ? rest : undefined;
    return create(PartSchema, { content: { case: "data", value: fromJson(ValueSchema, data["value"]!) }, metadata: kept });
  }
  return create(PartSchema, { content: { case: "data", value: fromJson(ValueSchema, data) }, metadata });
}

/**
 * A v0.3 PushNotificationConfig as the v1.0 flat config of task `taskId` (R-V03-22):
 * authentication.schemes[] holds one scheme at most (R-V03-35).
 */
export function pushConfigFromV03(fields: JsonFields, path: string, taskId: string): TaskPushNotificationConfig {
  const auth = optionalObject(fields, "authentication", path);
  const authPath = join(path, "authentication");
  let authentication: ReturnType<typeof create<typeof AuthenticationInfoSchema>> | undefined;
  if (auth !== undefined) {
    const schemes = optionalStrings(auth, "schemes", authPath);
    if (schemes.length > 1) invalid(join(authPath, "schemes"), "holds one scheme at most on this server");
    authentication = create(AuthenticationInfoSchema, { scheme: schemes[0] ?? "", credentials: optionalString(auth, "credentials", authPath) ?? "" });
  }
  return create(TaskPushNotificationConfigSchema, {
    taskId,
    id: optionalString(fields, "id", path) ?? "",
    url: requiredString(fields, "url", path),
    token: optionalString(fields, "token", path) ?? "",
    authentication,
  });
}

/** tasks/get: TaskQueryParams {id, historyLength?, metadata?}. */
export function getTaskRequestFromV03(params: JsonValue): GetTaskRequest {
  const fields = objectAt(params, "params");
  return create(GetTaskRequestSchema, { id: requiredString(fields, "id", ""), historyLength: historyLengthFromV03(fields, "") });
}

/** tasks/cancel: TaskIdParams {id, metadata?}; the metadata goes with the cancel (R-V03-22). */
export function cancelTaskRequestFromV03(params: JsonValue): CancelTaskRequest {
  const fields = objectAt(params, "params");
  return create(CancelTaskRequestSchema, { id: requiredString(fields, "id", ""), metadata: optionalObject(fields, "metadata", "") });
}

/** tasks/resubscribe: TaskIdParams. */
export function subscribeRequestFromV03(params: JsonValue): SubscribeToTaskRequest {
  const fields = objectAt(params, "params");
  return create(SubscribeToTaskRequestSchema, { id: requiredString(fields, "id", "") });
}

/** tasks/pushNotificationConfig/set: TaskPushNotificationConfig {taskId, pushNotificationConfig}. */
export function setPushConfigRequestFromV03(params: JsonValue): TaskPushNotificationConfig {
  const fields = objectAt(params, "params");
  const taskId = requiredString(fields, "taskId", "");
  const config = fields["pushNotificationConfig"];
  if (config === undefined || config === null) invalid("pushNotificationConfig", "is required");
  return pushConfigFromV03(objectAt(config, "pushNotificationConfig"), "pushNotificationConfig", taskId);
}

/** tasks/pushNotificationConfig/get: {id, pushNotificationConfigId?}; without a config id R-V03-34 picks one. */
export function getPushConfigParamsFromV03(params: JsonValue): { readonly taskId: string; readonly configId: string | undefined } {
  const fields = objectAt(params, "params");
  return { taskId: requiredString(fields, "id", ""), configId: optionalString(fields, "pushNotificationConfigId", "") };
}

/** tasks/pushNotificationConfig/list: {id}; all of the task's configs (R-V03-62), so the page is the largest. */
export function listPushConfigsRequestFromV03(params: JsonValue, pageToken = ""): ListTaskPushNotificationConfigsRequest {
  const fields = objectAt(params, "params");
  return create(ListTaskPushNotificationConfigsRequestSchema, { taskId: requiredString(fields, "id", ""), pageToken });
}

/** tasks/pushNotificationConfig/delete: {id, pushNotificationConfigId}. */
export function deletePushConfigRequestFromV03(params: JsonValue): DeleteTaskPushNotificationConfigRequest {
  const fields = objectAt(params, "params");
  return create(DeleteTaskPushNotificationConfigRequestSchema, {
    taskId: requiredString(fields, "id", ""),
    id: requiredString(fields, "pushNotificationConfigId", ""),
  });
}
