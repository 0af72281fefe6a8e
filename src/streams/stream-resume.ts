import type { JsonObject } from "@bufbuild/protobuf";
import { create } from "@bufbuild/protobuf";
import { AgentExtensionSchema, type AgentExtension, type StreamResponse, type TaskStatus } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { statusUpdateLiteral, streamResponseLiteral, taskStatusLiteral } from "../lifecycle/index.js";

/**
 * The stream-resume extension (ruling A-33), as declared in the agent card. A client that lists
 * it in `a2a-extensions` gets, in every stream event's `metadata` under this URI, an object
 * `{ "cursor": "<opaque>" }`; SubscribeToTask with the metadata header RESUME_CURSOR_HEADER set
 * to the last cursor it holds returns exactly the events after it (no snapshot). A silent
 * stream gets heartbeats: a status update repeating the task's last status, whose metadata
 * under this URI is `{ "heartbeat": true }` (and no cursor), so a client that knows the
 * extension skips it and one that does not sees an update that changes nothing.
 */
export const STREAM_RESUME_EXTENSION = "urn:a2a-grpc-server:extension:stream-resume:v1";
export const RESUME_CURSOR_HEADER = "stream-resume-cursor";

/** Longest cursor accepted (ours are far shorter): anything longer is not one of ours. */
const MAX_CURSOR_LENGTH = 512;
const CURSOR_FORMAT = /^v1:(\d{1,15}):([\s\S]+)$/;

/** The opaque cursor of a task's event: the task and the version the event brought it to. */
export function encodeCursor(taskId: string, version: number): string {
  return Buffer.from(`v1:${version}:${taskId}`).toString("base64url");
}

/** The task and version a cursor names, or undefined if it is not a cursor this server made. */
export function decodeCursor(cursor: string): { taskId: string; version: number } | undefined {
  if (cursor.length === 0 || cursor.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(cursor)) return undefined;
  const match = CURSOR_FORMAT.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  if (match === null) return undefined;
  return { taskId: match[2]!, version: Number(match[1]) };
}

/** `response` with its cursor in its metadata under the extension's URI; a bare message (no task) has none. */
export function withCursor(response: StreamResponse, version: number): StreamResponse {
  const { payload } = response;
  switch (payload.case) {
    case "task": {
      const task = payload.value;
      return streamResponseLiteral({ case: "task", value: { ...task, metadata: marked(task.metadata, encodeCursor(task.id, version)) } });
    }
    case "statusUpdate": {
      const update = payload.value;
      return streamResponseLiteral({ case: "statusUpdate", value: { ...update, metadata: marked(update.metadata, encodeCursor(update.taskId, version)) } });
    }
    case "artifactUpdate": {
      const update = payload.value;
      return streamResponseLiteral({ case: "artifactUpdate", value: { ...update, metadata: marked(update.metadata, encodeCursor(update.taskId, version)) } });
    }
    default:
      return response;
  }
}

/** A heartbeat for a silent stream: its task's last status again, marked so clients can skip it. */
export function heartbeat(taskId: string, contextId: string, status: TaskStatus): StreamResponse {
  // Without the status message: a client that does not know the extension must not see it twice.
  const update = statusUpdateLiteral(taskId, contextId, taskStatusLiteral(status.state, undefined, status.timestamp!));
  update.metadata = { [STREAM_RESUME_EXTENSION]: { heartbeat: true } };
  return streamResponseLiteral({ case: "statusUpdate", value: update });
}

/** Whether a received event is a heartbeat of this extension (what a client checks). */
export function isHeartbeat(metadata: JsonObject | undefined): boolean {
  const mark = metadata?.[STREAM_RESUME_EXTENSION];
  return typeof mark === "object" && mark !== null && !Array.isArray(mark) && mark.heartbeat === true;
}

function marked(metadata: JsonObject | undefined, cursor: string): JsonObject {
  return { ...metadata, [STREAM_RESUME_EXTENSION]: { cursor } };
}

/** The extension as the agent card declares it: optional, with what a client needs to use it in `params`. */
export function streamResumeDeclaration(retentionMs: number, heartbeatMs: number | null): AgentExtension {
  return create(AgentExtensionSchema, {
    uri: STREAM_RESUME_EXTENSION,
    description:
      "Resumable streams: with this extension activated, every stream event carries an opaque cursor in its metadata under this URI; " +
      `SubscribeToTask with the metadata header ${RESUME_CURSOR_HEADER} set to the last cursor returns exactly the events after it. ` +
      "A cursor older than the retained events is FAILED_PRECONDITION (reason STREAM_CURSOR_EXPIRED): subscribe without it. " +
      "Heartbeats (metadata {heartbeat: true} under this URI) repeat the last status and are to be ignored.",
    required: false,
    params: {
      cursor_header: RESUME_CURSOR_HEADER,
      retention_seconds: Math.floor(retentionMs / 1000),
      heartbeat_seconds: heartbeatMs === null ? 0 : heartbeatMs / 1000,
    },
  });
}
