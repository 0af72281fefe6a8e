import { getTextEncoding } from "@bufbuild/protobuf/wire";
import type { Message, Part, SendMessageConfiguration, SendMessageRequest } from "../../gen/es/lf/a2a/v1/a2a_pb.js";

/**
 * decodeSendMessageRequest(bytes) gives what `fromBinary(SendMessageRequestSchema, bytes)`
 * (protobuf-es 2.13) gives, for the shape real clients send, or undefined for anything else,
 * so the caller falls back to fromBinary. Why it exists: fromBinary is reflective (descriptor
 * walks, a wrapper object per message) and was ~5% of a blocking SendMessage's CPU; here one
 * short function per message reads its fields, as protoc-generated decoders do.
 *
 * Declining is always safe, a different result is not, so it declines on: any field that is
 * not a plain scalar/string/enum/bytes/repeated string or one of the four message fields below
 * (Struct metadata, Part.data, the push notification config), any field number it does not
 * know (protobuf-es would keep it in $unknown), a wire type other than the field's own
 * (protobuf-es reads such input by the field's type regardless; we leave that to it), tags
 * longer than one byte, a non-canonical bool, a singular message field that occurs twice
 * (protobuf-es merges the two), anything running past its message's end or the input's, and
 * invalid UTF-8 (protobuf-es validates proto3 strings and throws).
 *
 * What it mirrors from protobuf-es: objects shaped like create() makes them for proto3 (scalars
 * and lists always present at their zero values, message fields and `optional` scalars absent
 * until read, a oneof as `{ case: undefined }` or `{ case, value }`, `$typeName` set); the last
 * occurrence of a scalar wins, also across the members of a oneof; open enums keep any int32
 * value; int32 varints read as BinaryReader's varint32read does (a negative value is ten
 * bytes, bits above 32 dropped); strings through the text encoding configured at call time
 * (getTextEncoding().decodeUtf8, strict), as BinaryReader takes it, except short ASCII strings of
 * a Buffer input, which are read with latin1 (the same string any correct UTF-8 decoder gives).
 *
 * One deliberate difference: Part.raw is a copy in a plain Uint8Array, where fromBinary returns
 * a subarray of the input (a Buffer view into grpc-js's frame when the input is a Buffer).
 * Copying keeps a stored task from pinning the whole request frame, and the message from
 * aliasing memory the caller may reuse; the bytes are equal.
 */

/** Every field of the four messages, as "number localName type decoded|declined": the test compares it with the descriptors. */
export const KNOWN_FIELDS: Readonly<Record<string, readonly string[]>> = {
  "lf.a2a.v1.SendMessageRequest": [
    "1 tenant string decoded",
    "2 message lf.a2a.v1.Message decoded",
    "3 configuration lf.a2a.v1.SendMessageConfiguration decoded",
    "4 metadata google.protobuf.Struct declined",
  ],
  "lf.a2a.v1.SendMessageConfiguration": [
    "1 acceptedOutputModes repeated string decoded",
    "2 taskPushNotificationConfig lf.a2a.v1.TaskPushNotificationConfig declined",
    "3 historyLength optional int32 decoded",
    "4 returnImmediately bool decoded",
  ],
  "lf.a2a.v1.Message": [
    "1 messageId string decoded",
    "2 contextId string decoded",
    "3 taskId string decoded",
    "4 role enum lf.a2a.v1.Role decoded",
    "5 parts repeated lf.a2a.v1.Part decoded",
    "6 metadata google.protobuf.Struct declined",
    "7 extensions repeated string decoded",
    "8 referenceTaskIds repeated string decoded",
  ],
  "lf.a2a.v1.Part": [
    "1 text string oneof content decoded",
    "2 raw bytes oneof content decoded",
    "3 url string oneof content decoded",
    "4 data google.protobuf.Value oneof content declined",
    "5 metadata google.protobuf.Struct declined",
    "6 filename string decoded",
    "7 mediaType string decoded",
  ],
};

export function decodeSendMessageRequest(bytes: Uint8Array): SendMessageRequest | undefined {
  buf = bytes;
  frame = Buffer.isBuffer(bytes) ? bytes : undefined;
  pos = 0;
  decodeUtf8 = getTextEncoding().decodeUtf8;
  try {
    return readRequest(bytes.length);
  } catch {
    // Our own DECLINE, or the strict UTF-8 decoder rejecting a string: fromBinary decides.
    return undefined;
  } finally {
    buf = EMPTY; // do not keep the caller's bytes alive
  }
}

// ---- one function per message; `end` is where the message's bytes stop ----
// A case is a whole tag byte, (field number << 3) | wire type (0 VARINT, 2 LEN), commented as
// "number, wire type". Tags of more than one byte, other wire types and other numbers: default.

function readRequest(end: number): SendMessageRequest {
  const request: SendMessageRequest = { $typeName: "lf.a2a.v1.SendMessageRequest", tenant: "" };
  while (pos < end) {
    switch (buf[pos++]) {
      case 0x0a: // 1, LEN
        request.tenant = string(end);
        break;
      case 0x12: // 2, LEN
        if (request.message !== undefined) decline(); // protobuf-es would merge the two
        request.message = readMessage(nestedEnd(end));
        break;
      case 0x1a: // 3, LEN
        if (request.configuration !== undefined) decline();
        request.configuration = readConfiguration(nestedEnd(end));
        break;
      default:
        decline();
    }
  }
  return request;
}

function readConfiguration(end: number): SendMessageConfiguration {
  const configuration: SendMessageConfiguration = {
    $typeName: "lf.a2a.v1.SendMessageConfiguration",
    acceptedOutputModes: [],
    returnImmediately: false,
  };
  while (pos < end) {
    switch (buf[pos++]) {
      case 0x0a: // 1, LEN
        configuration.acceptedOutputModes.push(string(end));
        break;
      case 0x18: // 3, VARINT
        configuration.historyLength = varint32(end) | 0;
        break;
      case 0x20: // 4, VARINT
        configuration.returnImmediately = bool(end);
        break;
      default:
        decline();
    }
  }
  return configuration;
}

function readMessage(end: number): Message {
  const message: Message = {
    $typeName: "lf.a2a.v1.Message",
    messageId: "",
    contextId: "",
    taskId: "",
    role: 0,
    parts: [],
    extensions: [],
    referenceTaskIds: [],
  };
  while (pos < end) {
    switch (buf[pos++]) {
      case 0x0a: // 1, LEN
        message.messageId = string(end);
        break;
      case 0x12: // 2, LEN
        message.contextId = string(end);
        break;
      case 0x1a: // 3, LEN
        message.taskId = string(end);
        break;
      case 0x20: // 4, VARINT
        message.role = varint32(end) | 0; // open enum: any int32 is kept
        break;
      case 0x2a: // 5, LEN
        message.parts.push(readPart(nestedEnd(end)));
        break;
      case 0x3a: // 7, LEN
        message.extensions.push(string(end));
        break;
      case 0x42: // 8, LEN
        message.referenceTaskIds.push(string(end));
        break;
      default:
        decline();
    }
  }
  return message;
}

function readPart(end: number): Part {
  const part: Part = { $typeName: "lf.a2a.v1.Part", content: { case: undefined }, filename: "", mediaType: "" };
  while (pos < end) {
    switch (buf[pos++]) {
      case 0x0a: // 1, LEN
        part.content = { case: "text", value: string(end) };
        break;
      case 0x12: // 2, LEN
        part.content = { case: "raw", value: copyBytes(end) };
        break;
      case 0x1a: // 3, LEN
        part.content = { case: "url", value: string(end) };
        break;
      case 0x32: // 6, LEN
        part.filename = string(end);
        break;
      case 0x3a: // 7, LEN
        part.mediaType = string(end);
        break;
      default:
        decline();
    }
  }
  return part;
}

// ---- the reader: the input, a position, every read bounded by the enclosing message's end ----

const EMPTY = new Uint8Array(0);
let buf: Uint8Array = EMPTY;
/** `buf` when it is a Buffer (grpc-js hands Buffers), for reading short ASCII strings from it directly. */
let frame: Buffer | undefined;
let pos = 0;
/** Strings up to this long are checked for ASCII and read with latin1 (one call, no view, no argument list). */
const SHORT_STRING = 64;
let decodeUtf8: (bytes: Uint8Array, strict?: boolean) => string;

/** Thrown (never escapes) to give up; not an Error, so no stack is captured. */
const DECLINE = { declined: true };

function decline(): never {
  throw DECLINE;
}

/**
 * A varint read as BinaryReader's varint32read does: up to 10 bytes, the fifth contributing
 * its low 4 bits and any further ones ignored, the result as uint32.
 */
function varint32(end: number): number {
  let result = 0;
  for (let shift = 0; shift < 28; shift += 7) {
    if (pos >= end) decline();
    const b = buf[pos++]!;
    result |= (b & 0x7f) << shift;
    if (b < 0x80) return result;
  }
  if (pos >= end) decline();
  let b = buf[pos++]!;
  result |= (b & 0x0f) << 28;
  for (let read = 5; b >= 0x80 && read < 10; read++) {
    if (pos >= end) decline();
    b = buf[pos++]!;
  }
  if (b >= 0x80) decline(); // fromBinary throws "invalid varint"
  return result >>> 0;
}

/** Only the canonical one-byte bools; anything longer is left to fromBinary. */
function bool(end: number): boolean {
  if (pos >= end) decline();
  const b = buf[pos++]!;
  if (b > 1) decline();
  return b === 1;
}

/** Reads a length and returns where that many bytes end, if they fit in the enclosing message. */
function nestedEnd(end: number): number {
  const length = varint32(end);
  if (length > end - pos) decline();
  return pos + length;
}

function string(end: number): string {
  const stop = nestedEnd(end);
  const start = pos;
  pos = stop;
  // ASCII bytes decode to the same string in every UTF-8 decoder, and latin1 reads them as they are.
  if (frame !== undefined && stop - start <= SHORT_STRING && isAscii(start, stop)) return frame.toString("latin1", start, stop);
  return decodeUtf8(buf.subarray(start, stop), true); // throws on invalid UTF-8, as in fromBinary
}

function isAscii(start: number, stop: number): boolean {
  for (let i = start; i < stop; i++) if (buf[i]! >= 0x80) return false;
  return true;
}

function copyBytes(end: number): Uint8Array {
  const stop = nestedEnd(end);
  const out = new Uint8Array(stop - pos);
  out.set(buf.subarray(pos, stop));
  pos = stop;
  return out;
}
