import { getTextEncoding } from "@bufbuild/protobuf/wire";
import type { Artifact, Message, Part, Task, TaskArtifactUpdateEvent, TaskStatus, TaskStatusUpdateEvent } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import {
  LEN,
  beginLength,
  begin,
  boolField,
  byte,
  bytes,
  bytesFrom,
  endLength,
  enumField,
  finish,
  messageField,
  messageItem,
  position,
  raw,
  release,
  stringField,
  stringItem,
  tag,
  textEncoder,
  unknownFields,
  writtenLength,
} from "./proto-writer.js";
import { varintSize } from "./varint.js";
import { writeJsonStruct, writeTimestamp, writeValue } from "./well-known-writers.js";

export { ENCODED_EVENT_FIELDS, ENCODED_FIELDS } from "./encoded-fields.js";

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
  const length = writtenLength();
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
let chunkEventHead: Uint8Array = new Uint8Array(0);
let chunkArtifactHead: Uint8Array = new Uint8Array(0);

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
    ids.encodeUtf8 === textEncoder();
  tag(4, LEN);
  const event = beginLength();
  if (same) raw(chunkEventHead);
  else {
    const from = position();
    stringField(1, e.taskId);
    stringField(2, e.contextId);
    chunkEventHead = bytesFrom(from);
  }
  tag(3, LEN);
  const artifact = beginLength();
  if (same) raw(chunkArtifactHead);
  else {
    const from = position();
    stringField(1, a.artifactId);
    stringField(2, a.name);
    stringField(3, a.description);
    chunkArtifactHead = bytesFrom(from);
    chunkIds = { taskId: e.taskId, contextId: e.contextId, artifactId: a.artifactId, name: a.name, description: a.description, encodeUtf8: textEncoder() };
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
    byte(h >>> 8);
    byte(h & 0xff);
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
