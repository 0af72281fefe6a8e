import { type JsonObject, type JsonValue, toJson } from "@bufbuild/protobuf";
import { timestampDate, ValueSchema } from "@bufbuild/protobuf/wkt";
import { type Artifact, type Message, type Part, Role, type Task, type TaskStatus, TaskState } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";

/*
 * A v1.0 Task in the v0.3 JSON model (R-V03-20/21/22, a2a.json of v0.3): objects carry `kind`,
 * states are kebab-case, parts are {kind: text|file|data}. What a v0.3 webhook receiver gets
 * (R-V03-71). (The v0.3 JSON-RPC endpoint has its own translation of the whole model; the two
 * agree on Task and may be merged.)
 */

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

export function taskToV03Json(task: Task): JsonObject {
  return {
    kind: "task",
    id: task.id,
    contextId: task.contextId,
    status: statusToV03(task.status),
    ...(task.artifacts.length > 0 ? { artifacts: task.artifacts.map(artifactToV03) } : {}),
    ...(task.history.length > 0 ? { history: task.history.map(messageToV03) } : {}),
    ...(task.metadata ? { metadata: task.metadata } : {}),
  };
}

function statusToV03(status: TaskStatus | undefined): JsonObject {
  return {
    state: STATES[status?.state ?? TaskState.UNSPECIFIED] ?? "unknown",
    ...(status?.message ? { message: messageToV03(status.message) } : {}),
    ...(status?.timestamp ? { timestamp: timestampDate(status.timestamp).toISOString() } : {}),
  };
}

function messageToV03(message: Message): JsonObject {
  return {
    kind: "message",
    messageId: message.messageId,
    role: message.role === Role.USER ? "user" : "agent",
    parts: partsToV03(message.parts),
    ...(message.contextId ? { contextId: message.contextId } : {}),
    ...(message.taskId ? { taskId: message.taskId } : {}),
    ...(message.referenceTaskIds.length > 0 ? { referenceTaskIds: [...message.referenceTaskIds] } : {}),
    ...(message.extensions.length > 0 ? { extensions: [...message.extensions] } : {}),
    ...(message.metadata ? { metadata: message.metadata } : {}),
  };
}

function artifactToV03(artifact: Artifact): JsonObject {
  return {
    artifactId: artifact.artifactId,
    ...(artifact.name ? { name: artifact.name } : {}),
    ...(artifact.description ? { description: artifact.description } : {}),
    parts: partsToV03(artifact.parts),
    ...(artifact.metadata ? { metadata: artifact.metadata } : {}),
    ...(artifact.extensions.length > 0 ? { extensions: [...artifact.extensions] } : {}),
  };
}

function partsToV03(parts: readonly Part[]): JsonObject[] {
  return parts.flatMap((part) => {
    const v03 = partToV03(part);
    return v03 === undefined ? [] : [v03];
  });
}

/** A part without content has no v0.3 form and is left out. */
function partToV03(part: Part): JsonObject | undefined {
  const metadata: JsonObject = part.metadata ? { ...part.metadata } : {};
  const file = (where: JsonObject): JsonObject => ({
    kind: "file",
    file: { ...where, ...(part.mediaType ? { mimeType: part.mediaType } : {}), ...(part.filename ? { name: part.filename } : {}) },
    ...(part.metadata ? { metadata } : {}),
  });
  const { content } = part;
  switch (content.case) {
    case "text":
      return { kind: "text", text: content.value, ...(part.metadata ? { metadata } : {}) };
    case "raw":
      return file({ bytes: Buffer.from(content.value).toString("base64") });
    case "url":
      return file({ uri: content.value });
    case "data":
      return dataToV03(toJson(ValueSchema, content.value), metadata);
    default:
      return undefined;
  }
}

/** v0.3 data parts hold objects: another value is wrapped, and flagged so it can be unwrapped (R-V03-36, BQ-11). */
function dataToV03(value: JsonValue, metadata: JsonObject): JsonObject {
  const isObject = typeof value === "object" && value !== null && !Array.isArray(value);
  if (isObject) return { kind: "data", data: value, ...(Object.keys(metadata).length > 0 ? { metadata } : {}) };
  return { kind: "data", data: { value }, metadata: { ...metadata, data_part_compat: true } };
}
