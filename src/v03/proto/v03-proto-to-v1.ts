import { create, fromJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import type * as v03 from "../../../gen/es/a2a/v1/a2a_pb.js";
import {
  AuthenticationInfoSchema,
  CancelTaskRequestSchema,
  DeleteTaskPushNotificationConfigRequestSchema,
  GetTaskPushNotificationConfigRequestSchema,
  GetTaskRequestSchema,
  ListTaskPushNotificationConfigsRequestSchema,
  MessageSchema,
  PartSchema,
  SendMessageConfigurationSchema,
  SendMessageRequestSchema,
  SubscribeToTaskRequestSchema,
  TaskPushNotificationConfigSchema,
  type AuthenticationInfo,
  type CancelTaskRequest,
  type DeleteTaskPushNotificationConfigRequest,
  type GetTaskPushNotificationConfigRequest,
  type GetTaskRequest,
  type ListTaskPushNotificationConfigsRequest,
  type Message,
  type Part,
  type Role,
  type SendMessageConfiguration,
  type SendMessageRequest,
  type SubscribeToTaskRequest,
  type TaskPushNotificationConfig,
} from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { InvalidRequestError } from "../../lifecycle/index.js";
import { parseConfigName, parseTaskName } from "./resource-names.js";

/*
 * Requests of the v0.3 proto (a2a.v1, gRPC 0.3 and, as ProtoJSON, REST 0.3) into the v1.0
 * requests the face handles, by the tables of R-V03-22. Nothing a v0.3 client sends is lost
 * (R-V03-37); what v1.0 cannot take is INVALID_ARGUMENT naming the v0.3 field (snake_case, BQ-10).
 * Tenant: v0.3 has none; requests run under the default tenant "" (R-V03-61).
 */

/** SendMessage / SendStreamingMessage (R-V03-30: configuration absent → blocking; R-V03-31: history 0 → no limit). */
export function sendMessageRequestToV1(request: v03.SendMessageRequest): SendMessageRequest {
  if (request.request === undefined) throw InvalidRequestError.field("request", "the message to send must be set");
  return create(SendMessageRequestSchema, {
    message: messageToV1(request.request, "request"),
    configuration: request.configuration && configurationToV1(request.configuration),
    metadata: request.metadata,
  });
}

function configurationToV1(configuration: v03.SendMessageConfiguration): SendMessageConfiguration {
  const push = configuration.pushNotification;
  return create(SendMessageConfigurationSchema, {
    acceptedOutputModes: configuration.acceptedOutputModes,
    taskPushNotificationConfig: push && pushConfigToV1(push, "", push.id, "configuration.push_notification"),
    historyLength: historyLengthToV1(configuration.historyLength, "configuration.history_length"),
    // proto3 cannot tell an unset bool from false: a configuration that is sent says what it means.
    returnImmediately: !configuration.blocking,
  });
}

/** v0.3 history_length: 0 = no limit (BQ-17), N > 0 = the last N, negative = invalid. */
function historyLengthToV1(historyLength: number, field: string): number | undefined {
  if (historyLength < 0) throw InvalidRequestError.field(field, "must be 0 (no limit) or positive");
  return historyLength === 0 ? undefined : historyLength;
}

/** A v0.3 Message (`content`) as a v1.0 Message (`parts`); `field` is its path in the request. */
export function messageToV1(message: v03.Message, field: string): Message {
  return create(MessageSchema, {
    messageId: message.messageId,
    contextId: message.contextId,
    taskId: message.taskId,
    role: message.role as number as Role, // the same numbers in both versions (R-V03-12)
    parts: message.content.map((part, i) => partToV1(part, `${field}.content[${i}]`)),
    metadata: message.metadata,
    extensions: message.extensions,
  });
}

/** text → text; file bytes/uri → raw/url with mimeType → mediaType; data (Struct) → data (Value). */
export function partToV1(part: v03.Part, field: string): Part {
  switch (part.part.case) {
    case "text":
      return create(PartSchema, { content: { case: "text", value: part.part.value } });
    case "file": {
      const file = part.part.value;
      if (file.file.case === "fileWithBytes") return create(PartSchema, { content: { case: "raw", value: file.file.value }, mediaType: file.mimeType });
      if (file.file.case === "fileWithUri") return create(PartSchema, { content: { case: "url", value: file.file.value }, mediaType: file.mimeType });
      throw InvalidRequestError.field(`${field}.file`, "a file part must have exactly one of file_with_uri or file_with_bytes");
    }
    case "data":
      return create(PartSchema, { content: { case: "data", value: fromJson(ValueSchema, part.part.value.data ?? {}) } });
    default:
      throw InvalidRequestError.field(field, "a part must have one of text, file or data");
  }
}

/** GetTask: `name` = tasks/{id}; history_length 0 = all (R-V03-31). */
export function getTaskRequestToV1(request: v03.GetTaskRequest): GetTaskRequest {
  return create(GetTaskRequestSchema, {
    id: parseTaskName(request.name, "name"),
    historyLength: historyLengthToV1(request.historyLength, "history_length"),
  });
}

export function cancelTaskRequestToV1(request: v03.CancelTaskRequest): CancelTaskRequest {
  return create(CancelTaskRequestSchema, { id: parseTaskName(request.name, "name") });
}

export function taskSubscriptionRequestToV1(request: v03.TaskSubscriptionRequest): SubscribeToTaskRequest {
  return create(SubscribeToTaskRequestSchema, { id: parseTaskName(request.name, "name") });
}

/**
 * CreateTaskPushNotificationConfig (R-V03-14): the task from `parent`; the config id from
 * `config_id`, else `config.push_notification_config.id`, else the server assigns one.
 * A `config.name` that names another task or config is refused (BQ-13).
 */
export function createPushConfigRequestToV1(request: v03.CreateTaskPushNotificationConfigRequest): TaskPushNotificationConfig {
  const taskId = parseTaskName(request.parent, "parent");
  const config = request.config?.pushNotificationConfig;
  if (config === undefined) throw InvalidRequestError.field("config.push_notification_config", "the push notification config must be set");
  const configId = request.configId !== "" ? request.configId : config.id;
  const name = request.config?.name ?? "";
  if (name !== "") {
    const named = parseConfigName(name, "config.name");
    if (named.taskId !== taskId) throw InvalidRequestError.field("config.name", "names another task than parent");
    if (configId !== "" && named.configId !== configId) throw InvalidRequestError.field("config.name", "names another config than config_id");
    return pushConfigToV1(config, taskId, named.configId, "config.push_notification_config");
  }
  return pushConfigToV1(config, taskId, configId, "config.push_notification_config");
}

/** A v0.3 PushNotificationConfig (nested, schemes[]) as the flat v1.0 config (R-V03-22, R-V03-35). */
export function pushConfigToV1(config: v03.PushNotificationConfig, taskId: string, configId: string, field: string): TaskPushNotificationConfig {
  return create(TaskPushNotificationConfigSchema, {
    id: configId,
    taskId,
    url: config.url,
    token: config.token,
    authentication: config.authentication && authenticationToV1(config.authentication, `${field}.authentication`),
  });
}

/** schemes[] → scheme (its one entry); more than one cannot be said in v1.0 (R-V03-35). */
function authenticationToV1(authentication: v03.AuthenticationInfo, field: string): AuthenticationInfo {
  if (authentication.schemes.length > 1) throw InvalidRequestError.field(`${field}.schemes`, "must list at most one scheme");
  return create(AuthenticationInfoSchema, { scheme: authentication.schemes[0] ?? "", credentials: authentication.credentials });
}

export function getPushConfigRequestToV1(request: v03.GetTaskPushNotificationConfigRequest): GetTaskPushNotificationConfigRequest {
  const { taskId, configId } = parseConfigName(request.name, "name");
  return create(GetTaskPushNotificationConfigRequestSchema, { taskId, id: configId });
}

export function deletePushConfigRequestToV1(request: v03.DeleteTaskPushNotificationConfigRequest): DeleteTaskPushNotificationConfigRequest {
  const { taskId, configId } = parseConfigName(request.name, "name");
  return create(DeleteTaskPushNotificationConfigRequestSchema, { taskId, id: configId });
}

export function listPushConfigsRequestToV1(request: v03.ListTaskPushNotificationConfigRequest): ListTaskPushNotificationConfigsRequest {
  return create(ListTaskPushNotificationConfigsRequestSchema, {
    taskId: parseTaskName(request.parent, "parent"),
    pageSize: request.pageSize,
    pageToken: request.pageToken,
  });
}
