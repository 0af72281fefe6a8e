import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import type { ListValue, Struct, Timestamp, Value } from "@bufbuild/protobuf/wkt";
import {
  RoleSchema,
  TaskStateSchema,
  type Artifact,
  type Message,
  type Part,
  type StreamResponse,
  type Task,
  type TaskArtifactUpdateEvent,
  type TaskStatus,
  type TaskStatusUpdateEvent,
} from "../../gen/es/lf/a2a/v1/a2a_pb.js";

/**
 * The ProtoJSON of a StreamResponse as `toJsonString(StreamResponseSchema, response)` gives it
 * (protobuf-es 2.13, default options), from the generated objects, without protobuf-es's
 * reflection. Why it exists: a webhook body was made by decoding the outbox's binary event
 * and walking it with the reflective toJson, the largest push cost per delivery left (issue 21,
 * bench/README.md "push"). The store now encodes the body from the event object its write holds.
 *
 * What protobuf-es does, and so do we: lowerCamelCase JSON names; fields in field-number order;
 * implicit presence (an empty string, false, enum 0 and an empty list are left out; a member of
 * a oneof is written whatever its value); enums by name, a number the proto does not know as
 * itself; bytes in standard base64 with padding; a Timestamp in RFC 3339 UTC with 0, 3, 6 or 9
 * fractional digits; Struct and Value as plain JSON. Unknown fields are not written. Where
 * toJson refuses (a NaN, Infinity or undefined inside a Struct or Value, a Value without kind, a
 * Timestamp out of range), this throws too. JSON text comes from JSON.stringify, as there. One
 * difference, on purpose: a lone surrogate in a string is written as U+FFFD (see `str`).
 *
 * It must mirror the same tree as task-encoder.ts (ENCODED_FIELDS there names every field;
 * test/codec/stream-response-json.test.ts compares the parsed output with toJson's).
 */
export function streamResponseJson(response: StreamResponse): string {
  const { payload } = response;
  switch (payload.case) {
    case "task":
      return `{"task":${taskJson(payload.value)}}`;
    case "message":
      return `{"message":${messageJson(payload.value)}}`;
    case "statusUpdate":
      return `{"statusUpdate":${statusUpdateJson(payload.value)}}`;
    case "artifactUpdate":
      return `{"artifactUpdate":${artifactUpdateJson(payload.value)}}`;
    default:
      return "{}";
  }
}

/**
 * A string as JSON. A lone surrogate becomes U+FFFD, as in the UTF-8 of the event the outbox
 * stores (toJson would write it as an escape): a body is the same whether it is made here or,
 * after a restart, from the stored event.
 */
function str(value: string): string {
  const text = value as string & WellFormed;
  return JSON.stringify(text.isWellFormed() ? value : text.toWellFormed());
}

/** ES2024's String methods (Node 20 has them; the project's TypeScript lib is older). */
interface WellFormed {
  isWellFormed(): boolean;
  toWellFormed(): string;
}

/** Enum names by number, from the descriptors (the proto's own names, as ProtoJSON writes them). */
function enumNames(schema: { readonly values: readonly { readonly number: number; readonly name: string }[] }): Map<number, string> {
  return new Map(schema.values.map((v) => [v.number, str(v.name)]));
}
const TASK_STATE = enumNames(TaskStateSchema);
const ROLE = enumNames(RoleSchema);

function enumJson(names: Map<number, string>, value: number): string {
  return names.get(value) ?? String(value);
}

/** `,"name":value` pairs (each with its leading comma) into an object. */
function object(fields: string): string {
  return fields === "" ? "{}" : `{${fields.slice(1)}}`;
}

export function taskJson(task: Task): string {
  let s = "";
  if (task.id !== "") s += `,"id":${str(task.id)}`;
  if (task.contextId !== "") s += `,"contextId":${str(task.contextId)}`;
  if (task.status !== undefined) s += `,"status":${statusJson(task.status)}`;
  if (task.artifacts.length > 0) s += `,"artifacts":${listJson(task.artifacts, artifactJson)}`;
  if (task.history.length > 0) s += `,"history":${listJson(task.history, messageJson)}`;
  if (task.metadata !== undefined) s += `,"metadata":${jsonObjectJson(task.metadata)}`;
  return object(s);
}

export function statusUpdateJson(event: TaskStatusUpdateEvent): string {
  let s = "";
  if (event.taskId !== "") s += `,"taskId":${str(event.taskId)}`;
  if (event.contextId !== "") s += `,"contextId":${str(event.contextId)}`;
  if (event.status !== undefined) s += `,"status":${statusJson(event.status)}`;
  if (event.metadata !== undefined) s += `,"metadata":${jsonObjectJson(event.metadata)}`;
  return object(s);
}

export function artifactUpdateJson(event: TaskArtifactUpdateEvent): string {
  let s = "";
  if (event.taskId !== "") s += `,"taskId":${str(event.taskId)}`;
  if (event.contextId !== "") s += `,"contextId":${str(event.contextId)}`;
  if (event.artifact !== undefined) s += `,"artifact":${artifactJson(event.artifact)}`;
  if (event.append) s += `,"append":true`;
  if (event.lastChunk) s += `,"lastChunk":true`;
  if (event.metadata !== undefined) s += `,"metadata":${jsonObjectJson(event.metadata)}`;
  return object(s);
}

function statusJson(status: TaskStatus): string {
  let s = "";
  if (status.state !== 0) s += `,"state":${enumJson(TASK_STATE, status.state)}`;
  if (status.message !== undefined) s += `,"message":${messageJson(status.message)}`;
  if (status.timestamp !== undefined) s += `,"timestamp":${timestampJson(status.timestamp)}`;
  return object(s);
}

function messageJson(message: Message): string {
  let s = "";
  if (message.messageId !== "") s += `,"messageId":${str(message.messageId)}`;
  if (message.contextId !== "") s += `,"contextId":${str(message.contextId)}`;
  if (message.taskId !== "") s += `,"taskId":${str(message.taskId)}`;
  if (message.role !== 0) s += `,"role":${enumJson(ROLE, message.role)}`;
  if (message.parts.length > 0) s += `,"parts":${listJson(message.parts, partJson)}`;
  if (message.metadata !== undefined) s += `,"metadata":${jsonObjectJson(message.metadata)}`;
  if (message.extensions.length > 0) s += `,"extensions":${listJson(message.extensions, str)}`;
  if (message.referenceTaskIds.length > 0) s += `,"referenceTaskIds":${listJson(message.referenceTaskIds, str)}`;
  return object(s);
}

function artifactJson(artifact: Artifact): string {
  let s = "";
  if (artifact.artifactId !== "") s += `,"artifactId":${str(artifact.artifactId)}`;
  if (artifact.name !== "") s += `,"name":${str(artifact.name)}`;
  if (artifact.description !== "") s += `,"description":${str(artifact.description)}`;
  if (artifact.parts.length > 0) s += `,"parts":${listJson(artifact.parts, partJson)}`;
  if (artifact.metadata !== undefined) s += `,"metadata":${jsonObjectJson(artifact.metadata)}`;
  if (artifact.extensions.length > 0) s += `,"extensions":${listJson(artifact.extensions, str)}`;
  return object(s);
}

function partJson(part: Part): string {
  let s = "";
  const { content } = part;
  switch (content.case) {
    case "text":
      s += `,"text":${str(content.value)}`;
      break;
    case "raw":
      s += `,"raw":"${Buffer.from(content.value.buffer, content.value.byteOffset, content.value.byteLength).toString("base64")}"`;
      break;
    case "url":
      s += `,"url":${str(content.value)}`;
      break;
    case "data":
      s += `,"data":${valueJson(content.value)}`;
      break;
  }
  if (part.metadata !== undefined) s += `,"metadata":${jsonObjectJson(part.metadata)}`;
  if (part.filename !== "") s += `,"filename":${str(part.filename)}`;
  if (part.mediaType !== "") s += `,"mediaType":${str(part.mediaType)}`;
  return object(s);
}

function listJson<T>(items: readonly T[], item: (value: T) => string): string {
  let s = item(items[0]!);
  for (let i = 1; i < items.length; i++) s += `,${item(items[i]!)}`;
  return `[${s}]`;
}

// ---- google.protobuf.Timestamp ----

const MIN_TIMESTAMP_MS = Date.parse("0001-01-01T00:00:00Z");
const MAX_TIMESTAMP_MS = Date.parse("9999-12-31T23:59:59Z");

function timestampJson(timestamp: Timestamp): string {
  const ms = Number(timestamp.seconds) * 1000;
  const { nanos } = timestamp;
  if (!(ms >= MIN_TIMESTAMP_MS && ms <= MAX_TIMESTAMP_MS)) throw new Error("cannot encode google.protobuf.Timestamp to JSON: out of range");
  if (nanos < 0 || nanos > 999_999_999) throw new Error("cannot encode google.protobuf.Timestamp to JSON: nanos out of range");
  let fraction = "Z";
  if (nanos > 0) {
    const digits = String(nanos + 1_000_000_000).slice(1);
    if (digits.endsWith("000000")) fraction = `.${digits.slice(0, 3)}Z`;
    else if (digits.endsWith("000")) fraction = `.${digits.slice(0, 6)}Z`;
    else fraction = `.${digits}Z`;
  }
  return `"${dateTime(Number(timestamp.seconds))}${fraction}"`;
}

/** The date of the last timestamp written ("YYYY-MM-DDT"): timestamps of one moment share it. */
let lastDay = Number.NaN;
let lastDate = "";

/**
 * `YYYY-MM-DDTHH:MM:SS` (UTC) of whole seconds since the epoch, years 0001 to 9999: what
 * `new Date(ms).toISOString()` starts with, in integer arithmetic (the days-to-civil algorithm
 * of H. Hinnant's "chrono-Compatible Low-Level Date Algorithms"). Why: toISOString took several
 * µs a call here, more than the rest of a status update's JSON.
 */
export function dateTime(seconds: number): string {
  const day = Math.floor(seconds / 86_400);
  let rest = seconds - day * 86_400;
  const hours = Math.floor(rest / 3600);
  rest -= hours * 3600;
  const minutes = Math.floor(rest / 60);
  const secs = rest - minutes * 60;
  if (day !== lastDay) {
    lastDate = civilDate(day);
    lastDay = day;
  }
  return `${lastDate}${two(hours)}:${two(minutes)}:${two(secs)}`;
}

function civilDate(daysSinceEpoch: number): string {
  const z = daysSinceEpoch + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor((dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365);
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const shiftedMonth = Math.floor((5 * dayOfYear + 2) / 153); // March = 0
  const day = dayOfYear - Math.floor((153 * shiftedMonth + 2) / 5) + 1;
  const month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  return `${String(year).padStart(4, "0")}-${two(month)}-${two(day)}T`;
}

function two(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

// ---- google.protobuf.Struct / Value: a metadata field holds a JsonObject, a Part's data a Value message ----

/** A Struct field as protobuf-es holds it (a JsonObject), as toJson writes it: the Struct it stands for. */
function jsonObjectJson(object: JsonObject): string {
  let s = "";
  for (const key in object) {
    if (!Object.hasOwn(object, key) || key === "__proto__") continue; // protobuf-es drops a "__proto__" key (it sets the prototype)
    s += `,${str(key)}:${jsonValueJson(object[key])}`;
  }
  return s === "" ? "{}" : `{${s.slice(1)}}`;
}

function jsonValueJson(value: JsonValue | undefined): string {
  switch (typeof value) {
    case "number":
      return numberJson(value);
    case "string":
      return str(value);
    case "boolean":
      return value ? "true" : "false";
    case "object":
      if (value === null) return "null";
      if (Array.isArray(value)) return value.length === 0 ? "[]" : listJson(value, jsonValueJson);
      return jsonObjectJson(value);
    default:
      throw new Error("google.protobuf.Value must have a value");
  }
}

function numberJson(value: number): string {
  if (!Number.isFinite(value)) throw new Error("google.protobuf.Value cannot be NaN or Infinity");
  return JSON.stringify(value);
}

function valueJson(value: Value): string {
  const { kind } = value;
  switch (kind.case) {
    case "nullValue":
      return "null";
    case "numberValue":
      return numberJson(kind.value);
    case "stringValue":
      return str(kind.value);
    case "boolValue":
      return kind.value ? "true" : "false";
    case "structValue":
      return structJson(kind.value);
    case "listValue":
      return listValueJson(kind.value);
    default:
      throw new Error("google.protobuf.Value must have a value");
  }
}

function structJson(struct: Struct): string {
  let s = "";
  for (const [key, value] of Object.entries(struct.fields)) if (key !== "__proto__") s += `,${str(key)}:${valueJson(value)}`;
  return s === "" ? "{}" : `{${s.slice(1)}}`;
}

function listValueJson(list: ListValue): string {
  return list.values.length === 0 ? "[]" : listJson(list.values, valueJson);
}
