import { fromBinary } from "@bufbuild/protobuf";
import { StreamResponseSchema } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { streamResponseJson } from "../codec/stream-response-json.js";

/** The media type of a webhook body. */
export const WEBHOOK_CONTENT_TYPE = "application/a2a+json";

/**
 * A webhook's body (R-PUSHD-1, A-9): the ProtoJSON of the StreamResponse the outbox holds in
 * protobuf binary (camelCase names, timestamps in RFC 3339 UTC), as protobuf-es's toJsonString
 * writes it, by the static encoder (tested against toJsonString in
 * test/codec/stream-response-json.test.ts). Only for entries that come without a body: read back
 * from the outbox (after a restart, by a lane that fell behind, as after an outage), or an event
 * the encoder refused when the store made it. A store makes the body of a fresh entry from the
 * event object its write holds.
 */
export function webhookBody(event: Uint8Array): string {
  return streamResponseJson(fromBinary(StreamResponseSchema, event));
}
