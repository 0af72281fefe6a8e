import type { TaskEventHub } from "../../events/event-hub.js";
import { UnsupportedOperationError, TaskNotFoundError } from "../model/errors.js";
import { ResumeCursorExpiredError } from "../ports/event-log.js";
import { TaskFeed, type StreamSink } from "./task-feed.js";
import type { TaskRepository, TaskScope } from "../ports/task-repository.js";
import { isTerminal, stateName } from "../model/task-state.js";

/**
 * SubscribeToTask resumed after a cursor: the logged events after `afterVersion`, then
 * the live ones, no snapshot. Another scope's task is TASK_NOT_FOUND; a cursor the log
 * no longer covers is STREAM_CURSOR_EXPIRED; a finished task whose last event the client
 * already holds has nothing to resume (as a plain subscribe of it is refused).
 */
export async function resumeStream(
  hub: TaskEventHub,
  repository: TaskRepository,
  scope: TaskScope,
  taskId: string,
  afterVersion: number,
  sink: StreamSink,
): Promise<{ close(): void }> {
  const log = repository.eventLog;
  if (log === undefined) throw new UnsupportedOperationError("this server keeps no events for resuming streams; subscribe without a cursor");
  const feed = new TaskFeed(hub, sink, undefined);
  const found = await feed.attachAfter(taskId, afterVersion, () => log.readAfter(scope, taskId, afterVersion));
  if (found.kind === "not-found") throw new TaskNotFoundError(taskId);
  if (found.kind === "expired") throw new ResumeCursorExpiredError(taskId);
  if (found.events.length === 0 && isTerminal(found.state)) {
    feed.close();
    throw new UnsupportedOperationError(`task ${taskId} is ${stateName(found.state)} and the cursor is its last event: nothing follows it`, {
      task_id: taskId,
      state: stateName(found.state),
    });
  }
  return { close: () => feed.close() };
}
