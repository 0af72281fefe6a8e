import * as grpc from "@grpc/grpc-js";
import { createRegistry, fromBinary, toJson } from "@bufbuild/protobuf";
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
  const failure: {
    -readonly [K in keyof RpcFailure]: RpcFailure[K];
  } = {
    code: error.code,
    status: grpc.status[error.code] ?? String(error.code),
    message: error.details || error.message,
    details: details.map(detailJson),
    exitCode: CONNECTION_CODES.has(error.code) && details.length === 0 ? ExitCode.connection : ExitCode.serverError,
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

function detailJson(any: Any): unknown {
  try {
    return toJson(AnySchema, any, { registry: DETAIL_TYPES });
  } catch {
    return { "@type": any.typeUrl };
  }
}
