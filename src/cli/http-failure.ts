import * as grpc from "@grpc/grpc-js";
import { create } from "@bufbuild/protobuf";
import { anyPack, type Any } from "@bufbuild/protobuf/wkt";
import { ErrorInfoSchema } from "../../gen/es/google/rpc/error_details_pb.js";
import { ExitCode } from "./exit-codes.js";
import { BindingCallError, detailsFromJson, failureOf } from "./rpc-error.js";

/**
 * The errors of the HTTP bindings as the CLI reports gRPC statuses (§5.4, R-BIND-38): a JSON-RPC
 * error object or a REST `{"error": {...}}` body becomes a status code, a message and the typed
 * details it carried (ErrorInfo, BadRequest, ...), so exit codes and output are the same on
 * every binding.
 */

/** A2A's JSON-RPC codes (§9.5) and the ErrorInfo reason and status each stands for. */
const A2A_JSONRPC_CODES: Readonly<Record<number, readonly [string, grpc.status]>> = {
  [-32001]: ["TASK_NOT_FOUND", grpc.status.NOT_FOUND],
  [-32002]: ["TASK_NOT_CANCELABLE", grpc.status.FAILED_PRECONDITION],
  [-32003]: ["PUSH_NOTIFICATION_NOT_SUPPORTED", grpc.status.FAILED_PRECONDITION],
  [-32004]: ["UNSUPPORTED_OPERATION", grpc.status.FAILED_PRECONDITION],
  [-32005]: ["CONTENT_TYPE_NOT_SUPPORTED", grpc.status.INVALID_ARGUMENT],
  [-32006]: ["INVALID_AGENT_RESPONSE", grpc.status.INTERNAL],
  [-32007]: ["EXTENDED_AGENT_CARD_NOT_CONFIGURED", grpc.status.FAILED_PRECONDITION],
  [-32008]: ["EXTENSION_SUPPORT_REQUIRED", grpc.status.FAILED_PRECONDITION],
  [-32009]: ["VERSION_NOT_SUPPORTED", grpc.status.FAILED_PRECONDITION],
};

/** JSON-RPC 2.0's own codes. */
const JSONRPC_CODES: Readonly<Record<number, grpc.status>> = {
  [-32700]: grpc.status.INVALID_ARGUMENT,
  [-32600]: grpc.status.INVALID_ARGUMENT,
  [-32601]: grpc.status.UNIMPLEMENTED,
  [-32602]: grpc.status.INVALID_ARGUMENT,
  [-32603]: grpc.status.INTERNAL,
};

/** The google.rpc code an HTTP status implies (the inverse of the REST table, for answers without a status name). */
const HTTP_CODES: Readonly<Record<number, grpc.status>> = {
  400: grpc.status.INVALID_ARGUMENT,
  401: grpc.status.UNAUTHENTICATED,
  403: grpc.status.PERMISSION_DENIED,
  404: grpc.status.NOT_FOUND,
  405: grpc.status.UNIMPLEMENTED,
  409: grpc.status.ABORTED,
  413: grpc.status.INVALID_ARGUMENT,
  429: grpc.status.RESOURCE_EXHAUSTED,
  499: grpc.status.CANCELLED,
  500: grpc.status.INTERNAL,
  501: grpc.status.UNIMPLEMENTED,
  502: grpc.status.UNAVAILABLE,
  503: grpc.status.UNAVAILABLE,
  504: grpc.status.DEADLINE_EXCEEDED,
};

/** What a server's message may add to the CLI's output at most. */
const MAX_MESSAGE = 1024;

type JsonObject = Record<string, unknown>;
const isObject = (v: unknown): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);

function httpCode(httpStatus: number): grpc.status {
  return HTTP_CODES[httpStatus] ?? (httpStatus >= 500 ? grpc.status.INTERNAL : grpc.status.UNKNOWN);
}

function bounded(message: unknown, fallback: string): string {
  const text = typeof message === "string" && message !== "" ? message : fallback;
  return text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE)}…` : text;
}

function callError(code: grpc.status, message: string, details: Any[], undecoded: unknown[]): BindingCallError {
  const failure = failureOf(code, message, details, undecoded);
  // A gateway's 502/503/504 without an A2A body: nobody behind it answered.
  const unanswered = (code === grpc.status.UNAVAILABLE || code === grpc.status.DEADLINE_EXCEEDED) && details.length === 0;
  return new BindingCallError(unanswered ? { ...failure, exitCode: ExitCode.connection } : failure);
}

/** A JSON-RPC error object (§9.5): A2A codes keep their meaning even when the server sent no ErrorInfo. */
export function jsonRpcError(error: unknown, httpStatus: number): BindingCallError {
  if (!isObject(error)) return httpError(httpStatus, undefined);
  const code = typeof error.code === "number" ? error.code : Number.NaN;
  const { details, undecoded } = detailsFromJson(Array.isArray(error.data) ? error.data : error.data === undefined ? [] : [error.data]);
  const a2a = A2A_JSONRPC_CODES[code];
  if (a2a && !details.some((d) => d.typeUrl.endsWith("/google.rpc.ErrorInfo"))) {
    details.push(anyPack(ErrorInfoSchema, create(ErrorInfoSchema, { reason: a2a[0], domain: "a2a-protocol.org" })));
  }
  // BQ-9: the project's non-A2A refusals are -31000 minus the google.rpc code.
  const project = code <= -31000 && code > -31017 ? -31000 - code : undefined;
  const status =
    httpStatus === 401
      ? grpc.status.UNAUTHENTICATED
      : (a2a?.[1] ?? JSONRPC_CODES[code] ?? project ?? (httpStatus >= 400 ? httpCode(httpStatus) : grpc.status.UNKNOWN));
  return callError(status, bounded(error.message, `JSON-RPC error ${code}`), details, undecoded);
}

/** A REST error body `{"error": {code, status, message, details}}` (§11.6), or an HTTP status without one. */
export function httpError(httpStatus: number, body: unknown): BindingCallError {
  const error = isObject(body) && isObject(body.error) ? body.error : undefined;
  if (!error) return callError(httpCode(httpStatus), `HTTP ${httpStatus} without an A2A error body`, [], []);
  const named = typeof error.status === "string" ? (grpc.status as unknown as Record<string, grpc.status>)[error.status] : undefined;
  const { details, undecoded } = detailsFromJson(Array.isArray(error.details) ? error.details : []);
  const status = httpStatus === 401 ? grpc.status.UNAUTHENTICATED : typeof named === "number" ? named : httpCode(httpStatus);
  return callError(status, bounded(error.message, `HTTP ${httpStatus}`), details, undecoded);
}
