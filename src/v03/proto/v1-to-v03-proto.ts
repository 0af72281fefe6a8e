import { create, toJson, type JsonObject } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import {
  AgentCapabilitiesSchema,
  AgentCardSchema,
  AgentInterfaceSchema,
  AgentSkillSchema,
  ArtifactSchema,
  AuthenticationInfoSchema,
  DataPartSchema,
  FilePartSchema,
  ListTaskPushNotificationConfigResponseSchema,
  MessageSchema,
  OAuthFlowsSchema,
  PartSchema,
  PushNotificationConfigSchema,
  SecuritySchema,
  SecuritySchemeSchema,
  SendMessageResponseSchema,
  StreamResponseSchema,
  TaskArtifactUpdateEventSchema,
  TaskPushNotificationConfigSchema,
  TaskSchema,
  TaskStatusSchema,
  TaskStatusUpdateEventSchema,
  type AgentCard,
  type Artifact,
  type ListTaskPushNotificationConfigResponse,
  type Message,
  type OAuthFlows,
  type Part,
  type Role,
  type Security,
  type SecurityScheme,
  type SendMessageResponse,
  type StreamResponse,
  type Task,
  type TaskPushNotificationConfig,
  type TaskState,
  type TaskStatus,
  type TaskStatusUpdateEvent,
} from "../../../gen/es/a2a/v1/a2a_pb.js";
import type * as v1 from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { TaskState as V1TaskState } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { endsV03Stream } from "../v03-stream.js";
import { configName } from "./resource-names.js";

/*
 * v1.0 answers (tasks, messages, stream events, push configs, the card) as messages of the
 * v0.3 proto (a2a.v1), by the tables of R-V03-22 and R-V03-50/52. What v0.3 cannot carry is
 * dropped, one way only (R-V03-37): part metadata, mediaType of text/data parts, filename,
 * referenceTaskIds, the device-code OAuth flow, pkceRequired, iconUrl, the card's signatures
 * (a v1.0 signature does not verify over another document).
 */

/** TaskState numbers are the same in both versions; only the name of 5 differs (CANCELED / CANCELLED). */
function stateToV03(state: V1TaskState): TaskState {
  return state as number as TaskState;
}

export function taskToV03(task: v1.Task): Task {
  return create(TaskSchema, {
    id: task.id,
    contextId: task.contextId,
    status: task.status && statusToV03(task.status),
    artifacts: task.artifacts.map(artifactToV03),
    history: task.history.map(messageToV03),
    metadata: task.metadata,
  });
}

/** status.message is `update` in v0.3 (ProtoJSON name `message`). */
export function statusToV03(status: v1.TaskStatus): TaskStatus {
  return create(TaskStatusSchema, {
    state: stateToV03(status.state),
    update: status.message && messageToV03(status.message),
    timestamp: status.timestamp,
  });
}

/** parts → content; referenceTaskIds has no v0.3 proto field. */
export function messageToV03(message: v1.Message): Message {
  return create(MessageSchema, {
    messageId: message.messageId,
    contextId: message.contextId,
    taskId: message.taskId,
    role: message.role as number as Role,
    content: message.parts.map(partToV03),
    metadata: message.metadata,
    extensions: message.extensions,
  });
}

/** text → text; raw/url → file bytes/uri (mediaType → mimeType); data: an object as is, any other value as {"value": v} (R-V03-36). */
export function partToV03(part: v1.Part): Part {
  const content = part.content;
  switch (content.case) {
    case "text":
      return create(PartSchema, { part: { case: "text", value: content.value } });
    case "raw":
      return create(PartSchema, {
        part: { case: "file", value: create(FilePartSchema, { file: { case: "fileWithBytes", value: content.value }, mimeType: part.mediaType }) },
      });
    case "url":
      return create(PartSchema, {
        part: { case: "file", value: create(FilePartSchema, { file: { case: "fileWithUri", value: content.value }, mimeType: part.mediaType }) },
      });
    case "data": {
      const json = toJson(ValueSchema, content.value);
      const data: JsonObject = json !== null && typeof json === "object" && !Array.isArray(json) ? json : { value: json };
      return create(PartSchema, { part: { case: "data", value: create(DataPartSchema, { data }) } });
    }
    default:
      return create(PartSchema);
  }
}

export function artifactToV03(artifact: v1.Artifact): Artifact {
  return create(ArtifactSchema, {
    artifactId: artifact.artifactId,
    name: artifact.name,
    description: artifact.description,
    parts: artifact.parts.map(partToV03),
    metadata: artifact.metadata,
    extensions: artifact.extensions,
  });
}

export function statusUpdateToV03(event: v1.TaskStatusUpdateEvent): TaskStatusUpdateEvent {
  return create(TaskStatusUpdateEventSchema, {
    taskId: event.taskId,
    contextId: event.contextId,
    status: event.status && statusToV03(event.status),
    final: event.status !== undefined && endsV03Stream(event.status.state),
    metadata: event.metadata,
  });
}

/** The closing status update a v0.3 stream gets when it would end on a Task snapshot (BQ-18, R-V03-33). */
export function finalStatusUpdateOf(task: v1.Task): StreamResponse {
  return create(StreamResponseSchema, {
    payload: {
      case: "statusUpdate",
      value: create(TaskStatusUpdateEventSchema, { taskId: task.id, contextId: task.contextId, status: task.status && statusToV03(task.status), final: true }),
    },
  });
}

export function sendMessageResponseToV03(response: v1.SendMessageResponse): SendMessageResponse {
  const payload = response.payload;
  if (payload.case === "task") return create(SendMessageResponseSchema, { payload: { case: "task", value: taskToV03(payload.value) } });
  if (payload.case === "message") return create(SendMessageResponseSchema, { payload: { case: "msg", value: messageToV03(payload.value) } });
  return create(SendMessageResponseSchema);
}

export function streamResponseToV03(response: v1.StreamResponse): StreamResponse {
  const payload = response.payload;
  switch (payload.case) {
    case "task":
      return create(StreamResponseSchema, { payload: { case: "task", value: taskToV03(payload.value) } });
    case "message":
      return create(StreamResponseSchema, { payload: { case: "msg", value: messageToV03(payload.value) } });
    case "statusUpdate":
      return create(StreamResponseSchema, { payload: { case: "statusUpdate", value: statusUpdateToV03(payload.value) } });
    case "artifactUpdate": {
      const event = payload.value;
      return create(StreamResponseSchema, {
        payload: {
          case: "artifactUpdate",
          value: create(TaskArtifactUpdateEventSchema, {
            taskId: event.taskId,
            contextId: event.contextId,
            artifact: event.artifact && artifactToV03(event.artifact),
            append: event.append,
            lastChunk: event.lastChunk,
            metadata: event.metadata,
          }),
        },
      });
    }
    default:
      return create(StreamResponseSchema);
  }
}

/** The flat v1.0 config as the v0.3 one: `name` = tasks/{task}/pushNotificationConfigs/{id}, scheme → schemes[] (R-V03-35). */
export function pushConfigToV03(config: v1.TaskPushNotificationConfig): TaskPushNotificationConfig {
  const authentication = config.authentication;
  return create(TaskPushNotificationConfigSchema, {
    name: configName(config.taskId, config.id),
    pushNotificationConfig: create(PushNotificationConfigSchema, {
      id: config.id,
      url: config.url,
      token: config.token,
      authentication:
        authentication &&
        create(AuthenticationInfoSchema, { schemes: authentication.scheme === "" ? [] : [authentication.scheme], credentials: authentication.credentials }),
    }),
  });
}

export function listPushConfigsResponseToV03(response: v1.ListTaskPushNotificationConfigsResponse): ListTaskPushNotificationConfigResponse {
  return create(ListTaskPushNotificationConfigResponseSchema, { configs: response.configs.map(pushConfigToV03), nextPageToken: response.nextPageToken });
}

/** A2A generation of the interfaces a v0.3 card lists (R-V03-50). */
const V03_VERSION = "0.3";

/**
 * The card as the v0.3 proto's AgentCard (R-V03-50, R-V03-52): url and preferredTransport from the
 * first 0.3 interface (else the first interface), additionalInterfaces = every 0.3 interface,
 * supportsAuthenticatedExtendedCard from capabilities.extendedAgentCard, security schemes in
 * their oneof shape.
 */
export function agentCardToV03(card: v1.AgentCard): AgentCard {
  const v03Interfaces = card.supportedInterfaces.filter((itf) => itf.protocolVersion === V03_VERSION);
  const main = v03Interfaces[0] ?? card.supportedInterfaces[0];
  const capabilities = card.capabilities;
  return create(AgentCardSchema, {
    protocolVersion: V03_VERSION,
    name: card.name,
    description: card.description,
    url: main?.url ?? "",
    preferredTransport: main?.protocolBinding ?? "",
    additionalInterfaces: v03Interfaces.map((itf) => create(AgentInterfaceSchema, { url: itf.url, transport: itf.protocolBinding })),
    provider: card.provider && { url: card.provider.url, organization: card.provider.organization },
    version: card.version,
    documentationUrl: card.documentationUrl ?? "",
    capabilities: create(AgentCapabilitiesSchema, {
      streaming: capabilities?.streaming === true,
      pushNotifications: capabilities?.pushNotifications === true,
      extensions: (capabilities?.extensions ?? []).map((ext) => ({ uri: ext.uri, description: ext.description, required: ext.required, params: ext.params })),
    }),
    securitySchemes: Object.fromEntries(Object.entries(card.securitySchemes).map(([name, scheme]) => [name, securitySchemeToV03(scheme)])),
    security: card.securityRequirements.map(securityToV03),
    defaultInputModes: card.defaultInputModes,
    defaultOutputModes: card.defaultOutputModes,
    skills: card.skills.map((skill) =>
      create(AgentSkillSchema, {
        id: skill.id,
        name: skill.name,
        description: skill.description,
        tags: skill.tags,
        examples: skill.examples,
        inputModes: skill.inputModes,
        outputModes: skill.outputModes,
        security: skill.securityRequirements.map(securityToV03),
      }),
    ),
    supportsAuthenticatedExtendedCard: capabilities?.extendedAgentCard === true,
  });
}

function securityToV03(requirement: v1.SecurityRequirement): Security {
  return create(SecuritySchema, {
    schemes: Object.fromEntries(Object.entries(requirement.schemes).map(([name, scopes]) => [name, { list: scopes.list }])),
  });
}

function securitySchemeToV03(scheme: v1.SecurityScheme): SecurityScheme {
  const s = scheme.scheme;
  switch (s.case) {
    case "apiKeySecurityScheme":
      return create(SecuritySchemeSchema, {
        scheme: { case: s.case, value: { description: s.value.description, location: s.value.location, name: s.value.name } },
      });
    case "httpAuthSecurityScheme":
      return create(SecuritySchemeSchema, {
        scheme: { case: s.case, value: { description: s.value.description, scheme: s.value.scheme, bearerFormat: s.value.bearerFormat } },
      });
    case "oauth2SecurityScheme":
      return create(SecuritySchemeSchema, {
        scheme: {
          case: s.case,
          value: { description: s.value.description, flows: s.value.flows && flowsToV03(s.value.flows), oauth2MetadataUrl: s.value.oauth2MetadataUrl },
        },
      });
    case "openIdConnectSecurityScheme":
      return create(SecuritySchemeSchema, {
        scheme: { case: s.case, value: { description: s.value.description, openIdConnectUrl: s.value.openIdConnectUrl } },
      });
    case "mtlsSecurityScheme":
      return create(SecuritySchemeSchema, { scheme: { case: s.case, value: { description: s.value.description } } });
    default:
      return create(SecuritySchemeSchema);
  }
}

/** The four flows v0.3 knows; the device-code flow and pkceRequired have no v0.3 field. */
function flowsToV03(flows: v1.OAuthFlows): OAuthFlows {
  const f = flows.flow;
  switch (f.case) {
    case "authorizationCode":
      return create(OAuthFlowsSchema, {
        flow: {
          case: f.case,
          value: { authorizationUrl: f.value.authorizationUrl, tokenUrl: f.value.tokenUrl, refreshUrl: f.value.refreshUrl, scopes: f.value.scopes },
        },
      });
    case "clientCredentials":
    case "password":
      return create(OAuthFlowsSchema, {
        flow: { case: f.case, value: { tokenUrl: f.value.tokenUrl, refreshUrl: f.value.refreshUrl, scopes: f.value.scopes } },
      });
    case "implicit":
      return create(OAuthFlowsSchema, {
        flow: { case: f.case, value: { authorizationUrl: f.value.authorizationUrl, refreshUrl: f.value.refreshUrl, scopes: f.value.scopes } },
      });
    default:
      return create(OAuthFlowsSchema);
  }
}
