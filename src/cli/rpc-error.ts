import * as grpc from "@grpc/grpc-js";
import { createRegistry, fromBinary, fromJson, toJson, type JsonValue } from "@bufbuild/protobuf";
import { AnySchema, anyUnpack, type Any } from "@bufbuild/protobuf/wkt";
import { StatusSchema } from "../../gen/es/google/rpc/status_pb.js";
import {
  BadRequestSchema,
  ErrorInfoSchema,
  RequestInfoSchema,
  RetryInfoSchema,
  file_google_rpc_error_details,
} from "../../gen/es/google/rpc/error_details_pb.js";
import { ExitCode, type ExitCodeValue } from "./exit-codes.js";

/** ErrorInfo.domain of A2A errors (A2A §10.6). */
const A2A_DOMAIN = "a2a-protocol.org";
const DETAIL_TYPES = createRegistry(file_google_rpc_error_details);

/** What the CLI tells the user about a failed call, decoded from the gRPC status and its details. */
export interface RpcFailure {
  readonly code: grpc.status;
  /** The code's name: NOT_FOUND, ... */
  readonly status: string;
  readonly message: string;
  /** ErrorInfo.reason of an A2A error: TASK_NOT_FOUND, ... */
  readonly reason?: string;
  readonly domain?: string;
  readonly metadata?: Record<string, string>;
  /** BadRequest field violations. */
  readonly fieldViolations?: ReadonlyArray<{ field: string; description: string }>;
  readonly retryDelay?: string;
  readonly requestId?: string;
  /** Every detail as ProtoJSON, including types this file does not pick apart. */
  readonly details: unknown[];
  readonly exitCode: ExitCodeValue;
}

/** Codes with which grpc-js reports that no server answered (not a server's verdict). */
const CONNECTION_CODES = new Set([grpc.status.UNAVAILABLE, grpc.status.DEADLINE_EXCEEDED]);

export function isServiceError(e: unknown): e is grpc.ServiceError {
  return e instanceof Error && typeof (e as grpc.ServiceError).code === "number" && "metadata" in e;
}

/** Decodes a grpc-js ServiceError: google.rpc.Status from grpc-status-details-bin, when present. */
export function decodeRpcFailure(error: grpc.ServiceError): RpcFailure {
  const bin = error.metadata?.get("grpc-status-details-bin")[0];
  const details: Any[] = [];
  if (bin instanceof Buffer) {
    try {
      details.push(...fromBinary(StatusSchema, bin).details);
    } catch {
      // a malformed trailer: report the plain status
    }
  }
  const failure = failureOf(error.code, error.details || error.message, details);
  return CONNECTION_CODES.has(error.code) && details.length === 0 ? { ...failure, exitCode: ExitCode.connection } : failure;
}

/**
 * A failure from a status code, a message and typed details, whichever binding carried them:
 * an A2A ErrorInfo makes it an A2A error (exit 3), anything else a server error (exit 1).
 */
export function failureOf(code: grpc.status, message: string, details: readonly Any[], undecoded: readonly unknown[] = []): RpcFailure {
  const failure: {
    -readonly [K in keyof RpcFailure]: RpcFailure[K];
  } = {
    code,
    status: grpc.status[code] ?? String(code),
    message,
    details: [...details.map(detailJson), ...undecoded],
    exitCode: ExitCode.serverError,
  };
  for (const any of details) {
    const info = anyUnpack(any, ErrorInfoSchema);
    if (info) {
      failure.reason = info.reason;
      failure.domain = info.domain;
      failure.metadata = { ...info.metadata };
      if (info.domain === A2A_DOMAIN) failure.exitCode = ExitCode.a2aError;
      continue;
    }
    const bad = anyUnpack(any, BadRequestSchema);
    if (bad) {
      failure.fieldViolations = bad.fieldViolations.map((v) => ({ field: v.field, description: v.description }));
      continue;
    }
    const retry = anyUnpack(any, RetryInfoSchema);
    if (retry?.retryDelay) {
      failure.retryDelay = `${Number(retry.retryDelay.seconds) + retry.retryDelay.nanos / 1e9}s`;
      continue;
    }
    const request = anyUnpack(any, RequestInfoSchema);
    if (request) failure.requestId = request.requestId;
  }
  return failure;
}

/** Details that arrived as ProtoJSON Any objects (JSON-RPC error.data, REST error.details): the known types decoded, the rest kept as they came. */
export function detailsFromJson(items: readonly unknown[]): { details: Any[]; undecoded: unknown[] } {
  const details: Any[] = [];
  const undecoded: unknown[] = [];
  for (const item of items) {
    try {
      details.push(fromJson(AnySchema, item as JsonValue, { registry: DETAIL_TYPES }));
    } catch {
      undecoded.push(item);
    }
  }
  return { details, undecoded };
}

/** A failed call on an HTTP binding, already decoded; reported like a gRPC status. */
export class BindingCallError extends Error {
  override readonly name = "BindingCallError";
  constructor(readonly failure: RpcFailure) {
    super(failure.message);
  }
}

function detailJson(any: Any): unknown {
  try {
    return toJson(AnySchema, any, { registry: DETAIL_TYPES });
  } catch {
    return { "@type": any.typeUrl };
  }
}
