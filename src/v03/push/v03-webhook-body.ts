import { create, fromBinary } from "@bufbuild/protobuf";
import { type StreamResponse, StreamResponseSchema, type Task, TaskSchema } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { TaskRepository } from "../../lifecycle/index.js";
import type { OutboxEntry } from "../../push/ports/push-outbox.js";
import type { WebhookBodyEncoder } from "../../push/ports/webhook-body.js";
import { taskToV03Json } from "./task-json.js";

/** v0.3 webhooks are plain JSON (v0.3 §9.5), not A-9's application/a2a+json. */
export const V03_WEBHOOK_CONTENT_TYPE = "application/json";

/**
 * The body of a webhook for a config made by a v0.3 call (R-V03-71): the Task as v0.3 JSON, as
 * v0.3 receivers expect it (v0.3 §9.5). An entry holding a snapshot (an inline config's first
 * event) is that task; for an update the task is read as stored, and a status update puts its
 * own status on it, so each webhook reports the state of its own event even when the task has
 * moved on since (history and artifacts are then as read).
 */
export function v03WebhookBody(tasks: TaskRepository): WebhookBodyEncoder {
  return {
    contentType: V03_WEBHOOK_CONTENT_TYPE,
    encode: async (entry) => JSON.stringify(taskToV03Json(await taskAfter(tasks, entry))),
  };
}

async function taskAfter(tasks: TaskRepository, entry: OutboxEntry): Promise<Task> {
  let event: StreamResponse;
  try {
    event = fromBinary(StreamResponseSchema, entry.event);
  } catch {
    event = create(StreamResponseSchema); // bytes that do not decode (not written by this server): the task as stored
  }
  const { payload } = event;
  if (payload.case === "task") return payload.value;
  // A task removed since (retention) is told from the event alone.
  const stored = await Promise.resolve(tasks.get(entry.scope, entry.taskId)).catch(() => undefined);
  const task = stored?.task ?? create(TaskSchema, { id: entry.taskId, contextId: payload.value?.contextId ?? "" });
  if (payload.case === "statusUpdate") task.status = payload.value.status;
  else if (payload.case === "artifactUpdate" && stored === undefined && payload.value.artifact) task.artifacts.push(payload.value.artifact);
  return task;
}
