import { createRegistry, toJson, type JsonValue } from "@bufbuild/protobuf";
import { AnySchema, anyUnpack } from "@bufbuild/protobuf/wkt";
import { BadRequestSchema, ErrorInfoSchema, RequestInfoSchema, RetryInfoSchema } from "../../gen/es/google/rpc/error_details_pb.js";
import { A2A_ERROR_DOMAIN, type ErrorStatus } from "../service/error-status.js";

/*
 * An error status's typed details as the JSON bindings print them (R-BIND-38): each an `Any`
 * in ProtoJSON, with its `@type`.
 */

const DETAILS_REGISTRY = createRegistry(ErrorInfoSchema, BadRequestSchema, RequestInfoSchema, RetryInfoSchema);

/** The status's details as ProtoJSON `Any` objects (ErrorInfo, BadRequest, ...). */
export function detailsJson(status: ErrorStatus): JsonValue[] {
  return status.details.map((detail) => toJson(AnySchema, detail, { registry: DETAILS_REGISTRY }));
}

/** The reason of the status's A2A ErrorInfo, if it has one. */
export function a2aReason(status: ErrorStatus): string | undefined {
  for (const detail of status.details) {
    const info = anyUnpack(detail, ErrorInfoSchema);
    if (info !== undefined && info.domain === A2A_ERROR_DOMAIN) return info.reason;
  }
  return undefined;
}
