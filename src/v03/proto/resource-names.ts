import { InvalidRequestError } from "../../lifecycle/index.js";

/*
 * The resource names of the v0.3 proto (R-V03-13): a task is `tasks/{id}`, a push config
 * `tasks/{id}/pushNotificationConfigs/{configId}`. They are parsed strictly: a malformed name is
 * INVALID_ARGUMENT naming the field, and the message never repeats what the client sent.
 */

const TASK_NAME = /^tasks\/([^/]+)$/;
const CONFIG_NAME = /^tasks\/([^/]+)\/pushNotificationConfigs\/([^/]+)$/;

/** The task id of `tasks/{id}` in `field`. */
export function parseTaskName(name: string, field: string): string {
  const match = TASK_NAME.exec(name);
  if (match === null) throw InvalidRequestError.field(field, "must be a task name: tasks/{task_id}");
  return match[1]!;
}

/** Task and config ids of `tasks/{id}/pushNotificationConfigs/{configId}` in `field`. */
export function parseConfigName(name: string, field: string): { readonly taskId: string; readonly configId: string } {
  const match = CONFIG_NAME.exec(name);
  if (match === null) throw InvalidRequestError.field(field, "must be a push config name: tasks/{task_id}/pushNotificationConfigs/{config_id}");
  return { taskId: match[1]!, configId: match[2]! };
}

export function taskName(taskId: string): string {
  return `tasks/${taskId}`;
}

export function configName(taskId: string, configId: string): string {
  return `tasks/${taskId}/pushNotificationConfigs/${configId}`;
}
