import { toBinary } from "@bufbuild/protobuf";
import { StreamResponseSchema, type StreamResponse } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { encodeArtifactUpdatePayload, encodeMessagePayload, encodeStatusUpdatePayload, encodeTaskPayload } from "./task-encoder.js";

/**
 * The bytes of a StreamResponse, as `toBinary(StreamResponseSchema, response)` gives them, from
 * the static encoders of task-encoder.ts (a response with unknown fields of its own goes to
 * toBinary). Why: every stream event used to go through protobuf-es's reflective encoder.
 */
export function encodeStreamResponse(response: StreamResponse): Uint8Array {
  const { payload } = response;
  if (response.$unknown !== undefined) return toBinary(StreamResponseSchema, response);
  switch (payload.case) {
    case "task":
      return encodeTaskPayload(payload.value);
    case "message":
      return encodeMessagePayload(payload.value);
    case "statusUpdate":
      return encodeStatusUpdatePayload(payload.value);
    case "artifactUpdate":
      return encodeArtifactUpdatePayload(payload.value);
    default:
      return toBinary(StreamResponseSchema, response);
  }
}

const encoded = new WeakMap<StreamResponse, Buffer>();

/**
 * The response's bytes, encoded once per response object. Why: one event fans out to every
 * subscriber of its task as the same response object, and a stream's back-pressure path asks
 * for its size before grpc-js serializes it; grpc-js copies the bytes into its own frame, so
 * sharing them is safe. Nobody changes a response once it has been handed to a stream.
 */
export function streamResponseBytes(response: StreamResponse): Buffer {
  let bytes = encoded.get(response);
  if (bytes === undefined) {
    const raw = encodeStreamResponse(response);
    bytes = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
    encoded.set(response, bytes);
  }
  return bytes;
}
