import {
  TaskState,
  type CancelTaskRequest,
  type GetExtendedAgentCardRequest,
  type GetTaskRequest,
  type ListTasksRequest,
  type SubscribeToTaskRequest,
} from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { checkHistoryLength, checkId, checkJsonObject, checkTimestamp } from "./field-checks.js";
import { DEFAULT_VALIDATION_LIMITS, type ValidationLimits } from "./validation-limits.js";
import { Violations } from "./violations.js";

const TASK_ID = "the id of the task, as returned when it was created";

/** R-LIST-3 / A-13: page_size, when set, lies in 1..100; unset means the server's default of 50. */
export const MIN_PAGE_SIZE = 1;
export const MAX_PAGE_SIZE = 100;

/** GetTask (R-GET-4, R-HIST-4). */
export function validateGetTaskRequest(req: GetTaskRequest, limits: ValidationLimits = DEFAULT_VALIDATION_LIMITS): void {
  const v = new Violations();
  checkId(v, "tenant", req.tenant, limits);
  checkId(v, "id", req.id, limits, TASK_ID);
  checkHistoryLength(v, "history_length", req.historyLength);
  v.throwIfAny();
}

/**
 * ListTasks (R-LIST-3, R-LIST-7, A-13). The page token is opaque: the codec that issued it
 * decides whether it is valid, so it is not looked at here.
 */
export function validateListTasksRequest(req: ListTasksRequest, limits: ValidationLimits = DEFAULT_VALIDATION_LIMITS): void {
  const v = new Violations();
  checkId(v, "tenant", req.tenant, limits);
  checkId(v, "context_id", req.contextId, limits);
  if (TaskState[req.status] === undefined) {
    v.add("status", `must be a TaskState such as TASK_STATE_WORKING, or TASK_STATE_UNSPECIFIED for no filter; got unknown value ${req.status}`);
  }
  if (req.pageSize !== undefined && (req.pageSize < MIN_PAGE_SIZE || req.pageSize > MAX_PAGE_SIZE)) {
    v.add("page_size", `must be between ${MIN_PAGE_SIZE} and ${MAX_PAGE_SIZE} inclusive, or unset for the default of 50; got ${req.pageSize}`);
  }
  checkHistoryLength(v, "history_length", req.historyLength);
  if (req.statusTimestampAfter !== undefined) checkTimestamp(v, "status_timestamp_after", req.statusTimestampAfter);
  v.throwIfAny();
}

/** CancelTask (R-CANCEL-*): the id names the task; metadata is passed to the agent. */
export function validateCancelTaskRequest(req: CancelTaskRequest, limits: ValidationLimits = DEFAULT_VALIDATION_LIMITS): void {
  const v = new Violations();
  checkId(v, "tenant", req.tenant, limits);
  checkId(v, "id", req.id, limits, TASK_ID);
  checkJsonObject(v, "metadata", req.metadata, limits);
  v.throwIfAny();
}

/** SubscribeToTask (R-SUB-*). */
export function validateSubscribeToTaskRequest(req: SubscribeToTaskRequest, limits: ValidationLimits = DEFAULT_VALIDATION_LIMITS): void {
  const v = new Violations();
  checkId(v, "tenant", req.tenant, limits);
  checkId(v, "id", req.id, limits, TASK_ID);
  v.throwIfAny();
}

/** GetExtendedAgentCard: nothing is required; only the tenant is bounded. */
export function validateGetExtendedAgentCardRequest(req: GetExtendedAgentCardRequest, limits: ValidationLimits = DEFAULT_VALIDATION_LIMITS): void {
  const v = new Violations();
  checkId(v, "tenant", req.tenant, limits);
  v.throwIfAny();
}
