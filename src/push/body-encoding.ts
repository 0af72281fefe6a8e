import { fromBinary, toJsonString } from "@bufbuild/protobuf";
import { StreamResponseSchema } from "../../gen/es/lf/a2a/v1/a2a_pb.js";

/** The media type of a webhook body. */
export const WEBHOOK_CONTENT_TYPE = "application/a2a+json";

/**
 * A webhook's body (R-PUSHD-1, A-9): the ProtoJSON of the StreamResponse the outbox holds in
 * protobuf binary (camelCase names, timestamps in RFC 3339 UTC). Only for entries that come
 * without a body (read back from the outbox after a restart or by a lane that fell behind, or
 * an event the static encoder refused): a store makes the body of a fresh entry with
 * src/codec/stream-response-json.ts, from the event object its write holds.
 */
export function webhookBody(event: Uint8Array): string {
  return toJsonString(StreamResponseSchema, fromBinary(StreamResponseSchema, event));
}
