import { create } from "@bufbuild/protobuf";
import { MessageSchema, Role, TaskStatusSchema, type TaskState, type Task, type TaskStatus } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { Caller } from "../ports/agent.js";
import type { StatusClock } from "../model/clock.js";
import { TaskNotFoundError, UnsupportedOperationError } from "../model/errors.js";
import { newId } from "../model/ids.js";
import type { StoredTask, TaskRepository } from "../ports/task-repository.js";
import { isTerminal, stateName } from "../model/task-state.js";

/** The task as stored, or TaskNotFound (also for a task the caller may not see). */
export async function requireTask(repository: TaskRepository, scope: Caller, taskId: string, historyLength: number | undefined): Promise<StoredTask> {
  const stored = await repository.get(scope, taskId, { historyLength });
  if (!stored) throw new TaskNotFoundError(taskId);
  return stored;
}

/** A finished task never changes: `action` on it is refused. */
export function refuseTerminal(task: Task, action: string): void {
  const state = task.status!.state;
  if (isTerminal(state)) {
    throw new UnsupportedOperationError(
      `task ${task.id} is ${stateName(state)}: a finished task never changes; cannot ${action} it. Start a new task in the same context instead.`,
      {
        task_id: task.id,
        state: stateName(state),
      },
    );
  }
}

/** A status the service itself sets (resume, restart, cancel), with an optional agent-role explanation. */
export function serverStatus(clock: StatusClock, state: TaskState, text: string | undefined, task: Task): TaskStatus {
  const message =
    text === undefined
      ? undefined
      : create(MessageSchema, {
          messageId: newId(),
          contextId: task.contextId,
          taskId: task.id,
          role: Role.AGENT,
          parts: [{ content: { case: "text", value: text } }],
        });
  return create(TaskStatusSchema, { state, timestamp: clock.now(), message });
}
