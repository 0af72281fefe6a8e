import type { JsonValue } from "@bufbuild/protobuf";
import { a2aReason, detailsJson } from "../http/error-details.js";
import type { ErrorStatus } from "../service/error-status.js";
import { jsonRpcCodingOf } from "../service/error-table.js";

/*
 * The §5.4 error table for JSON-RPC (R-JRPC-16/17, R-BIND-38): the face's error status becomes a
 * JSON-RPC error object whose `data` is the status's typed details as ProtoJSON `Any` (ErrorInfo,
 * BadRequest, ...), with the code and HTTP status of the one §5.4 table (src/service/error-table.ts).
 */

/** JSON-RPC 2.0's own codes, from the one table (src/service/error-table.ts). */
export { INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR } from "../service/error-table.js";

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
  const { code, httpStatus } = jsonRpcCodingOf(status.code, a2aReason(status));
  return { error: { code, message: status.message, data: detailsJson(status) }, httpStatus };
}

/** An envelope-level error of the JSON-RPC spec itself (no A2A details). */
export function envelopeError(code: number, message: string): JsonRpcErrorObject {
  return { code, message };
}
