import type { JsonValue } from "@bufbuild/protobuf";
import { a2aReason, detailsJson } from "../http/error-details.js";
import type { ErrorStatus } from "../service/error-status.js";
import { Code } from "../service/status-code.js";

/*
 * The §5.4 error table for JSON-RPC (R-JRPC-16/17, R-BIND-38): the face's error status becomes a
 * JSON-RPC error object whose `data` is the status's typed details as ProtoJSON `Any` (ErrorInfo,
 * BadRequest, ...), and the HTTP status it travels with (R-JRPC-11, BQ-9).
 */

/** JSON-RPC 2.0's own codes (§5.1 of that spec). */
export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;

/** A2A's codes, by ErrorInfo.reason (§5.4, §9.5). */
const A2A_CODES: Readonly<Record<string, number>> = {
  TASK_NOT_FOUND: -32001,
  TASK_NOT_CANCELABLE: -32002,
  PUSH_NOTIFICATION_NOT_SUPPORTED: -32003,
  UNSUPPORTED_OPERATION: -32004,
  CONTENT_TYPE_NOT_SUPPORTED: -32005,
  INVALID_AGENT_RESPONSE: -32006,
  EXTENDED_AGENT_CARD_NOT_CONFIGURED: -32007,
  EXTENSION_SUPPORT_REQUIRED: -32008,
  VERSION_NOT_SUPPORTED: -32009,
};

/** BQ-9 (recommended answer): non-A2A refusals get -31000 minus the google.rpc code, and an HTTP status that says the same. */
const PROJECT_CODES: ReadonlyMap<number, { readonly code: number; readonly http: number }> = new Map([
  [Code.UNAUTHENTICATED, { code: -31000 - Code.UNAUTHENTICATED, http: 401 }],
  [Code.PERMISSION_DENIED, { code: -31000 - Code.PERMISSION_DENIED, http: 403 }],
  [Code.RESOURCE_EXHAUSTED, { code: -31000 - Code.RESOURCE_EXHAUSTED, http: 429 }],
  [Code.FAILED_PRECONDITION, { code: -31000 - Code.FAILED_PRECONDITION, http: 400 }],
]);

export interface JsonRpcErrorObject {
  readonly code: number;
  readonly message: string;
  readonly data?: JsonValue[];
}

/** A JSON-RPC error and the HTTP status its response carries. */
export interface JsonRpcFailure {
  readonly error: JsonRpcErrorObject;
  readonly httpStatus: number;
}

/** The JSON-RPC form of a failure the face reported. */
export function jsonRpcFailure(status: ErrorStatus): JsonRpcFailure {
  const data = detailsJson(status);
  const error = (code: number) => ({ code, message: status.message, data });
  const reason = a2aReason(status);
  if (reason !== undefined && A2A_CODES[reason] !== undefined) return { error: error(A2A_CODES[reason]), httpStatus: 200 };
  if (status.code === Code.INVALID_ARGUMENT) return { error: error(INVALID_PARAMS), httpStatus: 200 };
  if (status.code === Code.UNIMPLEMENTED) return { error: error(METHOD_NOT_FOUND), httpStatus: 200 };
  const project = PROJECT_CODES.get(status.code);
  if (project !== undefined) return { error: error(project.code), httpStatus: project.http };
  return { error: error(INTERNAL_ERROR), httpStatus: 200 };
}

/** An envelope-level error of the JSON-RPC spec itself (no A2A details). */
export function envelopeError(code: number, message: string): JsonRpcErrorObject {
  return { code, message };
}
