import { a2aReason } from "../http/error-details.js";
import type { ErrorStatus } from "../service/error-status.js";
import { A2A_JSONRPC_CODES, INTERNAL_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, jsonRpcCodingOf } from "../service/error-table.js";
import { restFailure, type RestFailure } from "./rest-errors.js";

/*
 * The error form of the v0.3 HTTP+JSON binding (R-V03-41, BQ-10): v0.3 names none, so the body is
 * what the v0.3 SDK's REST client reads, `{"code": <JSON-RPC code>, "message": "…"}` (clients
 * that read only `message` get it too), with the HTTP status of R-BIND-38 (the v1.0 binding's) and
 * its Retry-After. The codes are the JSON-RPC binding's, from the one §5.4 table
 * (src/service/error-table.ts).
 */

/** The body of a v0.3 REST error. */
export interface V03ErrorBody {
  readonly code: number;
  readonly message: string;
}

export type V03RestFailure = RestFailure<V03ErrorBody>;

/** The JSON-RPC code of a failure the face reported, as the JSON-RPC binding gives it. */
export function v03ErrorCode(status: ErrorStatus): number {
  return jsonRpcCodingOf(status.code, a2aReason(status)).code;
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
  415: A2A_JSONRPC_CODES["CONTENT_TYPE_NOT_SUPPORTED"]!,
};

/** A failure of the HTTP layer itself, in the v0.3 form. */
export function v03TransportFailure(httpStatus: number, message: string): V03RestFailure {
  return { httpStatus, body: { code: TRANSPORT_CODES[httpStatus] ?? INTERNAL_ERROR, message } };
}
