/**
 * Errors of the A2A protocol as values, each named as in the spec (§5.4, §10.6).
 * They are made where the failure is found and turned into a gRPC status in
 * exactly one place (src/protocol/error-status.ts). The core knows no gRPC codes;
 * `kind` says which family an error belongs to.
 */

/** Metadata keys are snake_case (ruling A-23). */
export type ErrorMetadata = Record<string, string>;

export abstract class A2AError extends Error {
  /** UPPER_SNAKE_CASE reason for google.rpc.ErrorInfo (the error name minus "Error"). */
  abstract readonly reason: string;
  abstract readonly kind: "not_found" | "failed_precondition" | "invalid_argument" | "internal";
  constructor(
    message: string,
    readonly metadata: ErrorMetadata = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class TaskNotFoundError extends A2AError {
  readonly reason = "TASK_NOT_FOUND";
  readonly kind = "not_found";
  constructor(taskId: string, message = `task ${JSON.stringify(taskId)} was not found`) {
    super(message, { task_id: taskId });
  }
}

export class TaskNotCancelableError extends A2AError {
  readonly reason = "TASK_NOT_CANCELABLE";
  readonly kind = "failed_precondition";
  constructor(taskId: string, state: string) {
    super(`task ${JSON.stringify(taskId)} is ${state} and can no longer be canceled`, { task_id: taskId, state });
  }
}

export class PushNotificationNotSupportedError extends A2AError {
  readonly reason = "PUSH_NOTIFICATION_NOT_SUPPORTED";
  readonly kind = "failed_precondition";
  constructor(message = "this agent does not support push notifications (capabilities.push_notifications is off)") {
    super(message);
  }
}

export class UnsupportedOperationError extends A2AError {
  readonly reason = "UNSUPPORTED_OPERATION";
  readonly kind = "failed_precondition";
}

export class ContentTypeNotSupportedError extends A2AError {
  readonly reason = "CONTENT_TYPE_NOT_SUPPORTED";
  readonly kind = "invalid_argument";
  constructor(mediaType: string, field: string, accepted: readonly string[]) {
    super(`media type ${JSON.stringify(mediaType)} at ${field} is not accepted; send one of: ${accepted.join(", ")}`, {
      media_type: mediaType,
      field,
      accepted_media_types: accepted.join(","),
    });
  }
}

/**
 * The request's parameters are not what the agent can work with (JSON-RPC InvalidParams,
 * gRPC INVALID_ARGUMENT). Thrown by an agent before its first answer, it refuses the call.
 * `field` (a request path such as "message.parts[0]") is also sent as a google.rpc.BadRequest.
 */
export class InvalidParamsError extends A2AError {
  readonly reason = "INVALID_PARAMS";
  readonly kind = "invalid_argument";
  constructor(message: string, options: { field?: string; metadata?: ErrorMetadata } = {}) {
    super(message, options.field === undefined ? { ...options.metadata } : { ...options.metadata, field: options.field });
  }
}

export class InvalidAgentResponseError extends A2AError {
  readonly reason = "INVALID_AGENT_RESPONSE";
  readonly kind = "internal";
}

export class ExtendedAgentCardNotConfiguredError extends A2AError {
  readonly reason = "EXTENDED_AGENT_CARD_NOT_CONFIGURED";
  readonly kind = "failed_precondition";
  constructor() {
    super("this agent declares an extended agent card but none is configured");
  }
}

export class ExtensionSupportRequiredError extends A2AError {
  readonly reason = "EXTENSION_SUPPORT_REQUIRED";
  readonly kind = "failed_precondition";
  constructor(missing: readonly string[]) {
    super(`this agent requires the extension(s) ${missing.join(", ")}; list them in the a2a-extensions metadata`, {
      required_extensions: missing.join(","),
    });
  }
}

export class VersionNotSupportedError extends A2AError {
  readonly reason = "VERSION_NOT_SUPPORTED";
  readonly kind = "failed_precondition";
  constructor(requestedAsSent: string, supported: readonly string[]) {
    // The header is the client's: quoted at most 64 characters of it.
    const requested = requestedAsSent.length > 64 ? `${requestedAsSent.slice(0, 63)}…` : requestedAsSent;
    const asked = requested === "" ? "no a2a-version header (read as 0.3)" : `a2a-version ${JSON.stringify(requested)}`;
    super(`${asked} is not supported; send the metadata header "a2a-version: ${supported[0]}"`, {
      requested_version: requested,
      supported_versions: supported.join(","),
    });
  }
}

/** One invalid field of a request: the path uses the proto's field names (message.parts[0].text). */
export interface FieldViolation {
  field: string;
  description: string;
}

/** Request validation failed: INVALID_ARGUMENT with a google.rpc.BadRequest. Not an A2A error, so no ErrorInfo. */
export class InvalidRequestError extends Error {
  /** `omitted`: further violations found but not kept (a request can hold thousands). */
  constructor(
    readonly violations: readonly FieldViolation[],
    readonly omitted = 0,
  ) {
    super(violations.map((v) => `${v.field}: ${v.description}`).join("; ") + (omitted > 0 ? `; and ${omitted} more` : ""));
    this.name = "InvalidRequestError";
  }

  static field(field: string, description: string): InvalidRequestError {
    return new InvalidRequestError([{ field, description }]);
  }
}

/**
 * A caller went over a limit (request rate, concurrent runs or streams): RESOURCE_EXHAUSTED with
 * a google.rpc.RetryInfo saying when to try again. Not an A2A error, so its ErrorInfo has a domain
 * of this server's own.
 */
export class LimitExceededError extends Error {
  constructor(
    /** ErrorInfo.reason: RATE_LIMITED, TOO_MANY_RUNS, SERVER_BUSY, TOO_MANY_STREAMS. */
    readonly reason: string,
    message: string,
    /** When a retry may succeed, ms from now. */
    readonly retryAfterMs: number,
  ) {
    super(message);
    this.name = "LimitExceededError";
  }
}
