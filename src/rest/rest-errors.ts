import type { JsonValue } from "@bufbuild/protobuf";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import { RetryInfoSchema } from "../../gen/es/google/rpc/error_details_pb.js";
import { detailsJson } from "../http/error-details.js";
import type { ErrorStatus } from "../service/error-status.js";
import { httpStatusOf } from "../service/error-table.js";
import { codeName } from "../service/status-code.js";

/*
 * The §11.6 error body for HTTP+JSON (R-HTTP-8..12, R-BIND-38): the face's error status as the
 * AIP-193 wrapper of google.rpc.Status, `{"error":{"code":<http>,"status":"<code name>",
 * "message":…,"details":[…@type…]}}`, and the HTTP status of the one §5.4 table
 * (src/service/error-table.ts) it travels with. A2A's
 * FAILED_PRECONDITION reasons share 400; clients tell them apart by the ErrorInfo reason.
 */

/** A failure's HTTP status, headers and JSON body (v1.0's §11.6 body by default; v0.3 has its own). */
export interface RestFailure<Body extends object = { readonly error: { code: number; status: string; message: string; details: JsonValue[] } }> {
  readonly httpStatus: number;
  /** Response headers the failure brings (Retry-After, R-HTTP-12). */
  readonly headers?: Readonly<Record<string, string>>;
  readonly body: Body;
}

/** The HTTP+JSON form of a failure the face reported. */
export function restFailure(status: ErrorStatus): RestFailure {
  const httpStatus = httpStatusOf(status.code);
  const retryAfter = retryAfterSeconds(status);
  return {
    httpStatus,
    ...(retryAfter === undefined ? {} : { headers: { "Retry-After": String(retryAfter) } }),
    body: { error: { code: httpStatus, status: codeName(status.code), message: status.message, details: detailsJson(status) } },
  };
}

/** R-HTTP-12 (MAY): a limit's google.rpc.RetryInfo as Retry-After, in whole seconds (at least 1). */
function retryAfterSeconds(status: ErrorStatus): number | undefined {
  for (const detail of status.details) {
    const delay = anyUnpack(detail, RetryInfoSchema)?.retryDelay;
    if (delay !== undefined) return Math.max(1, Math.ceil(Number(delay.seconds) + delay.nanos / 1e9));
  }
  return undefined;
}

/** A failure of the HTTP layer itself (no route, wrong method, media type, size), with no details. */
export function transportFailure(httpStatus: number, status: string, message: string): RestFailure {
  return { httpStatus, body: { error: { code: httpStatus, status, message, details: [] } } };
}
