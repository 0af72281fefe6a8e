import { protoInt64, type JsonObject, type JsonValue, type UnknownField } from "@bufbuild/protobuf";
import { getTextEncoding } from "@bufbuild/protobuf/wire";
import type { ListValue, Struct, Timestamp, Value } from "@bufbuild/protobuf/wkt";
import type { Artifact, Message, Part, Task, TaskArtifactUpdateEvent, TaskStatus, TaskStatusUpdateEvent } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { varintSize } from "./varint.js";

/**
 * encodeTask(task) gives exactly the bytes of `toBinary(TaskSchema, task)` (protobuf-es 2.13),
 * several times faster. Why it exists: packing a settled task in the memory store (and reusing
 * the bytes as the reply) spent most of a blocking SendMessage's CPU in protobuf-es's reflective
 * encoder, which walks descriptors and wraps every message. Here one short function per message
 * type writes its fields, as protoc-generated encoders do.
 *
 * It must mirror the Task tree of proto/lf/a2a/v1/a2a.proto (and google.protobuf Timestamp,
 * Struct, Value, ListValue). test/codec/task-encoder.test.ts proves byte equality with
 * toBinary and fails when the proto gains a field this file does not know (ENCODED_FIELDS).
 *
 * What protobuf-es does, and so do we: fields in field-number order; implicit presence (""
 * and enum 0 are skipped; members of a oneof and items of a list are always written);
 * message fields written when not undefined; Struct fields (JsonObject in protobuf-es) as map
 * entries (key = 1, value = 2) in Object.entries order; a message's `$unknown` fields after
 * its own; non-ASCII or long strings through the configured text encoding (getTextEncoding,
 * so a lone surrogate turns into whatever it makes of it: U+FFFD with TextEncoder).
 * Values outside the generated types (null for a string, a missing list) are not mirrored.
 *
 * The result is a fresh Uint8Array, but a small one may be a view into a shared chunk
 * (byteOffset not 0), as with Node's Buffer pool: read it through byteOffset/byteLength.
 */

/** Every field written below, as "number localName type": the test compares it with the descriptors. */
export const ENCODED_FIELDS: Readonly<Record<string, readonly string[]>> = {
  "lf.a2a.v1.Task": [
    "1 id string",
    "2 contextId string",
    "3 status lf.a2a.v1.TaskStatus",
    "4 artifacts repeated lf.a2a.v1.Artifact",
    "5 history repeated lf.a2a.v1.Message",
    "6 metadata google.protobuf.Struct",
  ],
  "lf.a2a.v1.TaskStatus": ["1 state enum lf.a2a.v1.TaskState", "2 message lf.a2a.v1.Message", "3 timestamp google.protobuf.Timestamp"],
  "lf.a2a.v1.Message": [
    "1 messageId string",
    "2 contextId string",
    "3 taskId string",
    "4 role enum lf.a2a.v1.Role",
    "5 parts repeated lf.a2a.v1.Part",
    "6 metadata google.protobuf.Struct",
    "7 extensions repeated string",
    "8 referenceTaskIds repeated string",
  ],
  "lf.a2a.v1.Part": [
    "1 text string oneof content",
    "2 raw bytes oneof content",
    "3 url string oneof content",
    "4 data google.protobuf.Value oneof content",
    "5 metadata google.protobuf.Struct",
    "6 filename string",
    "7 mediaType string",
  ],
  "lf.a2a.v1.Artifact": [
    "1 artifactId string",
    "2 name string",
    "3 description string",
    "4 parts repeated lf.a2a.v1.Part",
    "5 metadata google.protobuf.Struct",
    "6 extensions repeated string",
  ],
  "google.protobuf.Timestamp": ["1 seconds int64", "2 nanos int32"],
  "google.protobuf.Struct": ["1 fields map<string, google.protobuf.Value>"],
  "google.protobuf.Value": [
    "1 nullValue enum google.protobuf.NullValue oneof kind",
    "2 numberValue double oneof kind",
    "3 stringValue string oneof kind",
    "4 boolValue bool oneof kind",
    "5 structValue google.protobuf.Struct oneof kind",
    "6 listValue google.protobuf.ListValue oneof kind",
  ],
  "google.protobuf.ListValue": ["1 values repeated google.protobuf.Value"],
};

export function encodeTask(task: Task): Uint8Array {
  begin();
  writeTask(task);
  return finish();
}

/**
 * The length of encodeTask(task), without copying the bytes out. Why: the A-34 size estimate
 * measures every agent write (each streamed chunk) as a small task, and only needs the length.
 */
export function encodedTaskSize(task: Task): number {
  begin();
  writeTask(task);
  const length = pos - start;
  release(); // the bytes written stay beyond what the chunk hands out
  return length;
}

/**
 * What `artifact` adds to an encoded task: the length encodedTaskSize gives a task holding only
 * it, counted without writing anything for a plain artifact (text, url or raw parts, no metadata,
 * no unknown fields), the shape of a streamed chunk. Why: the A-34 size estimate measures every
 * chunk an agent streams. Anything else is measured by encoding it.
 */
export function encodedArtifactSize(artifact: Artifact): number {
  const body = plainArtifactBodySize(artifact);
  if (body >= 0) return 1 + varintSize(body) + body;
  SCRATCH_TASK.artifacts[0] = artifact;
  try {
    return encodedTaskSize(SCRATCH_TASK);
  } finally {
    SCRATCH_TASK.artifacts.length = 0;
  }
}

/** A task holding only what is being measured; nothing keeps it. */
const SCRATCH_TASK: Task = { $typeName: "lf.a2a.v1.Task", id: "", contextId: "", status: undefined, artifacts: [], history: [], metadata: undefined };

/** The encoded length of a plain artifact's fields (see encodedArtifactSize), or -1 when it is not plain. */
function plainArtifactBodySize(a: Artifact): number {
  if (a.metadata !== undefined || a.$unknown !== undefined) return -1;
  let size = artifactIdsSize(a);
  const parts = a.parts;
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    if (p.metadata !== undefined || p.$unknown !== undefined) return -1;
    const content = p.content;
    let part: number;
    if (content.case === "text" || content.case === "url") part = stringItemSize(content.value);
    else if (content.case === "raw") part = 1 + varintSize(content.value.byteLength) + content.value.byteLength;
    else if (content.case === undefined) part = 0;
    else return -1;
    part += stringFieldSize(p.filename) + stringFieldSize(p.mediaType);
    size += 1 + varintSize(part) + part;
  }
  const extensions = a.extensions;
  for (let i = 0; i < extensions.length; i++) size += stringItemSize(extensions[i]!);
  return size;
}

/** The ids measured last (a stream's chunks carry the same ones) and their encoded size. */
let measuredIds: { artifactId: string; name: string; description: string; encodeUtf8: unknown; size: number } | undefined;

/** The encoded size of an artifact's fields 1-3. */
function artifactIdsSize(a: Artifact): number {
  const ids = measuredIds;
  const encode = getTextEncoding().encodeUtf8;
  if (ids !== undefined && ids.artifactId === a.artifactId && ids.name === a.name && ids.description === a.description && ids.encodeUtf8 === encode)
    return ids.size;
  const size = stringFieldSize(a.artifactId) + stringFieldSize(a.name) + stringFieldSize(a.description);
  measuredIds = { artifactId: a.artifactId, name: a.name, description: a.description, encodeUtf8: encode, size };
  return size;
}

/** Field numbers here are below 16: the tag is one byte. */
function stringFieldSize(value: string): number {
  return value === "" ? 0 : stringItemSize(value);
}

function stringItemSize(value: string): number {
  const n = utf8Length(value);
  return 1 + varintSize(n) + n;
}

/** UTF-8 bytes of `value` as string() writes them: ASCII as is, anything else through the configured encoding. */
function utf8Length(value: string): number {
  const n = value.length;
  let seen = 0;
  for (let i = 0; i < n; i++) seen |= value.charCodeAt(i);
  return seen < 0x80 ? n : getTextEncoding().encodeUtf8(value).byteLength;
}

/**
 * A response whose oneof payload is `task` and nothing else: SendMessageResponse and
 * StreamResponse both carry the task as field 1, so these are the bytes of either.
 */
export function encodeTaskPayload(task: Task): Uint8Array {
  begin();
  messageItem(1, task, writeTask);
  return finish();
}

/**
 * A response whose oneof payload is `message` and nothing else: SendMessageResponse and
 * StreamResponse both carry the message as field 2 (an agent's message-only answer).
 */
export function encodeMessagePayload(message: Message): Uint8Array {
  begin();
  messageItem(2, message, writeMessage);
  return finish();
}

/** The fields of the two stream update events, as ENCODED_FIELDS lists those of the Task tree. */
export const ENCODED_EVENT_FIELDS: Readonly<Record<string, readonly string[]>> = {
  "lf.a2a.v1.TaskStatusUpdateEvent": ["1 taskId string", "2 contextId string", "3 status lf.a2a.v1.TaskStatus", "4 metadata google.protobuf.Struct"],
  "lf.a2a.v1.TaskArtifactUpdateEvent": [
    "1 taskId string",
    "2 contextId string",
    "3 artifact lf.a2a.v1.Artifact",
    "4 append bool",
    "5 lastChunk bool",
    "6 metadata google.protobuf.Struct",
  ],
};

/** A StreamResponse whose payload is a status update (field 3) and nothing else. */
export function encodeStatusUpdatePayload(event: TaskStatusUpdateEvent): Uint8Array {
  begin();
  messageItem(3, event, writeStatusUpdate);
  return finish();
}

/** A StreamResponse whose payload is an artifact update (field 4) and nothing else. */
export function encodeArtifactUpdatePayload(event: TaskArtifactUpdateEvent): Uint8Array {
  begin();
  if (isPlainChunk(event)) writePlainChunkUpdate(event);
  else messageItem(4, event, writeArtifactUpdate);
  return finish();
}

/**
 * A streamed chunk: an artifact update of text parts and nothing else (no metadata, extensions,
 * file names, media types or unknown fields), what an agent streaming tokens sends thousands of
 * times with the same ids. Why a path of its own: the general one wrote the task, context and
 * artifact ids character by character for every chunk, through a call per field; here their
 * bytes are kept from the last chunk and copied (see plainChunkHead).
 */
function isPlainChunk(e: TaskArtifactUpdateEvent): boolean {
  const a = e.artifact;
  if (a === undefined || e.metadata !== undefined || e.$unknown !== undefined) return false;
  if (a.metadata !== undefined || a.$unknown !== undefined || a.extensions.length > 0) return false;
  const parts = a.parts;
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    if (p.content.case !== "text" || p.metadata !== undefined || p.$unknown !== undefined || p.filename !== "" || p.mediaType !== "") return false;
  }
  return true;
}

/** The last plain chunk's ids, the text encoding they were written with, and their bytes (fields 1-2 of the event, 1-3 of the artifact). */
let chunkIds: { taskId: string; contextId: string; artifactId: string; name: string; description: string; encodeUtf8: unknown } | undefined;
let chunkEventHead = new Uint8Array(0);
let chunkArtifactHead = new Uint8Array(0);

function writePlainChunkUpdate(e: TaskArtifactUpdateEvent): void {
  const a = e.artifact!;
  const ids = chunkIds;
  const same =
    ids !== undefined &&
    ids.taskId === e.taskId &&
    ids.contextId === e.contextId &&
    ids.artifactId === a.artifactId &&
    ids.name === a.name &&
    ids.description === a.description &&
    ids.encodeUtf8 === encodeUtf8;
  tag(4, LEN);
  const event = beginLength();
  if (same) raw(chunkEventHead);
  else {
    const from = pos;
    stringField(1, e.taskId);
    stringField(2, e.contextId);
    chunkEventHead = buf.slice(from, pos);
  }
  tag(3, LEN);
  const artifact = beginLength();
  if (same) raw(chunkArtifactHead);
  else {
    const from = pos;
    stringField(1, a.artifactId);
    stringField(2, a.name);
    stringField(3, a.description);
    chunkArtifactHead = buf.slice(from, pos);
    chunkIds = { taskId: e.taskId, contextId: e.contextId, artifactId: a.artifactId, name: a.name, description: a.description, encodeUtf8 };
  }
  const parts = a.parts;
  for (let i = 0; i < parts.length; i++) {
    tag(4, LEN);
    const part = beginLength();
    stringItem(1, (parts[i]!.content as { value: string }).value);
    endLength(part);
  }
  endLength(artifact);
  boolField(4, e.append);
  boolField(5, e.lastChunk);
  endLength(event);
}

/** A Message on its own (the SQLite store keeps each history message as its own blob). */
export function encodeMessage(message: Message): Uint8Array {
  begin();
  writeMessage(message);
  return finish();
}

/**
 * The artifacts of items[from..to) as a run of framed items, for the SQLite store's event and
 * tail rows: for each, two header bytes (`header(item)`, high byte first), then the length + 1 of its item as a varint, then
 * the item: the `artifacts` item encodeTask writes for a task holding that artifact alone (tag,
 * length, Artifact). One pass, in place. Why: framing them after one encodeTask of all of them
 * (a view and a copy per item) was a fifth of what the store's framing of a streamed chunk cost.
 */
export function encodeFramedArtifacts<T extends { readonly artifact: Artifact }>(
  items: readonly T[],
  from: number,
  to: number,
  header: (item: T) => number,
): Uint8Array {
  begin();
  for (let i = from; i < to; i++) {
    const item = items[i]!;
    const h = header(item);
    ensure(2);
    buf[pos++] = h >>> 8;
    buf[pos++] = h & 0xff;
    const at = beginLength();
    messageItem(4, item.artifact, writeArtifact);
    endLength(at, 1);
  }
  return finish();
}

// ---- one function per message type, fields in number order ----

function writeTask(t: Task): void {
  stringField(1, t.id);
  stringField(2, t.contextId);
  messageField(3, t.status, writeTaskStatus);
  for (const artifact of t.artifacts) messageItem(4, artifact, writeArtifact);
  for (const message of t.history) messageItem(5, message, writeMessage);
  messageField(6, t.metadata, writeJsonStruct);
  unknownFields(t.$unknown);
}

function writeTaskStatus(s: TaskStatus): void {
  enumField(1, s.state);
  messageField(2, s.message, writeMessage);
  messageField(3, s.timestamp, writeTimestamp);
  unknownFields(s.$unknown);
}

function writeMessage(m: Message): void {
  stringField(1, m.messageId);
  stringField(2, m.contextId);
  stringField(3, m.taskId);
  enumField(4, m.role);
  for (const part of m.parts) messageItem(5, part, writePart);
  messageField(6, m.metadata, writeJsonStruct);
  for (const extension of m.extensions) stringItem(7, extension);
  for (const id of m.referenceTaskIds) stringItem(8, id);
  unknownFields(m.$unknown);
}

function writePart(p: Part): void {
  const content = p.content;
  switch (content.case) {
    case "text":
      stringItem(1, content.value);
      break;
    case "raw":
      tag(2, LEN);
      bytes(content.value);
      break;
    case "url":
      stringItem(3, content.value);
      break;
    case "data":
      messageItem(4, content.value, writeValue);
      break;
  }
  messageField(5, p.metadata, writeJsonStruct);
  stringField(6, p.filename);
  stringField(7, p.mediaType);
  unknownFields(p.$unknown);
}

function writeArtifact(a: Artifact): void {
  stringField(1, a.artifactId);
  stringField(2, a.name);
  stringField(3, a.description);
  for (const part of a.parts) messageItem(4, part, writePart);
  messageField(5, a.metadata, writeJsonStruct);
  for (const extension of a.extensions) stringItem(6, extension);
  unknownFields(a.$unknown);
}

function writeStatusUpdate(e: TaskStatusUpdateEvent): void {
  stringField(1, e.taskId);
  stringField(2, e.contextId);
  messageField(3, e.status, writeTaskStatus);
  messageField(4, e.metadata, writeJsonStruct);
  unknownFields(e.$unknown);
}

function writeArtifactUpdate(e: TaskArtifactUpdateEvent): void {
  stringField(1, e.taskId);
  stringField(2, e.contextId);
  messageField(3, e.artifact, writeArtifact);
  boolField(4, e.append);
  boolField(5, e.lastChunk);
  messageField(6, e.metadata, writeJsonStruct);
  unknownFields(e.$unknown);
}

function writeTimestamp(t: Timestamp): void {
  int64Field(1, t.seconds);
  if (t.nanos !== 0) {
    tag(2, VARINT);
    int32(t.nanos);
  }
  unknownFields(t.$unknown);
}

// ---- google.protobuf.Struct as protobuf-es represents it in a message field: a JsonObject ----

function writeJsonStruct(json: JsonObject): void {
  // protobuf-es: null reads as an empty Struct; any other non-object is not a Struct.
  if (json === null) return;
  if (typeof json !== "object" || Array.isArray(json)) throw new Error("cannot encode google.protobuf.Struct: not an object");
  for (const key of Object.keys(json)) {
    tag(1, LEN); // Struct.fields map entry
    const at = beginLength();
    stringItem(1, key);
    messageItem(2, json[key], writeJsonValue); // undefined too: protobuf-es writes an empty Value
    endLength(at);
  }
}

function writeJsonValue(json: JsonValue): void {
  switch (typeof json) {
    case "number":
      tag(2, I64);
      double(json);
      return;
    case "string":
      stringItem(3, json);
      return;
    case "boolean":
      tag(4, VARINT);
      ensure(1);
      buf[pos++] = json ? 1 : 0;
      return;
    case "object":
      if (json === null) {
        tag(1, VARINT);
        ensure(1);
        buf[pos++] = 0; // NULL_VALUE
      } else if (Array.isArray(json)) {
        messageItem(6, json, writeJsonList);
      } else {
        messageItem(5, json, writeJsonStruct);
      }
      return;
  }
  // anything else (undefined, bigint, ...) is a Value with no kind set, as in protobuf-es
}

function writeJsonList(list: JsonValue[]): void {
  for (const item of list) messageItem(1, item, writeJsonValue);
}

// ---- google.protobuf.Value as a message (Part.data) ----

function writeValue(v: Value): void {
  const kind = v.kind;
  switch (kind.case) {
    case "nullValue":
      tag(1, VARINT);
      int32(kind.value);
      break;
    case "numberValue":
      tag(2, I64);
      double(kind.value);
      break;
    case "stringValue":
      stringItem(3, kind.value);
      break;
    case "boolValue":
      tag(4, VARINT);
      ensure(1);
      buf[pos++] = kind.value ? 1 : 0;
      break;
    case "structValue":
      messageItem(5, kind.value, writeStruct);
      break;
    case "listValue":
      messageItem(6, kind.value, writeListValue);
      break;
  }
  unknownFields(v.$unknown);
}

function writeStruct(s: Struct): void {
  const fields = s.fields;
  for (const key of Object.keys(fields)) {
    tag(1, LEN);
    const at = beginLength();
    stringItem(1, key);
    // protobuf-es writes a missing map value as an empty message
    messageItem(2, fields[key] ?? EMPTY_VALUE, writeValue);
    endLength(at);
  }
  unknownFields(s.$unknown);
}

function writeListValue(l: ListValue): void {
  for (const value of l.values) messageItem(1, value ?? EMPTY_VALUE, writeValue);
  unknownFields(l.$unknown);
}

const EMPTY_VALUE = { kind: { case: undefined } } as Value;

// ---- field helpers ----

const VARINT = 0;
const I64 = 1;
const LEN = 2;

function tag(fieldNo: number, wireType: number): void {
  varint32((fieldNo << 3) | wireType);
}

/** A singular string with implicit presence: "" is not written. */
function stringField(fieldNo: number, value: string): void {
  if (value === "") return;
  tag(fieldNo, LEN);
  string(value);
}

/** A list item, a oneof member or a map key: always written. */
function stringItem(fieldNo: number, value: string): void {
  tag(fieldNo, LEN);
  string(value);
}

/** An open enum with implicit presence: 0 is not written, unknown numbers are. */
function enumField(fieldNo: number, value: number): void {
  if (value === 0) return;
  tag(fieldNo, VARINT);
  int32(value);
}

function int64Field(fieldNo: number, value: bigint): void {
  if (typeof value === "bigint") {
    if (value === 0n) return;
    if (value > 0n && value <= 0x7fffffffn) {
      tag(fieldNo, VARINT);
      varint32(Number(value));
      return;
    }
  } else if ((value as unknown as number) == 0) {
    return; // protobuf-es also accepts number and string ("0" is zero)
  }
  const { lo, hi } = protoInt64.enc(value);
  tag(fieldNo, VARINT);
  varint64(lo, hi);
}

/** Implicit presence: false is not written. */
function boolField(fieldNo: number, value: boolean): void {
  if (!value) return;
  tag(fieldNo, VARINT);
  ensure(1);
  buf[pos++] = 1;
}

/** A singular message field: written when not undefined. */
function messageField<T>(fieldNo: number, value: T | undefined, write: (value: T) => void): void {
  if (value !== undefined) messageItem(fieldNo, value, write);
}

/** A list item, a oneof member or a map value: always written. */
function messageItem<T>(fieldNo: number, value: T, write: (value: T) => void): void {
  tag(fieldNo, LEN);
  const at = beginLength();
  write(value);
  endLength(at);
}

function unknownFields(fields: UnknownField[] | undefined): void {
  if (fields == null) return;
  for (const { no, wireType, data } of fields) {
    varint32(((no << 3) | wireType) >>> 0);
    raw(data);
  }
}

// ---- the buffer: written in place in a shared chunk; a large encoding moves to a scratch array ----

const INITIAL_BUFFER = 16 * 1024;
const MAX_KEPT_BUFFER = 1024 * 1024;
/** Up to this many UTF-16 units a string is tried as ASCII in place; its length then fits one byte. */
const SHORT_STRING = 127;

/**
 * The result: an encoding is written straight into a shared 8 KiB chunk and handed out as a view
 * of it (as Node's Buffer pool does), since a fresh ArrayBuffer per call costs about as much as
 * encoding a typical task, and copying out of a scratch array cost a copy and two views per call.
 * One that outgrows what is left of the chunk moves on to the scratch array (at the same
 * offsets, so lengths reserved earlier stay valid): a large one is then copied out to a buffer of
 * its own, a small one into a fresh chunk. A view keeps its chunk alive while referenced;
 * encodings are short-lived here.
 */
const CHUNK = 8 * 1024;
const OWN_BUFFER_FROM = CHUNK / 4;
/** A chunk with less room than this left is replaced before an encoding starts in it. */
const MIN_ROOM = 512;
let chunk = new ArrayBuffer(CHUNK);
let chunkBytes = new Uint8Array(chunk);
let chunkView = new DataView(chunk);
let chunkUsed = 0;
let scratch = new Uint8Array(INITIAL_BUFFER);

/** Where the encoding in progress is written: the chunk or the scratch array. */
let buf: Uint8Array = chunkBytes;
let view = chunkView;
let pos = 0;
/** Where the encoding in progress starts in `buf`. */
let start = 0;
let encodeUtf8: (text: string) => Uint8Array = getTextEncoding().encodeUtf8;

function begin(): void {
  // Like BinaryWriter, take the text encoding configured at the time of the call.
  encodeUtf8 = getTextEncoding().encodeUtf8;
  if (CHUNK - chunkUsed < MIN_ROOM) newChunk();
  buf = chunkBytes;
  view = chunkView;
  start = pos = chunkUsed;
}

/** The encoding just written, taken out of the buffer. */
function finish(): Uint8Array {
  const length = pos - start;
  let out: Uint8Array;
  if (buf === chunkBytes) {
    out = new Uint8Array(chunk, start, length);
    chunkUsed = (pos + 7) & ~7; // keep views 8-byte aligned, as Node's pool does
  } else if (length >= OWN_BUFFER_FROM) {
    out = buf.slice(start, pos);
  } else {
    newChunk();
    out = new Uint8Array(chunk, 0, length);
    out.set(buf.subarray(start, pos));
    chunkUsed = (length + 7) & ~7;
  }
  release();
  return out;
}

/** Done with the buffer (what was written past the chunk's used part is simply left there). */
function release(): void {
  if (scratch.length > MAX_KEPT_BUFFER) scratch = new Uint8Array(INITIAL_BUFFER);
  buf = chunkBytes;
  view = chunkView;
}

function newChunk(): void {
  chunk = new ArrayBuffer(CHUNK);
  chunkBytes = new Uint8Array(chunk);
  chunkView = new DataView(chunk);
  chunkUsed = 0;
}

function ensure(n: number): void {
  if (pos + n > buf.length) grow(n);
}

function grow(n: number): void {
  const needed = pos + n;
  if (buf === chunkBytes) {
    // Out of the chunk: go on in the scratch array, at the same offsets.
    if (scratch.length < needed) scratch = new Uint8Array(Math.max(scratch.length * 2, needed));
    scratch.set(chunkBytes.subarray(start, pos), start);
  } else {
    const next = new Uint8Array(Math.max(buf.length * 2, needed));
    next.set(buf.subarray(start, pos), start);
    scratch = next;
  }
  buf = scratch;
  view = new DataView(scratch.buffer);
}

function varint32(value: number): void {
  ensure(5);
  while (value > 0x7f) {
    buf[pos++] = (value & 0x7f) | 0x80;
    value >>>= 7;
  }
  buf[pos++] = value;
}

/** As protobuf-es's int32(): negative numbers take 10 bytes (sign-extended to 64 bits). */
function int32(value: number): void {
  if (!Number.isInteger(value) || value > 0x7fffffff || value < -0x80000000) throw new Error("invalid int32: " + value);
  if (value >= 0) return varint32(value);
  ensure(10);
  for (let i = 0; i < 9; i++) {
    buf[pos++] = (value & 0x7f) | 0x80;
    value >>= 7;
  }
  buf[pos++] = 1;
}

/** A 64-bit varint from two's-complement halves (protoInt64.enc). */
function varint64(lo: number, hi: number): void {
  ensure(10);
  let low = lo >>> 0;
  let high = hi >>> 0;
  while (high !== 0 || low > 0x7f) {
    buf[pos++] = (low & 0x7f) | 0x80;
    low = ((low >>> 7) | (high << 25)) >>> 0;
    high >>>= 7;
  }
  buf[pos++] = low;
}

function double(value: number): void {
  ensure(8);
  view.setFloat64(pos, value, true);
  pos += 8;
}

function bytes(value: Uint8Array): void {
  varint32(value.byteLength);
  raw(value);
}

function raw(value: Uint8Array): void {
  ensure(value.byteLength);
  buf.set(value, pos);
  pos += value.byteLength;
}

function string(value: string): void {
  const n = value.length;
  if (n <= SHORT_STRING) {
    // ASCII is the same in every UTF-8 encoder: copy it in place, else fall back.
    ensure(n + 1);
    const b = buf;
    const start = pos + 1;
    let seen = 0;
    for (let i = 0; i < n; i++) {
      const c = value.charCodeAt(i);
      seen |= c;
      b[start + i] = c;
    }
    if (seen < 0x80) {
      b[pos] = n;
      pos = start + n;
      return;
    }
  }
  bytes(encodeUtf8(value));
}

/** Reserves one byte for a length that endLength() fills in, moving the body if it needs more. */
function beginLength(): number {
  ensure(1);
  return pos++;
}

/** `plus`: added to the length written (a frame whose length counts one more than its body). */
function endLength(at: number, plus = 0): void {
  const length = pos - at - 1 + plus;
  if (length <= 0x7f) {
    buf[at] = length;
    return;
  }
  const extra = length < 1 << 14 ? 1 : length < 1 << 21 ? 2 : length < 1 << 28 ? 3 : 4;
  ensure(extra);
  buf.copyWithin(at + 1 + extra, at + 1, pos);
  pos += extra;
  let value = length;
  for (let p = at; value > 0x7f; p++) {
    buf[p] = (value & 0x7f) | 0x80;
    value >>>= 7;
  }
  buf[at + extra] = value;
}
