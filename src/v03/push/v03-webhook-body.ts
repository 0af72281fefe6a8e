import { create, fromBinary } from "@bufbuild/protobuf";
import { type StreamResponse, StreamResponseSchema, type Task, TaskSchema, TaskState, type TaskStatus } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { TaskRepository } from "../../lifecycle/index.js";
import type { OutboxEntry } from "../../push/ports/push-outbox.js";
import type { WebhookBodyEncoder } from "../../push/ports/webhook-body.js";
import { taskToV03 } from "../json/v1-to-v03-json.js";

/** v0.3 webhooks are plain JSON (v0.3 §9.5), not A-9's application/a2a+json. */
export const V03_WEBHOOK_CONTENT_TYPE = "application/json";

/** Lanes whose last status is remembered at most; past it the memory starts over (artifact events then read the task's status). */
const MAX_REMEMBERED_LANES = 10_000;

/**
 * The body of a webhook for a config made by a v0.3 call (R-V03-71): the Task as v0.3 JSON, as
 * v0.3 receivers expect it (v0.3 §9.5), the snapshot after its event. An entry holding a snapshot
 * (an inline config's first event) is that task. For an update the task is read as stored (its
 * history and artifacts as they are at delivery), and its status is the one as of the event: a
 * status update's own, for an artifact update the last status this lane delivered (a lane's
 * entries come in order, A-29), so a receiver never sees a later state before an earlier one.
 * Only an artifact update that is a lane's first since start shows the status as read. The Task
 * JSON is the v0.3 JSON-RPC endpoint's own translation (one v0.3 model, not two).
 */
export function v03WebhookBody(tasks: TaskRepository): WebhookBodyEncoder {
  const lastStatus = new Map<string, TaskStatus>();
  return {
    contentType: V03_WEBHOOK_CONTENT_TYPE,
    encode: async (entry) => JSON.stringify(taskToV03(await taskAfter(tasks, entry, lastStatus))),
  };
}

async function taskAfter(tasks: TaskRepository, entry: OutboxEntry, lastStatus: Map<string, TaskStatus>): Promise<Task> {
  let event: StreamResponse;
  try {
    event = fromBinary(StreamResponseSchema, entry.event);
  } catch {
    event = create(StreamResponseSchema); // bytes that do not decode (not written by this server): the task as stored
  }
  const { payload } = event;
  const lane = `${entry.taskId}\u0000${entry.configId}`;
  if (payload.case === "task") return remember(lastStatus, lane, payload.value.status, payload.value);
  // A task removed since (retention) is told from the event alone.
  const stored = await Promise.resolve(tasks.get(entry.scope, entry.taskId)).catch(() => undefined);
  const task = stored?.task ?? create(TaskSchema, { id: entry.taskId, contextId: payload.value?.contextId ?? "" });
  if (payload.case === "statusUpdate") task.status = payload.value.status;
  else if (payload.case === "artifactUpdate") {
    task.status = lastStatus.get(lane) ?? task.status;
    if (stored === undefined && payload.value.artifact) task.artifacts.push(payload.value.artifact);
  }
  return remember(lastStatus, lane, task.status, task);
}

function remember(lastStatus: Map<string, TaskStatus>, lane: string, status: TaskStatus | undefined, task: Task): Task {
  if (status === undefined || isTerminal(status.state)) lastStatus.delete(lane);
  else {
    if (lastStatus.size >= MAX_REMEMBERED_LANES && !lastStatus.has(lane)) lastStatus.clear();
    lastStatus.set(lane, status);
  }
  return task;
}

function isTerminal(state: TaskState): boolean {
  return state === TaskState.COMPLETED || state === TaskState.FAILED || state === TaskState.CANCELED || state === TaskState.REJECTED;
}
