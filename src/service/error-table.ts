import { Code } from "./status-code.js";

/*
 * The §5.4 error table (R-BIND-38), once for every JSON binding: a failure's google.rpc code and
 * the reason of its A2A ErrorInfo become the JSON-RPC code (JSON-RPC 1.0 and the v0.3 REST error
 * body) and the HTTP status (HTTP+JSON's, and JSON-RPC's for the refusals that are not A2A's).
 * Reading the reason out of the details is the bindings' part (src/http/error-details.ts).
 */

/** JSON-RPC 2.0's own codes (§5.1 of that spec). */
export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;

/** A2A's codes by ErrorInfo.reason (§5.4, §9.5; v0.3 §8.2 has the same, VERSION_NOT_SUPPORTED is v1.0's). */
export const A2A_JSONRPC_CODES: Readonly<Record<string, number>> = {
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

/** google.rpc.Code → HTTP status, the mapping `error.status` implies (google/rpc/code.proto). */
const HTTP_STATUS: Readonly<Record<number, number>> = {
  [Code.CANCELLED]: 499,
  [Code.UNKNOWN]: 500,
  [Code.INVALID_ARGUMENT]: 400,
  [Code.DEADLINE_EXCEEDED]: 504,
  [Code.NOT_FOUND]: 404,
  [Code.ALREADY_EXISTS]: 409,
  [Code.PERMISSION_DENIED]: 403,
  [Code.RESOURCE_EXHAUSTED]: 429,
  [Code.FAILED_PRECONDITION]: 400,
  [Code.ABORTED]: 409,
  [Code.OUT_OF_RANGE]: 400,
  [Code.UNIMPLEMENTED]: 501,
  [Code.INTERNAL]: 500,
  [Code.UNAVAILABLE]: 503,
  [Code.DATA_LOSS]: 500,
  [Code.UNAUTHENTICATED]: 401,
};

/** BQ-9 (recommended answer): refusals that are not A2A's get -31000 minus the google.rpc code, and travel with their HTTP status. */
const PROJECT_CODED: ReadonlySet<number> = new Set([Code.UNAUTHENTICATED, Code.PERMISSION_DENIED, Code.RESOURCE_EXHAUSTED, Code.FAILED_PRECONDITION]);

/** The HTTP status of a google.rpc code (HTTP+JSON, R-HTTP-8); 500 for a code it does not know. */
export function httpStatusOf(code: Code): number {
  return HTTP_STATUS[code] ?? 500;
}

/** A failure's JSON-RPC code and the HTTP status its JSON-RPC response carries (R-JRPC-11, BQ-9). */
export interface JsonRpcCoding {
  readonly code: number;
  readonly httpStatus: number;
}

/** The JSON-RPC coding of a failure: its code and the reason of its A2A ErrorInfo, if any. */
export function jsonRpcCodingOf(code: Code, a2aReason: string | undefined): JsonRpcCoding {
  const a2aCode = a2aReason === undefined ? undefined : A2A_JSONRPC_CODES[a2aReason];
  if (a2aCode !== undefined) return { code: a2aCode, httpStatus: 200 };
  if (code === Code.INVALID_ARGUMENT) return { code: INVALID_PARAMS, httpStatus: 200 };
  if (code === Code.UNIMPLEMENTED) return { code: METHOD_NOT_FOUND, httpStatus: 200 };
  if (PROJECT_CODED.has(code)) return { code: -31000 - code, httpStatus: httpStatusOf(code) };
  return { code: INTERNAL_ERROR, httpStatus: 200 };
}
