import { toJson, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { timestampDate, ValueSchema } from "@bufbuild/protobuf/wkt";
import {
  Role,
  TaskState,
  type Artifact,
  type Message,
  type Part,
  type SendMessageResponse,
  type StreamResponse,
  type Task,
  type TaskArtifactUpdateEvent,
  type TaskPushNotificationConfig,
  type TaskStatus,
  type TaskStatusUpdateEvent,
} from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { endsV03Stream } from "../v03-stream.js";
import { DATA_PART_COMPAT } from "./v03-json-to-v1.js";

/*
 * The v1.0 messages the face returns, out as the v0.3 JSON-RPC model (R-V03-20..36, the tables
 * of R-V03-22): every object carries its `kind`, states are kebab-case, results and events are
 * bare. What v0.3 has no field for is lost on the way out, and only on the way out (R-V03-37):
 * the mediaType/filename of text and data parts. Written field by field from the messages (no
 * ProtoJSON pass in between): this runs on every v0.3 result and stream event.
 */

type Json = { [key: string]: JsonValue };

const STATES: Readonly<Record<TaskState, string>> = {
  [TaskState.UNSPECIFIED]: "unknown",
  [TaskState.SUBMITTED]: "submitted",
  [TaskState.WORKING]: "working",
  [TaskState.COMPLETED]: "completed",
  [TaskState.FAILED]: "failed",
  [TaskState.CANCELED]: "canceled",
  [TaskState.INPUT_REQUIRED]: "input-required",
  [TaskState.REJECTED]: "rejected",
  [TaskState.AUTH_REQUIRED]: "auth-required",
};

/** The v0.3 name of a state (R-V03-22); a number the table lacks is "unknown". */
export function stateToV03(state: TaskState): string {
  return STATES[state] ?? "unknown";
}

export { endsV03Stream };

export function taskToV03(task: Task): Json {
  const json: Json = { kind: "task", id: task.id, contextId: task.contextId, status: statusToV03(task.status) };
  if (task.artifacts.length > 0) json["artifacts"] = task.artifacts.map(artifactToV03);
  if (task.history.length > 0) json["history"] = task.history.map(messageToV03);
  if (task.metadata !== undefined) json["metadata"] = task.metadata;
  return json;
}

function statusToV03(status: TaskStatus | undefined): Json {
  const json: Json = { state: stateToV03(status?.state ?? TaskState.UNSPECIFIED) };
  if (status?.message !== undefined) json["message"] = messageToV03(status.message);
  // R-BIND-26: UTC with Z, millisecond precision (timestamps are stored at ms).
  if (status?.timestamp !== undefined) json["timestamp"] = timestampDate(status.timestamp).toISOString();
  return json;
}

export function messageToV03(message: Message): Json {
  const json: Json = {
    kind: "message",
    messageId: message.messageId,
    role: message.role === Role.AGENT ? "agent" : "user",
    parts: message.parts.map(partToV03),
  };
  if (message.contextId !== "") json["contextId"] = message.contextId;
  if (message.taskId !== "") json["taskId"] = message.taskId;
  if (message.referenceTaskIds.length > 0) json["referenceTaskIds"] = message.referenceTaskIds;
  if (message.extensions.length > 0) json["extensions"] = message.extensions;
  if (message.metadata !== undefined) json["metadata"] = message.metadata;
  return json;
}

/** A part with its kind; file parts keep mimeType and name, text and data parts lose them (R-V03-37). */
export function partToV03(part: Part): Json {
  const { content } = part;
  switch (content.case) {
    case "text":
      return withMetadata({ kind: "text", text: content.value }, part.metadata);
    case "raw":
      return withMetadata({ kind: "file", file: fileToV03({ bytes: Buffer.from(content.value).toString("base64") }, part) }, part.metadata);
    case "url":
      return withMetadata({ kind: "file", file: fileToV03({ uri: content.value }, part) }, part.metadata);
    case "data":
      return dataPartToV03(toJson(ValueSchema, content.value), part.metadata);
    default:
      // A part without content never leaves the core; say so rather than invent a kind.
      return withMetadata({ kind: "text", text: "" }, part.metadata);
  }
}

function fileToV03(file: Json, part: Part): Json {
  if (part.mediaType !== "") file["mimeType"] = part.mediaType;
  if (part.filename !== "") file["name"] = part.filename;
  return file;
}

/** R-V03-36 (BQ-11): v0.3 data parts hold objects; any other value travels as {"value": v} with the SDK's flag. */
function dataPartToV03(data: JsonValue, metadata: JsonObject | undefined): Json {
  if (typeof data === "object" && data !== null && !Array.isArray(data)) return withMetadata({ kind: "data", data }, metadata);
  return { kind: "data", data: { value: data }, metadata: { ...metadata, [DATA_PART_COMPAT]: true } };
}

function withMetadata(json: Json, metadata: JsonObject | undefined): Json {
  if (metadata !== undefined) json["metadata"] = metadata;
  return json;
}

export function artifactToV03(artifact: Artifact): Json {
  const json: Json = { artifactId: artifact.artifactId, parts: artifact.parts.map(partToV03) };
  if (artifact.name !== "") json["name"] = artifact.name;
  if (artifact.description !== "") json["description"] = artifact.description;
  if (artifact.metadata !== undefined) json["metadata"] = artifact.metadata;
  if (artifact.extensions.length > 0) json["extensions"] = artifact.extensions;
  return json;
}

/** A status update with `final` (R-V03-32); `final` is computed unless the caller knows better. */
export function statusUpdateToV03(event: TaskStatusUpdateEvent, final = endsV03Stream(event.status?.state ?? TaskState.UNSPECIFIED)): Json {
  const json: Json = { kind: "status-update", taskId: event.taskId, contextId: event.contextId, status: statusToV03(event.status), final };
  if (event.metadata !== undefined) json["metadata"] = event.metadata;
  return json;
}

/** The status update a v0.3 stream ends with after a settled Task snapshot (BQ-18, BQ-19): the task's status, final. */
export function finalStatusUpdateToV03(task: Task): Json {
  const json: Json = { kind: "status-update", taskId: task.id, contextId: task.contextId, status: statusToV03(task.status), final: true };
  return json;
}

export function artifactUpdateToV03(event: TaskArtifactUpdateEvent): Json {
  const json: Json = { kind: "artifact-update", taskId: event.taskId, contextId: event.contextId };
  if (event.artifact !== undefined) json["artifact"] = artifactToV03(event.artifact);
  if (event.append) json["append"] = true;
  if (event.lastChunk) json["lastChunk"] = true;
  if (event.metadata !== undefined) json["metadata"] = event.metadata;
  return json;
}

/** message/send's result: the bare Task or Message (R-V03-10, R-V03-21). */
export function sendMessageResultToV03(response: SendMessageResponse): Json | null {
  const { payload } = response;
  if (payload.case === "task") return taskToV03(payload.value);
  if (payload.case === "message") return messageToV03(payload.value);
  return null;
}

/** A stream event as the bare v0.3 result of one SSE event (R-V03-21). */
export function streamEventToV03(event: StreamResponse): Json | null {
  const { payload } = event;
  switch (payload.case) {
    case "task":
      return taskToV03(payload.value);
    case "message":
      return messageToV03(payload.value);
    case "statusUpdate":
      return statusUpdateToV03(payload.value);
    case "artifactUpdate":
      return artifactUpdateToV03(payload.value);
    default:
      return null;
  }
}

/** The v0.3 TaskPushNotificationConfig: taskId outside, the config nested, schemes as a list (R-V03-22, -35). */
export function pushConfigToV03(config: TaskPushNotificationConfig): Json {
  const push: Json = { id: config.id, url: config.url };
  if (config.token !== "") push["token"] = config.token;
  if (config.authentication !== undefined) {
    const { scheme, credentials } = config.authentication;
    const authentication: Json = { schemes: scheme === "" ? [] : [scheme] };
    if (credentials !== "") authentication["credentials"] = credentials;
    push["authentication"] = authentication;
  }
  return { taskId: config.taskId, pushNotificationConfig: push };
}
