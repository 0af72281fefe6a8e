import { a2aReason } from "../http/error-details.js";
import type { ErrorStatus } from "../service/error-status.js";
import { Code } from "../service/status-code.js";
import { restFailure, type RestFailure } from "./rest-errors.js";

/*
 * The error form of the v0.3 HTTP+JSON binding (R-V03-41, BQ-10): v0.3 names none, so the body is
 * what the v0.3 SDK's REST client reads, `{"code": <JSON-RPC code>, "message": "…"}` (clients
 * that read only `message` get it too), with the HTTP status of R-BIND-38 (the v1.0 binding's) and
 * its Retry-After. The codes are those of the JSON-RPC binding (src/jsonrpc/jsonrpc-errors.ts),
 * listed again here because a binding does not import another of its level.
 */

/** The body of a v0.3 REST error. */
export interface V03ErrorBody {
  readonly code: number;
  readonly message: string;
}

export type V03RestFailure = RestFailure<V03ErrorBody>;

/** JSON-RPC 2.0's own codes. */
const INVALID_REQUEST = -32600;
const METHOD_NOT_FOUND = -32601;
const INVALID_PARAMS = -32602;
const INTERNAL_ERROR = -32603;

/** A2A's codes by ErrorInfo.reason (v0.3 §8.2; VERSION_NOT_SUPPORTED is v1.0's -32009, the one both generations understand). */
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

/** The JSON-RPC binding's codes for refusals that are not A2A's (BQ-9): -31000 minus the google.rpc code. */
const PROJECT_CODED = new Set<number>([Code.UNAUTHENTICATED, Code.PERMISSION_DENIED, Code.RESOURCE_EXHAUSTED, Code.FAILED_PRECONDITION]);

/** The JSON-RPC code of a failure the face reported, as the JSON-RPC binding gives it. */
export function v03ErrorCode(status: ErrorStatus): number {
  const reason = a2aReason(status);
  if (reason !== undefined && A2A_CODES[reason] !== undefined) return A2A_CODES[reason];
  if (status.code === Code.INVALID_ARGUMENT) return INVALID_PARAMS;
  if (status.code === Code.UNIMPLEMENTED) return METHOD_NOT_FOUND;
  if (PROJECT_CODED.has(status.code)) return -31000 - status.code;
  return INTERNAL_ERROR;
}

/** The v0.3 REST form of a failure the face reported. */
export function v03RestFailure(status: ErrorStatus): V03RestFailure {
  const { httpStatus, headers } = restFailure(status);
  return { httpStatus, ...(headers === undefined ? {} : { headers }), body: { code: v03ErrorCode(status), message: status.message } };
}

/** JSON-RPC codes of the HTTP layer's own refusals: no route / wrong method, media type, size. */
const TRANSPORT_CODES: Readonly<Record<number, number>> = {
  404: METHOD_NOT_FOUND,
  405: METHOD_NOT_FOUND,
  413: INVALID_REQUEST,
  415: A2A_CODES["CONTENT_TYPE_NOT_SUPPORTED"]!,
};

/** A failure of the HTTP layer itself, in the v0.3 form. */
export function v03TransportFailure(httpStatus: number, message: string): V03RestFailure {
  return { httpStatus, body: { code: TRANSPORT_CODES[httpStatus] ?? INTERNAL_ERROR, message } };
}
