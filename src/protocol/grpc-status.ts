import * as grpc from "@grpc/grpc-js";
import { create, toBinary } from "@bufbuild/protobuf";
import { StatusSchema } from "../../gen/es/google/rpc/status_pb.js";
import { toErrorStatus, type ErrorLogger } from "../service/error-status.js";

/** The trailer that carries the serialized google.rpc.Status (R-ERR-2). */
export const STATUS_DETAILS_KEY = "grpc-status-details-bin";

export interface GrpcErrorStatus {
  code: grpc.status;
  details: string;
  metadata: grpc.Metadata;
}

/** A failure as a gRPC status: the face's error status, its google.rpc.Status in the details trailer. */
export function toGrpcStatus(error: unknown, log: ErrorLogger): GrpcErrorStatus {
  const { code, message, details } = toErrorStatus(error, log);
  const metadata = new grpc.Metadata();
  metadata.set(STATUS_DETAILS_KEY, Buffer.from(toBinary(StatusSchema, create(StatusSchema, { code, message, details: [...details] }))));
  return { code: code as number as grpc.status, details: message, metadata };
}
