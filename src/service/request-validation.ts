/**
 * Request validation at the protocol edge: one pure function per request type. Each throws a
 * single InvalidRequestError listing every bad field by its proto (snake_case) path, which
 * error-status.ts turns into INVALID_ARGUMENT with a google.rpc.BadRequest (R-SEND-8, R-ERR-5).
 * It runs after the version and authentication checks and before capability, access and
 * existence checks.
 */
export { validateSendMessageRequest } from "./validation/send-message-request.js";
export {
  MAX_PAGE_SIZE,
  MIN_PAGE_SIZE,
  validateCancelTaskRequest,
  validateGetExtendedAgentCardRequest,
  validateGetTaskRequest,
  validateListTasksRequest,
  validateSubscribeToTaskRequest,
} from "./validation/task-requests.js";
export {
  validateCreateTaskPushNotificationConfigRequest,
  validateDeleteTaskPushNotificationConfigRequest,
  validateGetTaskPushNotificationConfigRequest,
  validateListTaskPushNotificationConfigsRequest,
} from "./validation/push-config-requests.js";
export { DEFAULT_VALIDATION_LIMITS, type ValidationLimits } from "./validation/validation-limits.js";
