import type {
  DeleteTaskPushNotificationConfigRequest,
  GetTaskPushNotificationConfigRequest,
  ListTaskPushNotificationConfigsRequest,
  TaskPushNotificationConfig,
} from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { checkId } from "./field-checks.js";
import { checkPushConfigShape } from "./push-config-checks.js";
import { DEFAULT_VALIDATION_LIMITS, type ValidationLimits } from "./validation-limits.js";
import { Violations } from "./violations.js";

const TASK_ID = "the id of the task the push config belongs to";
const CONFIG_ID = "the id of the push config, as returned by CreateTaskPushNotificationConfig";

/** CreateTaskPushNotificationConfig: the request is the config itself (R-PUSH-2, A-8). */
export function validateCreateTaskPushNotificationConfigRequest(req: TaskPushNotificationConfig, limits: ValidationLimits = DEFAULT_VALIDATION_LIMITS): void {
  const v = new Violations();
  checkId(v, "task_id", req.taskId, limits, TASK_ID);
  checkPushConfigShape(v, "", req, limits);
  v.throwIfAny();
}

/** GetTaskPushNotificationConfig (R-PUSH-3). */
export function validateGetTaskPushNotificationConfigRequest(
  req: GetTaskPushNotificationConfigRequest,
  limits: ValidationLimits = DEFAULT_VALIDATION_LIMITS,
): void {
  checkTaskAndConfigIds(req, limits);
}

/** DeleteTaskPushNotificationConfig (R-PUSH-5). */
export function validateDeleteTaskPushNotificationConfigRequest(
  req: DeleteTaskPushNotificationConfigRequest,
  limits: ValidationLimits = DEFAULT_VALIDATION_LIMITS,
): void {
  checkTaskAndConfigIds(req, limits);
}

/** ListTaskPushNotificationConfigs (R-PUSH-4): page_size 0 means the server's default. */
export function validateListTaskPushNotificationConfigsRequest(
  req: ListTaskPushNotificationConfigsRequest,
  limits: ValidationLimits = DEFAULT_VALIDATION_LIMITS,
): void {
  const v = new Violations();
  checkId(v, "tenant", req.tenant, limits);
  checkId(v, "task_id", req.taskId, limits, TASK_ID);
  if (req.pageSize < 0) v.add("page_size", `must be 0 or more (0 = the server's default); got ${req.pageSize}`);
  v.throwIfAny();
}

function checkTaskAndConfigIds(req: { tenant: string; taskId: string; id: string }, limits: ValidationLimits): void {
  const v = new Violations();
  checkId(v, "tenant", req.tenant, limits);
  checkId(v, "task_id", req.taskId, limits, TASK_ID);
  checkId(v, "id", req.id, limits, CONFIG_ID);
  v.throwIfAny();
}
