import { toBinary } from "@bufbuild/protobuf";
import { StreamResponseSchema, type Part, type StreamResponse } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
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

/** The response encoded last, and whether it was asked for again (then it is shared: see below). */
let last: StreamResponse | undefined;
let lastBytes: Buffer | undefined;
let lastShared = false;
const shared = new WeakMap<StreamResponse, Buffer>();
/** Calls left during which `shared` is looked in: reset whenever a response goes into it. */
let sharing = 0;
/** How long after the last shared response the others are still looked for in `shared`. */
const SHARING_CALLS = 4096;

/**
 * The response's bytes, encoded once per response object. Why: one event fans out to every
 * subscriber of its task as the same response object; grpc-js copies the bytes into its own
 * frame, so sharing them is safe. Nobody changes a response once it has been handed to a stream.
 * Why the one-entry cache in front of the WeakMap: the subscribers of an event are written one
 * after the other, so the last response is nearly always the one asked for; a response that was
 * asked for once only (a task with one stream) never costs a WeakMap entry, which cost more than
 * encoding a small update. And while no response has been shared for a while (one stream per
 * task), the WeakMap is not even looked in: a miss cost about as much as encoding a chunk. A
 * response missed that way is encoded again, to the same bytes.
 */
export function streamResponseBytes(response: StreamResponse): Buffer {
  if (response === last) {
    lastShared = true;
    return lastBytes!;
  }
  let bytes = sharing > 0 ? (sharing--, shared.get(response)) : undefined;
  if (bytes === undefined) {
    const raw = encodeStreamResponse(response);
    bytes = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  }
  if (lastShared) {
    shared.set(last!, lastBytes!); // it may be asked for again, after others
    sharing = SHARING_CALLS;
  }
  last = response;
  lastBytes = bytes;
  lastShared = false;
  return bytes;
}

/**
 * About the encoded size of a response, without encoding it: parts' strings count their UTF-8
 * bytes, ids their length, plus a few bytes per field. Used to weigh
 * a slow stream's backlog (A-32), where encoding every queued chunk cost more than the rest
 * of the per-event path.
 */
export function approximateSize(response: StreamResponse): number {
  const { payload } = response;
  if (payload.case !== "artifactUpdate") return streamResponseBytes(response).byteLength;
  const { artifact } = payload.value;
  if (artifact === undefined || artifact.metadata !== undefined || payload.value.metadata !== undefined) return streamResponseBytes(response).byteLength;
  const parts = approximatePartsSize(artifact.parts);
  if (parts === undefined) return streamResponseBytes(response).byteLength;
  return (
    16 + payload.value.taskId.length + payload.value.contextId.length + artifact.artifactId.length + artifact.name.length + artifact.description.length + parts
  );
}

/**
 * About the encoded size of `parts` inside an artifact (as approximateSize counts them), or
 * undefined for a part that is not text, url or raw bytes. What an append adds to the update it
 * is merged into: its parts, not a second envelope.
 */
export function approximatePartsSize(parts: readonly Part[]): number | undefined {
  let size = 0;
  for (const part of parts) {
    const content = part.content;
    // UTF-8 bytes, not UTF-16 length: merged responses are kept under the message size limit by this count.
    if (content.case === "text" || content.case === "url") size += 8 + Buffer.byteLength(content.value);
    else if (content.case === "raw") size += 8 + content.value.byteLength;
    else return undefined;
    size += part.filename.length + part.mediaType.length + (part.metadata === undefined ? 0 : 64);
  }
  return size;
}
