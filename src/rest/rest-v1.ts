import { toJson } from "@bufbuild/protobuf";
import { A2AService, StreamResponseSchema, type StreamResponse } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { responseJson } from "../http/proto-json.js";
import { cursorOf } from "../http/stream-cursor.js";
import { HttpRuleRouter } from "./http-rule-router.js";
import { createRestBinding, type RestBindingOptions, type RestCodec } from "./rest-binding.js";
import { restFailure, transportFailure } from "./rest-errors.js";
import { decodeRestRequest } from "./rest-request.js";

/*
 * The A2A v1.0 HTTP+JSON binding (§11): lf.a2a.v1.A2AService's own google.api.http routes,
 * ProtoJSON of the v1.0 messages in `application/a2a+json`, SSE events of bare StreamResponses.
 */

/** §11.1: the binding's media type; requests may also send application/json. */
export const A2A_JSON = "application/a2a+json";

/** BQ-7: SubscribeToTask is GET by the proto and also POST, as §5.3/§11.3.2 tell clients. */
export const REST_V1_ROUTER = new HttpRuleRouter(A2AService, { alsoAccept: { SubscribeToTask: ["POST"] } });

export const REST_V1_CODEC: RestCodec = {
  contentType: A2A_JSON,
  acceptsContentType(contentType) {
    if (contentType === undefined) return true;
    const type = contentType.split(";", 1)[0]!.trim().toLowerCase();
    return type === A2A_JSON || type === "application/json";
  },
  decodeRequest: decodeRestRequest,
  responseJson,
  streamEvent(response) {
    const event = response as StreamResponse;
    return { id: cursorOf(event), data: JSON.stringify(toJson(StreamResponseSchema, event)) };
  },
  failure: restFailure,
  transportFailure(httpStatus, message) {
    return transportFailure(httpStatus, TRANSPORT_STATUS[httpStatus] ?? "INTERNAL", message);
  },
};

/** error.status of the HTTP layer's own refusals (google.rpc code names, §11.6). */
const TRANSPORT_STATUS: Readonly<Record<number, string>> = {
  404: "NOT_FOUND",
  405: "UNIMPLEMENTED",
  413: "INVALID_ARGUMENT",
  415: "INVALID_ARGUMENT",
  500: "INTERNAL",
};

export type RestV1Options = Omit<RestBindingOptions, "router" | "codec" | "serviceName">;

/** The v1.0 HTTP+JSON binding's handler for every path under `basePath`. */
export function createRestV1Binding(options: RestV1Options) {
  return createRestBinding({ ...options, router: REST_V1_ROUTER, codec: REST_V1_CODEC, serviceName: A2AService.typeName });
}
