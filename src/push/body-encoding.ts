import { fromBinary, toJsonString } from "@bufbuild/protobuf";
import { StreamResponseSchema } from "../../gen/es/lf/a2a/v1/a2a_pb.js";

/** The media type of a webhook body. */
export const WEBHOOK_CONTENT_TYPE = "application/a2a+json";

/**
 * A webhook's body (R-PUSHD-1, A-9): the ProtoJSON of the StreamResponse an outbox entry holds in
 * protobuf binary, as protobuf-es's toJsonString writes it (camelCase names, enums by name,
 * timestamps in RFC 3339 UTC). Made from the stored bytes, never from the event object a write
 * held: a body is then the same whether the store makes it with the entry or delivery makes it
 * after a restart (a lone surrogate, for one, is U+FFFD in the stored UTF-8). Throws where
 * toJsonString refuses (a NaN in metadata, a timestamp out of range).
 */
export function webhookBody(event: Uint8Array): string {
  return toJsonString(StreamResponseSchema, fromBinary(StreamResponseSchema, event));
}
