/**
 * The one place where failures become statuses (R-ERR-1..7, R-BIND-38): a google.rpc code, a
 * bounded message and typed `Any` details (R-ERR-6), which every binding encodes its own way
 * (gRPC: the `grpc-status-details-bin` trailer, R-ERR-2; JSON-RPC: `error.data`):
 * - A2A errors: ErrorInfo{reason, domain "a2a-protocol.org", snake_case metadata} (R-ERR-3, A-23);
 * - request validation: BadRequest with one field violation per bad field (R-SEND-8, R-ERR-5);
 * - anything unexpected: INTERNAL with a correlation id only; the cause goes to the log, never
 *   to the client (R-ERR-5, R-SEC-6).
 */
import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { anyPack, type Any } from "@bufbuild/protobuf/wkt";
import { BadRequestSchema, ErrorInfoSchema, RequestInfoSchema, RetryInfoSchema } from "../../gen/es/google/rpc/error_details_pb.js";
import { AuthError, AUTH_ERROR_DOMAIN } from "../auth/auth-error.js";
import {
  ReplyTooLargeError,
  TaskTooLargeError,
  A2AError,
  ContentTypeNotSupportedError,
  InvalidParamsError,
  InvalidRequestError,
  LimitExceededError,
  type FieldViolation,
} from "../lifecycle/index.js";
import { boundMetadata, boundText, boundViolations, MAX_STATUS_MESSAGE_BYTES } from "./status-bounds.js";
import { Code } from "./status-code.js";

/** ErrorInfo.domain of every A2A-specific error (§10.6). */
export const A2A_ERROR_DOMAIN = "a2a-protocol.org";

/** A failure as every binding reports it: google.rpc code, bounded message, typed details. */
export interface ErrorStatus {
  readonly code: Code;
  readonly message: string;
  readonly details: readonly Any[];
}

export type ErrorLogger = (correlationId: string, error: unknown) => void;

const CODE_BY_KIND: Record<A2AError["kind"], Code> = {
  not_found: Code.NOT_FOUND,
  failed_precondition: Code.FAILED_PRECONDITION,
  invalid_argument: Code.INVALID_ARGUMENT,
  internal: Code.INTERNAL,
};

/**
 * A status the edge decides itself (UNAUTHENTICATED, PERMISSION_DENIED, UNAVAILABLE, ...).
 * Only instances of this class pass through unchanged: an arbitrary error that happens to
 * have a numeric `code` might come from a library and must not leak its message.
 */
export class StatusError extends Error {
  constructor(
    readonly code: Code,
    message: string,
    readonly details: readonly Any[] = [],
  ) {
    super(message);
    this.name = "StatusError";
  }
}

/** ErrorInfo.domain of limit refusals (not A2A errors either). */
export const LIMITS_ERROR_DOMAIN = "limits.a2a-grpc-server";

const CODE_BY_AUTH_KIND: Record<AuthError["kind"], Code> = {
  unauthenticated: Code.UNAUTHENTICATED,
  permission_denied: Code.PERMISSION_DENIED,
  unavailable: Code.UNAVAILABLE,
};

export function toErrorStatus(error: unknown, log: ErrorLogger): ErrorStatus {
  if (error instanceof A2AError) return fromA2AError(error);
  if (error instanceof AuthError) {
    return build(CODE_BY_AUTH_KIND[error.kind], error.message, [errorInfo(error.reason, AUTH_ERROR_DOMAIN, error.metadata)]);
  }
  if (error instanceof LimitExceededError) {
    const delay = Math.max(1, error.retryAfterMs);
    return build(Code.RESOURCE_EXHAUSTED, error.message, [
      errorInfo(error.reason, LIMITS_ERROR_DOMAIN, { retry_after_ms: String(delay) }),
      anyPack(RetryInfoSchema, create(RetryInfoSchema, { retryDelay: { seconds: BigInt(Math.floor(delay / 1000)), nanos: (delay % 1000) * 1_000_000 } })),
    ]);
  }
  // a reply or a task over the size limits; the message names the limit, ErrorInfo says which.
  if (error instanceof TaskTooLargeError || error instanceof ReplyTooLargeError) {
    const reason = error instanceof TaskTooLargeError ? "TASK_TOO_LARGE" : "REPLY_TOO_LARGE";
    return build(Code.RESOURCE_EXHAUSTED, error.message, [
      errorInfo(reason, LIMITS_ERROR_DOMAIN, { task_id: error.taskId, limit_bytes: String(error.limitBytes) }),
    ]);
  }
  if (error instanceof InvalidRequestError) {
    return build(Code.INVALID_ARGUMENT, error.message, [badRequest(error.violations, error.omitted)]);
  }
  if (error instanceof StatusError) return build(error.code, error.message, [...error.details]);
  return internal(error, log);
}

function errorInfo(reason: string, domain: string, metadata: Readonly<Record<string, string>>): Any {
  return anyPack(ErrorInfoSchema, create(ErrorInfoSchema, { reason, domain, metadata: boundMetadata(metadata) }));
}

function fromA2AError(error: A2AError): ErrorStatus {
  const details = [errorInfo(error.reason, A2A_ERROR_DOMAIN, error.metadata)];
  // The offending part is a request field: say which one the standard way too.
  if ((error instanceof ContentTypeNotSupportedError || error instanceof InvalidParamsError) && error.metadata.field) {
    details.push(badRequest([{ field: error.metadata.field, description: error.message }]));
  }
  return build(CODE_BY_KIND[error.kind], error.message, details);
}

function internal(error: unknown, log: ErrorLogger): ErrorStatus {
  const id = randomUUID();
  log(id, error);
  return build(Code.INTERNAL, `internal error (correlation id ${id})`, [anyPack(RequestInfoSchema, create(RequestInfoSchema, { requestId: id }))]);
}

function badRequest(violations: readonly FieldViolation[], omitted = 0): Any {
  return anyPack(
    BadRequestSchema,
    create(BadRequestSchema, {
      fieldViolations: boundViolations(violations, omitted),
    }),
  );
}

/** Every status is built here, so none echoes unbounded input: the message and every detail are bounded. */
function build(code: Code, fullMessage: string, details: Any[]): ErrorStatus {
  return { code, message: boundText(fullMessage, MAX_STATUS_MESSAGE_BYTES), details };
}

/** The older name, from when gRPC was the only binding. */
export { StatusError as GrpcStatusError };
